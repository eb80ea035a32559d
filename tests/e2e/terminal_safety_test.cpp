// File content must never drive the user's terminal: parameter names carrying CSI (a device-status query, a
// title report), OSC (set the window title), BEL/backspace, a bidi override and invalid UTF-8 are ingested, and
// then every TUI view (snapshots, and a live session whose raw output bytes tmux records) and the CLI's table
// output are checked for those bytes. They must show up escaped, never raw.
#include <gtest/gtest.h>
#include <poll.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <thread>

#include "tests/support/pty_run.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

// The hostile payloads, and the bytes that must not reach a terminal.
const std::vector<std::string> kPayloads = {
    "\x1b[6n",           // CSI: the terminal would answer with the cursor position, as if typed
    "\x1b[21t",          // CSI: report the window title
    "\x1b]0;pwned\x07",  // OSC: set the window title
    "\x07\x08",          // BEL, backspace
    "\xe2\x80\xae",      // U+202E RIGHT-TO-LEFT OVERRIDE
    "\xff\xfe",          // invalid UTF-8
};

std::string hostile_tree(const TempDir& tmp) {
    const std::string run = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(run);
    std::string csv = "vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype\n";
    for (int step = 0; step < 4; ++step)
        for (std::size_t i = 0; i < kPayloads.size(); ++i)
            csv += "0,layers." + std::to_string(i) + "." + kPayloads[i] + "evil.weight," + std::to_string(step) +
                   ",-1,1," + (step == 3 && i % 2 == 0 ? "nan" : std::to_string(0.5 + i)) +
                   ",0,0,0,\"[4, 4]\",torch.float32\n";
    write_file(run + "/grad_reduced_0-3.csv", csv);
    write_file(tmp / "config.json",
               R"({"alert": {"rules": [{"rule_name": "AnomalyNan"}], "dump": false}, "ops": ["norm"]})");
    return tmp / "job";
}

// The first raw payload found in `bytes`, or "".
std::string raw_payload_in(const std::string& bytes) {
    for (const auto& p : kPayloads)
        if (bytes.find(p) != std::string::npos) return p;
    if (bytes.find("\x1b]") != std::string::npos) return "an OSC introducer";
    return "";
}

std::string visible(const std::string& s) {
    std::string out;
    for (unsigned char c : s) {
        char buf[8];
        std::snprintf(buf, sizeof buf, c < 0x20 || c >= 0x7f ? "\\x%02x" : "%c", c);
        out += buf;
    }
    return out;
}

