// Every rank's tensors of a kind and the pipeline stages they make (tui/models/pipeline_stages), read again only
// when the kind or the ranks change, or once `max_age` has passed (a restart's new tensors): the Overview groups
// ranks by stage, the Layers tab puts the stages' tensors into one model. update() is the only I/O; views call it
// from collect().
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "store/reader.hpp"
#include "tui/models/pipeline_stages.hpp"

namespace msmon::tui {

class RankLayout {
public:
    void update(Reader& reader, const std::string& kind, const std::vector<int>& ranks,
                std::chrono::seconds max_age = std::chrono::seconds(10));
    const std::map<int, std::vector<ModuleRow>>& rows() const { return rows_; }
    const std::vector<PipelineStage>& stages() const { return stages_; }
    // The rank's stage (an index into stages()), 0 for a rank not seen.
    std::size_t stage_of(int rank) const;

private:
    std::string kind_;
    std::vector<int> ranks_;
    std::chrono::steady_clock::time_point read_at_{};
    std::map<int, std::vector<ModuleRow>> rows_;
    std::vector<PipelineStage> stages_;
    std::map<int, std::size_t> stage_of_;
};

}  // namespace msmon::tui
