// A real msprobe run written again, live: see run_replay.hpp.
#include "tests/support/run_replay.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <set>
#include <thread>
#include <tuple>

#include "core/sim/monitor_config_follower.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {

namespace fs = std::filesystem;

// A replay may go on where an earlier one stopped: what msprobe writes once is there already.
constexpr auto kOnceMore = fs::copy_options::recursive | fs::copy_options::overwrite_existing;

namespace {

// Digits only, as a number; nullopt otherwise. (No std::regex here: a replay runs beside a test's own regexes, and
// libstdc++'s shared ctype cache reads as a data race to ThreadSanitizer.)
std::optional<std::int64_t> number_of(const std::string& text) {
    if (text.empty() || text.size() > 18 || text.find_first_not_of("0123456789") != std::string::npos)
        return std::nullopt;
    return std::stoll(text);
}

// <Mon><DD>_<HH>-<MM>-<SS>-rank<N>-<hex>: N.
std::optional<std::int64_t> rank_of_folder(const std::string& name) {
    const auto at = name.rfind("-rank");
    const auto dash = at == std::string::npos ? std::string::npos : name.find('-', at + 5);
    if (dash == std::string::npos || dash + 1 >= name.size() ||
        name.find_first_not_of("0123456789abcdef", dash + 1) != std::string::npos)
        return std::nullopt;
    return number_of(name.substr(at + 5, dash - at - 5));
}

// <kind>_<step>-<step>.csv (one step a file): the step.
std::optional<std::int64_t> step_of_file(const std::string& name) {
    const auto under = name.rfind('_');
    if (under == std::string::npos || name.size() < 4 || name.compare(name.size() - 4, 4, ".csv") != 0)
        return std::nullopt;
    const std::string range = name.substr(under + 1, name.size() - 4 - under - 1);
    const auto dash = range.find('-');
    if (dash == std::string::npos) return std::nullopt;
    const auto first = number_of(range.substr(0, dash)), last = number_of(range.substr(dash + 1));
    return first && last && *first == *last ? first : std::nullopt;
}

}  // namespace

void replay_msprobe_run(const std::string& source_output, const std::string& target_output, const ReplayPlan& plan) {
    // Each rank folder's per-step CSVs by step; everything else is copied at once.
    struct RankFolder {
        int rank = -1;
        fs::path target;
        std::map<std::int64_t, std::vector<fs::path>> steps;
    };
    std::vector<RankFolder> folders;
    for (const auto& entry : fs::directory_iterator(source_output)) {
        const std::string name = entry.path().filename().string();
        const auto rank = entry.is_directory() ? rank_of_folder(name) : std::nullopt;
        if (!rank) {
            fs::copy(entry.path(), fs::path(target_output) / name, kOnceMore);
            continue;
        }
        RankFolder f{static_cast<int>(*rank), fs::path(target_output) / name, {}};
        fs::create_directories(f.target);
        for (const auto& file : fs::directory_iterator(entry.path())) {
            const std::string file_name = file.path().filename().string();
            if (const auto step = step_of_file(file_name)) f.steps[*step].push_back(file.path());
            else fs::copy(file.path(), f.target / file_name, kOnceMore);
        }
        folders.push_back(std::move(f));
    }
    // In time order: each rank's step ends (msprobe decides whether it collects the step and polls its config) at
    // the step's time, the same for every rank as training's collectives keep them; a lagging rank's files land
    // later (its disk is slow).
    using Clock = std::chrono::steady_clock;
    struct Event {
        Clock::time_point when;
        bool write;  // else the step's end
        std::size_t folder;
        std::int64_t step;
    };
    std::vector<Event> events;
    auto t = Clock::now() + std::chrono::milliseconds(100);
    for (const Collection& c : plan.collections) {
        t += c.pause_before;
        for (std::int64_t step = c.first; step <= c.last; ++step) {
            for (std::size_t i = 0; i < folders.size(); ++i) {
                const auto stop = plan.last_step.find(folders[i].rank);
                if (stop != plan.last_step.end() && step > stop->second) continue;
                if (!folders[i].steps.count(step)) continue;
                const auto lag = plan.lag.find(folders[i].rank);
                events.push_back({t, false, i, step});
                events.push_back(
                    {t + (lag == plan.lag.end() ? std::chrono::milliseconds(0) : lag->second), true, i, step});
            }
            t += plan.step_time;
        }
    }
    std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
        return std::tie(a.when, a.write) < std::tie(b.when, b.write);
    });
    std::vector<std::optional<MonitorConfigFollower>> followers(folders.size());
    if (!plan.dynamic_config.empty())
        for (auto& f : followers) f.emplace(plan.dynamic_config, true);
    std::set<std::pair<std::size_t, std::int64_t>> collected;
    for (const Event& e : events) {
        std::this_thread::sleep_until(e.when);
        if (!e.write) {
            if (!followers[e.folder] || followers[e.folder]->collects(e.step)) collected.insert({e.folder, e.step});
            if (followers[e.folder]) followers[e.folder]->finish_step(e.step);
            continue;
        }
        if (!collected.count({e.folder, e.step})) continue;
        for (const fs::path& file : folders[e.folder].steps.at(e.step))
            if (!plan.keep || plan.keep(file.filename().string(), e.step))
                write_file((folders[e.folder].target / file.filename()).string(), read_file(file.string()));
    }
}

}  // namespace msmon::test
