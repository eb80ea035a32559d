// Tag → series rules: MindFormers' TrainingStateMonitor and loss scalars; msprobe's in-process writer and csv2tb
// (the CSV name column and the tag → kind mapping).
#include "core/parse/tensorboard_tags.hpp"

#include <array>
#include <utility>

#include "core/parse/mindformers_log.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

// MindFormers' MFLossMonitor tags and the kinds they are stored as: the same kind as a step-line field where the
// log has the metric (in the log's own unit: iteration-time is int(ms), as per_step_time; throughput is
// samples/s/p, as the progress line); batch-size and B-samples-per-day, which no step line carries, under names
// of their own.
constexpr std::array<std::pair<std::string_view, std::string_view>, 12> kSameAsLog{{
    {"loss", "loss"},
    {"learning-rate", "lr"},
    {"grad-norm", "global_norm"},
    {"loss-scale", "loss_scale"},
    {"iteration-time", "per_step_time"},
    {"throughput", "samples_per_second"},
    {"model-flops-throughput-per-npu", "throughput"},
    {"lm-loss", "lm_loss"},
    {"mtp-loss", "mtp_loss"},
    {"load-balancing-loss", "load_balancing_loss"},
    {"batch-size", "global_batch_size"},
    {"B-samples-per-day", "billion_samples_per_day"},
}};

constexpr std::array<std::string_view, 6> kTsmPrefixes{
    "local_norm/", "adam_m_norm/", "adam_v_norm/", "max_attention_logit/", "weight_stable_rank/", "weight_eigenvalue/"};
constexpr std::array<std::string_view, 3> kTsmNames{"device_local_norm", "weight_norm", "throughput_linearity"};

constexpr std::array<std::string_view, 9> kMsprobeOps{"norm", "min",  "max",   "zeros", "nans",
                                                      "id",   "mean", "shape", "dtype"};

bool starts_with(std::string_view s, std::string_view p) {
    return s.substr(0, p.size()) == p;
}
bool ends_with(std::string_view s, std::string_view p) {
    return s.size() >= p.size() && s.substr(s.size() - p.size()) == p;
}

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

std::optional<TbSeries> mindformers(std::string_view tag) {
    for (const auto& [t, kind] : kSameAsLog)
        if (tag == t) return TbSeries{std::string(kind), "", "", "value", {}, {}};
    bool tsm = false;
    for (auto p : kTsmPrefixes) tsm = tsm || (starts_with(tag, p) && tag.size() > p.size());
    for (auto n : kTsmNames) tsm = tsm || tag == n;
    if (!tsm && ends_with(tag, "_loss") && (starts_with(tag, "local_") || starts_with(tag, "device_accum_local_")))
        tsm = true;
    if (!tsm) return std::nullopt;
    auto [kind, name] = tsm_series(std::string(tag));
    return TbSeries{kind, "", name, "value", {}, {}};
}

// "<name>[:<micro>]" → name, micro.
void split_micro(std::string_view text, std::string_view micro_prefix, TbSeries& s) {
    const auto colon = text.rfind(':');
    if (colon != std::string_view::npos) {
        const std::string_view m = text.substr(colon + 1);
        if (starts_with(m, micro_prefix) && all_digits(m.substr(micro_prefix.size()))) {
            s.micro_step = parse_int(m.substr(micro_prefix.size()));
            text = text.substr(0, colon);
        }
    }
    s.name = std::string(text);
}

// msprobe's writer task suffix → the CSV prefix msmon uses as kind.
std::string msprobe_kind(std::string_view task) {
    if (task == "pre_grad" || task == "acc_grad") return "grad_unreduced";
    if (task == "post_grad") return "grad_reduced";
    if (task == "mg_direction") return "other";
    return std::string(task);
}