TEST(TerminalSafety, hostile_names_are_escaped_in_every_view_and_in_cli_tables) {
    TempDir tmp;
    const std::string job = hostile_tree(tmp);
    const std::map<std::string, std::string> env = {
        {"XDG_STATE_HOME", tmp / "state"}, {"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}};
    auto ingest =
        run({program("msmon"), "ingest", job, "--db", tmp / "store.db", "--monitor-config", tmp / "config.json"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    // The data went in byte for byte (query's CSV is data, not a table: names stay exact there).
    auto query = run({program("msmon"), "query", "--db", tmp / "store.db", "--op", "norm", "--steps", "0"}, env);
    ASSERT_EQ(query.exit_code, 0);
    EXPECT_NE(query.out.find("\x1b]0;pwned\x07"), std::string::npos) << "the name was not stored exactly";

    for (const std::vector<std::string>& cli :
         {std::vector<std::string>{"anomalies", "--db", tmp / "store.db"}, {"health", "--db", tmp / "store.db"}}) {
        std::vector<std::string> argv = {program("msmon")};
        argv.insert(argv.end(), cli.begin(), cli.end());
        auto r = run(argv, env);
        ASSERT_EQ(r.exit_code, 0) << r.err;
        EXPECT_EQ(raw_payload_in(r.out + r.err), "") << "msmon " << cli[0] << " printed raw:\n" << visible(r.out);
        if (cli[0] == "anomalies") {
            EXPECT_NE(r.out.find("evil.weight"), std::string::npos) << r.out;
        }
    }
    for (const char* view : {"overview", "chart", "anomalies", "health", "config"}) {
        auto r =
            run({program("msmon-tui"), job, "--db", tmp / "store.db", "--snapshot", view, "--size", "160x50"}, env);
        ASSERT_EQ(r.exit_code, 0) << view << ": " << r.err;
        EXPECT_EQ(raw_payload_in(r.out), "") << view << " snapshot printed raw:\n" << visible(r.out);
    }

    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed: live terminal bytes not checked");
    // Live: every byte msmon-tui writes to the terminal, while the user walks through every tab and filters.
    const std::string raw = tmp / "terminal.bytes";
    // The shell's sleep paces the start: the recording begins before the program's first byte.
    TmuxSession t(
        "sleep 0.5; " + program("msmon-tui") + " " + job + " --db " + (tmp / "store.db"), 160, 50,
        {{"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"TERM", "xterm-256color"}, {"XDG_STATE_HOME", tmp / "state"}});
    t.record_output(raw);
    ASSERT_FALSE(t.wait_for("Overview", milliseconds(8000)).empty()) << t.capture();
    for (const char* key : {"2", "3", "4", "5", "1"}) {
        t.send_keys(key, true);
        ASSERT_TRUE(t.settle()) << t.last_wait_error();  // each tab drawn before the next
    }
    t.send_keys("3", true);
    ASSERT_FALSE(t.wait_for("evil.weight", milliseconds(3000)).empty()) << t.capture();
    t.send_keys("Enter");  // drill into the chart of a hostile name
    ASSERT_TRUE(t.settle()) << t.last_wait_error();
    const auto output = t.output_after_quit(raw);
    ASSERT_TRUE(output) << visible(t.last_wait_error());
    const std::string& bytes = *output;
    ASSERT_GT(bytes.size(), 1000u) << "nothing was recorded";
    EXPECT_NE(bytes.find("evil.weight"), std::string::npos);
    EXPECT_EQ(raw_payload_in(bytes), "") << "a raw payload reached the terminal";
}

// `msmon query` on a terminal: the CSV a person reads there carries no raw byte of a name (it used to set the
// title, clear the screen, write the clipboard with OSC 52); piped, it keeps the exact bytes (data for programs).
TEST(TerminalSafety, query_csv_on_a_terminal_escapes_names_and_keeps_the_bytes_through_a_pipe) {
    TempDir tmp;
    const std::string job = hostile_tree(tmp);
    const std::map<std::string, std::string> env = {
        {"XDG_STATE_HOME", tmp / "state"}, {"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}};
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", tmp / "store.db"}, env).exit_code, 0);
    const std::vector<std::string> query = {program("msmon"), "query", "--db", tmp / "store.db", "--steps", "0"};
    auto piped = run(query, env);
    ASSERT_EQ(piped.exit_code, 0) << piped.err;
    EXPECT_NE(piped.out.find("layers.2.\x1b]0;pwned\x07"
                             "evil.weight"),
              std::string::npos)
        << visible(piped.out);
    auto shown = run_on_terminal(query, env);
    ASSERT_EQ(shown.exit_code, 0) << visible(shown.out);
    EXPECT_EQ(raw_payload_in(shown.out), "") << "msmon query printed raw on a terminal:\n" << visible(shown.out);
    EXPECT_NE(shown.out.find("layers.2.\\x1B]0;pwned\\x07evil.weight"), std::string::npos) << visible(shown.out);
    EXPECT_NE(shown.out.find("layers.5.\\xFF\\xFEevil.weight"), std::string::npos) << visible(shown.out);
    // Every row is still there, one per line.
    std::size_t rows = 0;
    for (std::size_t at = 0; (at = shown.out.find("evil.weight", at)) != std::string::npos; ++at) ++rows;
    EXPECT_EQ(rows, kPayloads.size() * 8) << visible(shown.out);  // 8 ops (min .. dtype) per name
}

// Paths name hostile bytes too (a job folder, a rank folder): errors on stderr, notices, and msmon.log lines
// that name them are escaped.
TEST(TerminalSafety, errors_notices_and_log_lines_naming_a_hostile_path_are_escaped) {
    TempDir tmp;
    const std::string job = tmp / "job\x1b]0;pwned\x07\x1b]52;c;SGFja2VkIQ==\x07";
    const std::string run_dir = job + "/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(run_dir);
    write_file(run_dir + "/grad_reduced_0-3.csv",
               "vpp_stage,name,step,norm,shape,dtype\n0,w,0,1.5,[4],torch.float32\nthis line is malformed\x1b[2J\n");
    const std::map<std::string, std::string> env = {
        {"XDG_STATE_HOME", tmp / "state"}, {"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}};
    auto ingest = run_on_terminal({program("msmon"), "ingest", job, "--db", tmp / "store.db"}, env);
    ASSERT_EQ(ingest.exit_code, 0) << visible(ingest.out);
    EXPECT_EQ(raw_payload_in(ingest.out), "") << visible(ingest.out);
    EXPECT_EQ(ingest.out.find("\x1b[2J"), std::string::npos) << visible(ingest.out);
    auto missing = run_on_terminal({program("msmon"), "query", job + "/nothing-here"}, env);
    EXPECT_NE(missing.exit_code, 0);
    EXPECT_NE(missing.out.find("nothing-here"), std::string::npos) << visible(missing.out);
    EXPECT_EQ(raw_payload_in(missing.out), "") << visible(missing.out);
    auto tui = run_on_terminal({program("msmon-tui"), job + "/nothing-here"}, env);
    EXPECT_NE(tui.exit_code, 0);
    EXPECT_EQ(raw_payload_in(tui.out), "") << visible(tui.out);
    // The log names the malformed line's file and line, escaped.
    const std::string log = read_file(tmp / "state/msmon/msmon.log");
    EXPECT_NE(log.find("grad_reduced_0-3.csv"), std::string::npos) << visible(log);
    EXPECT_EQ(raw_payload_in(log), "") << visible(log);
    EXPECT_EQ(log.find("\x1b[2J"), std::string::npos) << visible(log);
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// No terminal: `msmon-tui DIR </dev/null` (a cron job, a pipeline) spun at 100% CPU forever on EOF. It says it
// needs a terminal and exits; --snapshot still prints a frame. A terminal that goes away ends it.
TEST(TerminalSafety, without_a_terminal_msmon_tui_exits_with_the_reason_and_a_vanished_terminal_ends_it) {
    TempDir tmp;
    const std::string rank0 = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    write_file(rank0 + "/grad_reduced_0-1.csv", "vpp_stage,name,step,norm\n0,w,0,1.5\n0,w,1,2.5\n");
    const auto env = std::map<std::string, std::string>{
        {"XDG_STATE_HOME", tmp / "state"}, {"XDG_CACHE_HOME", tmp / "cache"}, {"TERM", "xterm-256color"}};
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run({program("msmon-tui"), tmp / "job"}, env);  // stdin /dev/null, stdout a pipe
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(5));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("msmon-tui: needs a terminal (its input is not one)"), std::string::npos) << r.err;
    auto snap = run({program("msmon-tui"), tmp / "job", "--snapshot", "overview", "--size", "80x24"}, env);
    EXPECT_EQ(snap.exit_code, 0) << snap.err;

    // On a pseudo-terminal whose other side then closes.
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        for (const auto& [k, v] : env) setenv(k.c_str(), v.c_str(), 1);
        const std::string prog = program("msmon-tui"), job = tmp / "job";
        execl(prog.c_str(), prog.c_str(), job.c_str(), static_cast<char*>(nullptr));
        _exit(127);
    }
    std::string seen;
    char buf[4096];
    const auto start = std::chrono::steady_clock::now();
    while (seen.find("Overview") == std::string::npos &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(10)) {
        pollfd p{master, POLLIN, 0};
        if (::poll(&p, 1, 100) > 0) {
            const ssize_t n = ::read(master, buf, sizeof buf);
            if (n <= 0) break;
            seen.append(buf, static_cast<std::size_t>(n));
        }
    }
    ASSERT_NE(seen.find("Overview"), std::string::npos) << "msmon-tui did not start on the terminal";
    ::close(master);
    int status = 0;
    pid_t done = 0;
    for (int i = 0; i < 100 && done == 0; ++i) {
        done = ::waitpid(pid, &status, WNOHANG);
        if (done == 0) std::this_thread::sleep_for(std::chrono::milliseconds(50));  // paces the look at its exit
    }
    if (done == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
    }
    EXPECT_EQ(done, pid) << "msmon-tui kept running 5 s after its terminal went away";
}

}  // namespace
}  // namespace msmon::test
