// Run config from the Reader's text summaries, one group per distinct config: a job of 1,024 ranks that all
// wrote the same config shows it once, and a rank that differs stands out as its own group.
#include "tui/models/run_config_model.hpp"

#include <map>

namespace msmon::tui {

RunConfigModel collect_run_config(Reader& reader) {
    RunConfigModel m;
    const std::vector<RunConfigEntry> all = reader.run_config(std::nullopt);
    m.entries = all.size();
    // Entries come by rank: one rank's (across its runs) is one contiguous slice.
    std::map<std::vector<std::pair<std::string, std::string>>, std::size_t> group_of;
    for (std::size_t i = 0; i < all.size();) {
        std::size_t end = i;
        while (end < all.size() && all[end].rank == all[i].rank) ++end;
        std::vector<std::pair<std::string, std::string>> key;
        for (std::size_t k = i; k < end; ++k) key.emplace_back(all[k].key, all[k].text);
        auto [it, fresh] = group_of.try_emplace(std::move(key), m.groups.size());
        if (fresh) {
            RunConfigGroup g;
            g.source = all[i].source;
            g.entries.assign(all.begin() + static_cast<std::ptrdiff_t>(i),
                             all.begin() + static_cast<std::ptrdiff_t>(end));
            m.groups.push_back(std::move(g));
        }
        m.groups[it->second].ranks.push_back(all[i].rank);
        i = end;
    }
    return m;
}

}  // namespace msmon::tui
