// Opening a long run (issue 37): msmon-tui reads every rank's newest steps first and fills each rank's history in
// behind, saying how much is in; once the history is read, its store is what one `msmon ingest` of the folder makes:
// the same values, each once, and the same incidents, the newest steps judged after their history.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/support/cluster_services.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

std::string status_line(const std::string& screen) {
    const auto lines = lines_of(screen);
    return lines.empty() ? "" : lines.back();
}

// One line per stored file: "<id> <path>", by id (the order msmon-tui took them in).
std::vector<std::pair<long, std::string>> files_by_id(const std::string& db) {
    const auto r = run(
        {find_installed("sqlite3"), "-readonly", db, "SELECT id, path FROM file WHERE kind <> 'info_log' ORDER BY id"});
    std::vector<std::pair<long, std::string>> out;
    for (const auto& line : lines_of(r.out)) {
        const auto bar = line.find('|');
        if (bar != std::string::npos) out.push_back({std::stol(line.substr(0, bar)), line.substr(bar + 1)});
    }
    return out;
}

// (rule, rank, step, kind, name) of each incident, or of each anomaly.
std::multiset<std::string> findings(const std::string& db, bool incidents,
                                    const std::map<std::string, std::string>& env) {
    std::vector<std::string> argv = {program("msmon"), "anomalies", "--db", db, "--format", "json"};
    if (incidents) argv.push_back("--incidents");
    const auto r = run(argv, env);
    std::multiset<std::string> out;
    for (const auto& a : nlohmann::json::parse(r.out))
        out.insert(a.at("rule").get<std::string>() + " rank " + std::to_string(a.at("rank").get<int>()) + " step " +
                   std::to_string(a.at("step").get<long>()) + " " + a.at("kind").get<std::string>() + " " +
                   a.at("name").get<std::string>());
    return out;
}

class TuiBacklog : public ::testing::Test {
protected:
    TempDir tmp;
};

// 8 ranks (4 data-parallel x 2 tensor-parallel), 100 steps (two blocks of 64), a NaN at step 70 on rank 3 and rank
// 5's copy of a weight altered at step 30 (a cross-rank finding, judged in the history).
TEST_F(TuiBacklog, a_backlog_is_read_newest_first_and_its_store_ends_as_one_ingest_of_it) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    if (find_installed("sqlite3").empty())
        MSMON_SKIP_UNLESS_REQUIRED("sqlite3 is not installed (scripts/setup-deps.sh)");
    const auto env = tmux_env(tmp);
    const auto sim = run({program("msmon"), "simulate", tmp / "job", "--ranks", "8", "--tp", "2", "--steps", "100",
                          "--params", "8", "--xy", "--faults", "nan@70:r3,sdc@30:r5"},
                         env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    {
        TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "tui.db"), 160, 45, env);
        // Caught up: the history read and the newest steps judged; the status line no longer speaks of history.
        const std::string screen = t.settled(TmuxSession::Wait::timers);
        EXPECT_EQ(status_line(screen).find("history:"), std::string::npos) << screen;
        EXPECT_NE(status_line(screen).find("8 ranks | steps 0-99"), std::string::npos) << screen;
        // The NaN leads the incidents, at its step and rank, as a one-shot ingest has it.
        t.send_keys("3", true);
        const std::string anomalies = t.wait_for("NonFinite", milliseconds(10000));
        ASSERT_FALSE(anomalies.empty()) << t.capture();
        const auto rows = lines_of(anomalies);
        const auto first = std::find_if(rows.begin(), rows.end(),
                                        [](const std::string& l) { return l.find("NonFinite") != std::string::npos; });
        ASSERT_NE(first, rows.end());
        EXPECT_NE(first->find(" 70 "), std::string::npos) << anomalies;
        t.send_keys("q", true);
        ASSERT_TRUE(t.wait_exit());
    }
    const auto one = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "one.db"}, env);
    ASSERT_EQ(one.exit_code, 0) << one.err;

    // 1. Every rank's newest files were taken before any older CSV: the window first, across all ranks.
    const auto files = files_by_id(tmp / "tui.db");
    ASSERT_FALSE(files.empty());
    long last_newest = -1, first_older = -1;
    std::set<std::string> newest_folders;
    for (const auto& [id, path] : files) {
        if (path.find(".csv") == std::string::npos || path.find("stack_info") != std::string::npos) continue;
        if (path.find("_99-99.csv") != std::string::npos) {
            last_newest = std::max(last_newest, id);
            newest_folders.insert(path.substr(0, path.rfind('/')));
        } else if (first_older < 0 || id < first_older) {
            first_older = id;
        }
    }
    EXPECT_EQ(newest_folders.size(), 8u);
    EXPECT_LT(last_newest, first_older) << "a history CSV was taken before a rank's newest";

    // 2. The same incidents, and the same anomalies, as one ingest of the folder.
    EXPECT_EQ(findings(tmp / "tui.db", true, env), findings(tmp / "one.db", true, env));
    EXPECT_EQ(findings(tmp / "tui.db", false, env), findings(tmp / "one.db", false, env));
    EXPECT_FALSE(findings(tmp / "tui.db", true, env).empty());

    // 3. Every value once, none missing: msmon query prints the same, and the stores hold as many rows.
    const auto q_tui = run({program("msmon"), "query", "--db", tmp / "tui.db"}, env);
    const auto q_one = run({program("msmon"), "query", "--db", tmp / "one.db"}, env);
    ASSERT_EQ(q_tui.exit_code, 0) << q_tui.err;
    EXPECT_GT(lines_of(q_one.out).size(), 100000u);
    EXPECT_TRUE(q_tui.out == q_one.out) << lines_of(q_tui.out).size() << " values against "
                                        << lines_of(q_one.out).size();
    const std::string rows_sql = "SELECT sum(n) FROM sample_chunk";
    EXPECT_EQ(run({find_installed("sqlite3"), "-readonly", tmp / "tui.db", rows_sql}).out,
              run({find_installed("sqlite3"), "-readonly", tmp / "one.db", rows_sql}).out);

    // 4. The history's batches were cut between parts (a rank's files of one block): each tensor's steps of a block
    // went to the store as one chunk, never rewritten by a merge (no chunk id was deleted), and each older block is
    // one chunk (the newest holds the window's and the history's).
    const auto sql = [&](const std::string& q) {
        return run({find_installed("sqlite3"), "-readonly", tmp / "tui.db", q}).out;
    };
    EXPECT_EQ(sql("SELECT max(id) = count(*) FROM sample_chunk"), "1\n");
    EXPECT_EQ(sql("SELECT count(*) FROM (SELECT tensor_id, block FROM sample_chunk WHERE block < 1 GROUP BY 1, 2 "
                  "HAVING count(*) > 1)"),
              "0\n");
}

