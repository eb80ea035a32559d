// TensorBoard scalar tags as msmon series: MindFormers' tags onto the kinds its log lines give (one `loss`
// series for a job that writes both), `<tag> vs samples` twins kept apart with their samples x-axis, msprobe's
// tags onto (rank, kind, vpp_stage, name, op), expert_load onto (layer, expert), anything else kind
// `tensorboard`.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace msmon {

struct TbSeries {
    std::string kind;
    std::string vpp_stage;
    std::string name;
    std::string op = "value";
    std::optional<int> rank;  // msprobe's tags name their rank; otherwise the folder's
    std::optional<std::int64_t> micro_step;
};

// `folder`: the name of the folder holding the event file. tensorboardX's add_scalars writes each key to a
// sub-writer folder "<main tag with / as _>_<key>" (expert_load/<layer> → expert_load_<layer>_ep_<i>/), and
// msprobe's csv2tb names the data type by folder (rank<r>/<data_type>/).
TbSeries map_tensorboard_tag(std::string_view tag, std::string_view folder);

// "ep_3", "expert_3", "3" → 3; the expert index of an expert_load series name "<layer>/ep_<i>".
std::optional<int> expert_index(std::string_view expert);

}  // namespace msmon
