// File content must never drive the user's terminal: parameter names carrying CSI (a device-status query, a
// title report), OSC (set the window title), BEL/backspace, a bidi override and invalid UTF-8 are ingested, and
// then every TUI view (snapshots, and a live session whose raw output bytes tmux records) and the CLI's table
// output are checked for those bytes. They must show up escaped, never raw.
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

// The hostile payloads, and the bytes that must not reach a terminal.
const std::vector<std::string> kPayloads = {
    "\x1b[6n",              // CSI: the terminal would answer with the cursor position, as if typed
    "\x1b[21t",             // CSI: report the window title
    "\x1b]0;pwned\x07",     // OSC: set the window title
    "\x07\x08",             // BEL, backspace
    "\xe2\x80\xae",         // U+202E RIGHT-TO-LEFT OVERRIDE
    "\xff\xfe",             // invalid UTF-8
};

std::string hostile_tree(const TempDir& tmp) {
    const std::string run = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(run);
    std::string csv = "vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype\n";
    for (int step = 0; step < 4; ++step)
        for (std::size_t i = 0; i < kPayloads.size(); ++i)
            csv += "0,layers." + std::to_string(i) + "." + kPayloads[i] + "evil.weight," + std::to_string(step) + ",-1,1," +
                   (step == 3 && i % 2 == 0 ? "nan" : std::to_string(0.5 + i)) + ",0,0,0,\"[4, 4]\",torch.float32\n";
    write_file(run + "/grad_reduced_0-3.csv", csv);
    write_file(tmp / "config.json", R"({"alert": {"rules": [{"rule_name": "AnomalyNan"}], "dump": false}, "ops": ["norm"]})");
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
    const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", tmp / "state"}, {"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}};
    auto ingest = run({program("msmon"), "ingest", job, "--db", tmp / "store.db", "--monitor-config", tmp / "config.json"}, env);
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
        auto r = run({program("msmon-tui"), job, "--db", tmp / "store.db", "--snapshot", view, "--size", "160x50"}, env);
        ASSERT_EQ(r.exit_code, 0) << view << ": " << r.err;
        EXPECT_EQ(raw_payload_in(r.out), "") << view << " snapshot printed raw:\n" << visible(r.out);
    }

    if (!TmuxSession::available()) GTEST_SKIP() << "tmux is not installed: live terminal bytes not checked";
    // Live: every byte msmon-tui writes to the terminal, while the user walks through every tab and filters.
    const std::string raw = tmp / "terminal.bytes";
    TmuxSession t("sleep 0.5; " + program("msmon-tui") + " " + job + " --db " + (tmp / "store.db"), 160, 50,
                  {{"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"TERM", "xterm-256color"}, {"XDG_STATE_HOME", tmp / "state"}});
    t.record_output(raw);
    ASSERT_FALSE(t.wait_for("Overview", milliseconds(8000)).empty()) << t.capture();
    for (const char* key : {"2", "3", "4", "5", "1"}) {
        t.send_keys(key, true);
        std::this_thread::sleep_for(milliseconds(300));
    }
    t.send_keys("3", true);
    ASSERT_FALSE(t.wait_for("evil.weight", milliseconds(3000)).empty()) << t.capture();
    t.send_keys("Enter");  // drill into the chart of a hostile name
    std::this_thread::sleep_for(milliseconds(500));
    t.send_keys("q", true);
    std::this_thread::sleep_for(milliseconds(300));
    const std::string bytes = read_file(raw);
    ASSERT_GT(bytes.size(), 1000u) << "nothing was recorded";
    EXPECT_NE(bytes.find("evil.weight"), std::string::npos);
    EXPECT_EQ(raw_payload_in(bytes), "") << "a raw payload reached the terminal";
}

}  // namespace
}  // namespace msmon::test
