// A ClickHouse that stops answering (SIGSTOP: its port still takes connections, nothing is answered) held every
// program talking to it until the request timed out (30 s): an agent's last ship, the judge's next query, the
// TUI's read with q unseen. A signal (or q) ends each within 2 s. What is in flight gets 0.8 s, then every
// wait of the HTTP client gives up; the agent and the judge exit 0 (how a service stops), the judge's running
// --on-incident command is ended with them.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "tests/support/cluster_services.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;
const std::string kJob = "job-stall";

// Whether one of `pids` holds an open TCP connection to local port `port` (its socket's inode in /proc/net/tcp{,6}):
// with ClickHouse stopped, a request in flight that cannot end.
bool connected_to(const std::vector<long>& pids, int port) {
    std::set<std::string> inodes;
    for (const long pid : pids) {
        const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
        DIR* d = ::opendir(dir.c_str());
        if (!d) continue;
        while (dirent* e = ::readdir(d)) {
            char target[64] = {};
            const ssize_t n = ::readlink((dir + "/" + e->d_name).c_str(), target, sizeof target - 1);
            const std::string link(target, n > 0 ? static_cast<std::size_t>(n) : 0);
            if (link.rfind("socket:[", 0) == 0) inodes.insert(link.substr(8, link.size() - 9));
        }
        ::closedir(d);
    }
    char hex_port[8];
    std::snprintf(hex_port, sizeof hex_port, "%04X", port);
    for (const char* table : {"/proc/net/tcp", "/proc/net/tcp6"}) {
        std::ifstream in(table);
        std::string line;
        std::getline(in, line);  // the header
        while (std::getline(in, line)) {
            std::istringstream fields(line);
            std::string slot, local, remote, state, queues, timer, retransmits, uid, timeout, inode;
            fields >> slot >> local >> remote >> state >> queues >> timer >> retransmits >> uid >> timeout >> inode;
            // ESTABLISHED, or FIN_WAIT2: the request sent and the client's side shut (HTTP/1.1, Connection: close)
            if ((state == "01" || state == "05") && remote.size() > 5 && remote.substr(remote.size() - 4) == hex_port &&
                inodes.count(inode))
                return true;
        }
    }
    return false;
}