// A backlog of 16 ranks x 400 steps: every rank is listed at its newest step while its history is still being read,
// within 2 s of starting (10 s under a sanitizer).
TEST_F(TuiBacklog, every_rank_is_listed_at_its_newest_step_before_its_history_is_read) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    const auto env = tmux_env(tmp);
    const auto sim =
        run({program("msmon"), "simulate", tmp / "job", "--ranks", "16", "--steps", "400", "--params", "8"}, env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const auto started = std::chrono::steady_clock::now();
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "tui.db"), 160, 45, env);
    const auto every_rank_listed = [](const std::string& screen) {
        const auto lines = lines_of(screen);
        if (lines.size() < 20 || status_line(screen).find("16 ranks") == std::string::npos ||
            status_line(screen).find("-399") == std::string::npos)
            return false;
        std::set<int> listed;  // rows "  R  <sparkline>  latest  min  max": a value in the latest column
        for (std::size_t i = 3; i + 2 < lines.size(); ++i) {
            const auto& l = lines[i];
            const auto first = l.find_first_not_of(" !");
            if (first == std::string::npos || !std::isdigit(static_cast<unsigned char>(l[first]))) continue;
            if (l.find('.') == std::string::npos) continue;
            listed.insert(std::stoi(l.substr(first)));
        }
        return listed.size() == 16;
    };
    const std::string screen = t.screen_when(every_rank_listed, milliseconds(60000));
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    ASSERT_TRUE(every_rank_listed(screen)) << screen;
    EXPECT_NE(status_line(screen).find("history:"), std::string::npos)
        << "every rank was listed only once the history was read:\n"
        << screen;
    // The steps not read yet are drawn as such in the ranks' sparklines, not as a gap in the data.
    EXPECT_NE(screen.find("\u2591"), std::string::npos) << screen;
#ifdef MSMON_SANITIZED
    EXPECT_LE(seconds, 10.0) << screen;
#else
    EXPECT_LE(seconds, 2.0) << screen;
#endif
    // And then the whole history: the status line says so no more.
    const std::string done = t.settled(TmuxSession::Wait::timers);
    EXPECT_EQ(status_line(done).find("history:"), std::string::npos) << done;
    EXPECT_NE(status_line(done).find("steps 0-399"), std::string::npos) << done;
}

