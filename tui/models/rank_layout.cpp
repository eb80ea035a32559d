#include "tui/models/rank_layout.hpp"

namespace msmon::tui {

void RankLayout::update(Reader& reader, const std::string& kind, const std::vector<int>& ranks,
                        std::chrono::seconds max_age) {
    const auto now = std::chrono::steady_clock::now();
    if (kind == kind_ && ranks == ranks_ && now - read_at_ < max_age) return;
    kind_ = kind;
    ranks_ = ranks;
    read_at_ = now;
    rows_.clear();
    for (int r : ranks) rows_[r] = reader.module_rows(kind, r);
    stages_ = pipeline_stages(rows_);
    stage_of_.clear();
    for (std::size_t s = 0; s < stages_.size(); ++s)
        for (int r : stages_[s].ranks) stage_of_[r] = s;
}

std::size_t RankLayout::stage_of(int rank) const {
    const auto it = stage_of_.find(rank);
    return it == stage_of_.end() ? 0 : it->second;
}

}  // namespace msmon::tui