TEST(ClickHouseStall, an_agent_the_judge_and_the_tui_end_within_2_s_of_being_told_while_clickhouse_answers_nothing) {
    if (find_installed("clickhouse-server").empty())
        MSMON_SKIP_UNLESS_REQUIRED("clickhouse-server is not installed (scripts/setup-cluster-deps.sh installs it)");
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    ClickHouseTestServer ch(tmp / "clickhouse");
    ASSERT_TRUE(ch.ready()) << "clickhouse-server did not start: " << ch.log();
    const std::string url = ch.url("msmon_stall");
    const auto env = isolated_env(tmp);
    // The agent first, on a job folder still empty; then the judge, which announces incidents new since it
    // started; then the job (a nan at step 5), so that the judge's command starts and hangs.
    std::filesystem::create_directories(tmp / "node0/job");
    Background agent(agent_args(tmp / "node0", url, kJob, 0, 300), tmp.path(), env);
    auto answers = [&](const std::string& sql) {
        try {
            return ch.scalar(sql) == "1";
        } catch (const std::exception&) {
            return false;  // the agent has not made the database yet
        }
    };
    ASSERT_GE(wait_until(
                  [&] {
                      return answers(
                          "SELECT count() FROM system.tables WHERE database = 'msmon_stall' AND "
                          "name = 'points'");
                  },
                  milliseconds(60000))
                  .count(),
              0)
        << agent.err();
    const std::string mark = tmp / "hook.pid";
    std::filesystem::create_directories(tmp / "prom");
    Background judge({program("msmon"), "judge", "--store", url, "--job", kJob, "--prom-textfile", tmp / "prom",
                      "--on-incident", "echo $$ > '" + mark + "'; exec sleep 300"},
                     tmp.path(), env);
    // Its first gauges are written once it has read the incidents there are (none): what comes next is new.
    ASSERT_GE(
        wait_until([&] { return std::filesystem::exists(tmp / "prom/msmon-judge.prom"); }, milliseconds(30000)).count(),
        0)
        << judge.err();
    // 300 steps, one every 100 ms: the job still runs, and the agent still ships, when ClickHouse stops answering.
    Background sim({program("msmon"), "simulate", tmp / "node0/job", "--ranks", "2", "--params", "4", "--steps", "300",
                    "--step-ms", "100", "--faults", "nan@5:r0"},
                   tmp.path(), env);
    auto hook_started = [&] {
        std::error_code ec;
        const auto size = std::filesystem::file_size(mark, ec);
        return !ec && size > 1;
    };
    ASSERT_GE(wait_until(hook_started, milliseconds(60000)).count(), 0) << judge.err();
    // The gauges' folder taken away under the judge (renamed: removing it races the judge's next temp file in it):
    // said once on its stderr (it was said only in msmon.log).
    std::filesystem::rename(tmp / "prom", tmp / "prom.gone");
    auto said = [&](const std::string& text) { return judge.err().find(text) != std::string::npos; };
    EXPECT_GE(wait_until([&] { return said("(the judge's gauges are not written)"); }, milliseconds(20000)).count(), 0)
        << judge.err();
    TmuxSession tui(program("msmon-tui") + " --store " + url + " --job " + kJob, 160, 45, tmux_env(tmp));
    ASSERT_FALSE(tui.wait_for("nan", milliseconds(30000)).empty()) << tui.capture();

    // ClickHouse stops answering; each program's next request hangs on it.
    ch.signal(SIGSTOP);
    struct Thaw {
        ClickHouseTestServer& ch;
        ~Thaw() { ch.signal(SIGCONT); }
    } thaw{ch};
    const int port = ch.http_port();
    EXPECT_GE(wait_until([&] { return connected_to({agent.pid()}, port); }, milliseconds(20000)).count(), 0);
    EXPECT_GE(wait_until([&] { return connected_to({judge.pid()}, port); }, milliseconds(20000)).count(), 0);
    EXPECT_GE(wait_until([&] { return connected_to(tui.processes(), port); }, milliseconds(20000)).count(), 0)
        << tui.capture();

    const auto told = std::chrono::steady_clock::now();
    auto seconds_since_told = [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - told).count();
    };
    agent.signal(SIGTERM);
    judge.signal(SIGTERM);
    tui.send_keys("q");
    EXPECT_EQ(agent.wait(milliseconds(30000)), 0) << agent.err();
    std::printf("the agent: gone %.2f s after being told\n", seconds_since_told());
    EXPECT_LT(seconds_since_told(), 2.0) << "the agent";
    EXPECT_EQ(judge.wait(milliseconds(30000)), 0) << judge.err();
    std::printf("the judge: gone %.2f s after being told\n", seconds_since_told());
    EXPECT_LT(seconds_since_told(), 2.0) << "the judge";
    EXPECT_TRUE(tui.wait_exit(milliseconds(30000))) << tui.capture();
    std::printf("msmon-tui: gone %.2f s after being told\n", seconds_since_told());
    EXPECT_LT(seconds_since_told(), 2.0) << "msmon-tui";
    EXPECT_NE(agent.err().find("msmon is stopping"), std::string::npos) << agent.err();
    EXPECT_TRUE(said("msmon judge: --on-incident command was ended: msmon was stopping")) << judge.err();
    const std::string err = judge.err();
    std::size_t prom_lines = 0;
    for (auto at = err.find("--prom-textfile:"); at != std::string::npos; at = err.find("--prom-textfile:", at + 1))
        ++prom_lines;
    EXPECT_EQ(prom_lines, 1u) << "said once, not once a second:\n" << err;
    const pid_t hook = std::stoi(read_file(mark));
    EXPECT_NE(::kill(hook, 0), 0) << "the judge's command " << hook << " outlived it";
    if (::kill(hook, 0) == 0) ::kill(hook, SIGKILL);
    sim.signal(SIGKILL);
    sim.wait(milliseconds(30000));
}

}  // namespace
}  // namespace msmon::test