// The Chart tab, opened before the first frame, draws the steps not read yet as unread (░) across its plot while the
// history is read, not as a gap, and no line of a rank bridges them; then the history fills them in.
TEST_F(TuiBacklog, the_chart_shades_the_steps_not_read_yet_until_the_history_is_in) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    const auto env = tmux_env(tmp);
    // A history of 153,568 files (~5 s to read in a Release build): 16 x 400 x 8 (38,368 files) was read in about a
    // second once batches were cut between parts, and ended before the chart was drawn in one run here.
    const auto sim =
        run({program("msmon"), "simulate", tmp / "job", "--ranks", "16", "--steps", "1600", "--params", "2"}, env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "tui.db"), 160, 45, env);
    t.send_keys("2");
    const auto shades = [](const std::string& screen) {
        std::size_t n = 0;
        for (auto at = screen.find("\u2591"); at != std::string::npos; at = screen.find("\u2591", at + 1)) ++n;
        return n;
    };
    // The chart of every rank's newest step, its range reaching back over the history not read yet.
    const auto charted_while_reading = [&](const std::string& screen) {
        const auto lines = lines_of(screen);
        return lines.size() > 2 && lines[1].find("steps 0-1599") != std::string::npos &&
               status_line(screen).find("history:") != std::string::npos &&
               status_line(screen).find("16 ranks") != std::string::npos;
    };
    const std::string reading = t.screen_when(charted_while_reading, milliseconds(60000));
    ASSERT_TRUE(charted_while_reading(reading)) << reading;
    // Whole columns of the plot (30 rows or so at 45 lines) are shaded: at least 10 columns' worth.
    EXPECT_GE(shades(reading), 300u) << reading;
    const std::string done = t.settled(TmuxSession::Wait::timers);
    EXPECT_EQ(status_line(done).find("history:"), std::string::npos) << done;
    EXPECT_NE(lines_of(done)[1].find("steps 0-1599"), std::string::npos) << done;
    EXPECT_EQ(shades(done), 0u) << done;
}

// Live lines are never delayed behind the backlog: a step every rank writes while the history is read is stored and
// shown at once (the status line's last step), before the history is in.
TEST_F(TuiBacklog, a_step_written_while_the_history_is_read_is_shown_before_the_history_is_in) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    const auto env = tmux_env(tmp);
    // A history of many files (153,568: ~5 s to read in a Release build, more under the sanitizers) against a live
    // step's path of one chunk and one read of the views (under a second): 16 x 400 x 8 (38,368 files, ~1.5 s) let
    // the history end first in one run of five.
    constexpr int kSteps = 1600;
    const std::string last = std::to_string(kSteps - 1), next = std::to_string(kSteps);
    const auto sim = run({program("msmon"), "simulate", tmp / "job", "--ranks", "16", "--steps", std::to_string(kSteps),
                          "--params", "2"},
                         env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "tui.db"), 160, 45, env);
    const auto reading = [&](const std::string& screen) {
        const std::string line = status_line(screen);
        return line.find("history:") != std::string::npos && line.find("-" + last + " |") != std::string::npos;
    };
    ASSERT_TRUE(reading(t.screen_when(reading, milliseconds(60000)))) << t.capture();
    // The next step of every rank: its grad_reduced CSV, the last step's rows with the step changed (the third cell).
    for (const auto& entry : std::filesystem::directory_iterator(tmp / "job/monitor_output")) {
        const std::string folder = entry.path().string();
        std::string out;
        for (const auto& line : lines_of(read_file(folder + "/grad_reduced_" + last + "-" + last + ".csv"))) {
            const auto a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
            out += line.substr(b + 1, c - b - 1) == last ? line.substr(0, b + 1) + next + line.substr(c) : line;
            out += "\n";
        }
        write_file(folder + "/grad_reduced_" + next + "-" + next + ".csv", out);
    }
    const std::string live =
        t.screen_when([&](const std::string& s) { return status_line(s).find("-" + next) != std::string::npos; },
                      milliseconds(60000));
    ASSERT_NE(status_line(live).find("-" + next), std::string::npos) << live;
    EXPECT_NE(status_line(live).find("history:"), std::string::npos) << "the live step waited for the history:\n"
                                                                     << live;
    const std::string done = t.settled(TmuxSession::Wait::timers);
    EXPECT_NE(status_line(done).find("steps 0-" + next), std::string::npos) << done;
    EXPECT_EQ(status_line(done).find("history:"), std::string::npos) << done;
}

}  // namespace
}  // namespace msmon::test