// "<vpp>:<name>[:<micro>]/rank<r>/<task>_<op>" (the in-process writer).
std::optional<TbSeries> msprobe_writer(std::string_view tag) {
    const auto last = tag.rfind('/');
    if (last == std::string_view::npos) return std::nullopt;
    const auto mid = tag.rfind('/', last - 1);
    if (mid == std::string_view::npos || last == 0) return std::nullopt;
    const std::string_view head = tag.substr(0, mid), rank = tag.substr(mid + 1, last - mid - 1),
                           task_op = tag.substr(last + 1);
    std::string_view digits = starts_with(rank, "rank") ? rank.substr(4) : rank;
    if (!all_digits(digits)) return std::nullopt;
    const auto colon = head.find(':');
    if (colon == std::string_view::npos || colon == 0) return std::nullopt;
    const auto us = task_op.rfind('_');
    if (us == std::string_view::npos || us == 0) return std::nullopt;
    const std::string_view op = task_op.substr(us + 1);
    bool known = false;
    for (auto o : kMsprobeOps) known = known || o == op;
    if (!known) return std::nullopt;
    TbSeries s;
    s.kind = msprobe_kind(task_op.substr(0, us));
    s.vpp_stage = std::string(head.substr(0, colon));
    s.op = std::string(op);
    s.rank = static_cast<int>(parse_int(digits).value_or(0));
    split_micro(head.substr(colon + 1), "", s);
    return s;
}

// csv2tb: "vp<vpp>:<name>[:micro<m>]/<op>" in rank<r>/<data_type>/.
std::optional<TbSeries> msprobe_csv2tb(std::string_view tag, std::string_view folder) {
    if (!starts_with(tag, "vp") || folder.empty()) return std::nullopt;
    const auto colon = tag.find(':');
    const auto slash = tag.rfind('/');
    if (colon == std::string_view::npos || slash == std::string_view::npos || slash < colon) return std::nullopt;
    if (!all_digits(tag.substr(2, colon - 2))) return std::nullopt;
    const std::string_view op = tag.substr(slash + 1);
    bool known = false;
    for (auto o : kMsprobeOps) known = known || o == op;
    if (!known) return std::nullopt;
    TbSeries s;
    s.kind = std::string(folder);
    s.vpp_stage = std::string(tag.substr(2, colon - 2));
    s.op = std::string(op);
    split_micro(tag.substr(colon + 1, slash - colon - 1), "micro", s);
    return s;
}

// expert_load/<layer> written through add_scalars (the expert is in the folder name), or
// expert_load/<layer>/<expert> written directly.
std::optional<TbSeries> expert_load(std::string_view tag, std::string_view folder) {
    constexpr std::string_view prefix = "expert_load/";
    if (!starts_with(tag, prefix) || tag.size() == prefix.size()) return std::nullopt;
    std::string folder_prefix(tag);
    for (char& c : folder_prefix)
        if (c == '/') c = '_';
    folder_prefix += '_';
    std::string layer(tag.substr(prefix.size())), expert;
    if (starts_with(folder, folder_prefix) && folder.size() > folder_prefix.size()) {
        expert = std::string(folder.substr(folder_prefix.size()));
    } else if (const auto slash = layer.rfind('/');
               slash != std::string::npos && expert_index(layer.substr(slash + 1))) {
        expert = layer.substr(slash + 1);
        layer.resize(slash);
    } else {
        return TbSeries{"expert_load", "", layer, "value", {}, {}};
    }
    return TbSeries{"expert_load", "", layer + "/" + expert, "value", {}, {}};
}

}  // namespace

std::optional<int> expert_index(std::string_view expert) {
    for (std::string_view p : {"ep_", "expert_", "ep", "expert"})
        if (starts_with(expert, p) && all_digits(expert.substr(p.size()))) {
            expert = expert.substr(p.size());
            break;
        }
    if (!all_digits(expert) || expert.size() > 9) return std::nullopt;
    return static_cast<int>(*parse_int(expert));
}

TbSeries map_tensorboard_tag(std::string_view tag, std::string_view folder) {
    for (std::string_view twin : {" vs samples", "-vs-samples"}) {
        if (!ends_with(tag, twin) || tag.size() == twin.size()) continue;
        // Same metric, x-axis global_step × global_batch_size: a series of its own so the axes never mix.
        TbSeries s = map_tensorboard_tag(tag.substr(0, tag.size() - twin.size()), folder);
        if (s.kind == "tensorboard") s.name = std::string(tag);
        else s.kind += "_vs_samples";
        return s;
    }
    if (auto s = expert_load(tag, folder)) return *s;
    if (auto s = mindformers(tag)) return *s;
    if (auto s = msprobe_writer(tag)) return *s;
    if (auto s = msprobe_csv2tb(tag, folder)) return *s;
    return TbSeries{"tensorboard", "", std::string(tag), "value", {}, {}};
}

}  // namespace msmon
