// msmon-tui on a node that has no terminfo description of $TERM (a minimal image, a static msmon-tui copied to a
// node without ncurses-term): it draws with its own built-in description of the closest terminal, in a private
// folder it removes on exit; for a TERM it has nothing close to, it says which TERM and what to do.
#include <gtest/gtest.h>

#include <filesystem>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

class TuiTerminfo : public ::testing::Test {
protected:
    void SetUp() override {
        const auto sim = run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "20"});
        ASSERT_EQ(sim.exit_code, 0) << sim.err;
        const auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "s.db"}, tmux_env(tmp));
        ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
        std::filesystem::create_directories(tmp / "private");
    }
    // msmon-tui with TERM=`term` and no terminfo folder ncurses could look in.
    std::string command(const std::string& term) const {
        return "env TERM=" + term + " TERMINFO=" + (tmp / "none") + " TERMINFO_DIRS=" + (tmp / "none") +
               " TMPDIR=" + (tmp / "private") + " XDG_RUNTIME_DIR= " + program("msmon-tui") + " --db " +
               (tmp / "s.db") + "; echo exit=$?; sleep 30";
    }
    TempDir tmp;
};

TEST_F(TuiTerminfo, a_terminal_the_node_cannot_describe_is_drawn_with_the_built_in_description) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    for (const std::string term : {"xterm-kitty", "tmux-256color", "vt220"}) {
        TmuxSession t(command(term), 120, 30, tmux_env(tmp));
        const std::string screen = t.wait_for("kind ", milliseconds(10000));
        ASSERT_NE(screen.find(" 1 Overview"), std::string::npos) << term << ":\n" << t.capture();
        EXPECT_NE(screen.find("rank"), std::string::npos) << screen;
        t.send_keys("q", true);
        EXPECT_NE(t.wait_for("exit=0", milliseconds(5000)), "") << t.capture();
        EXPECT_TRUE(std::filesystem::is_empty(tmp / "private")) << "the private terminfo folder was left behind";
    }
}

TEST_F(TuiTerminfo, a_terminal_nothing_describes_is_named_with_the_fix) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TmuxSession t(command("weird-term"), 120, 30, tmux_env(tmp));
    const std::string screen = t.wait_for("exit=", milliseconds(10000));
    EXPECT_NE(screen.find("no terminfo description of TERM=weird-term"), std::string::npos) << screen;
    EXPECT_NE(screen.find("TERM=xterm-256color"), std::string::npos) << screen;
    EXPECT_NE(screen.find("exit=1"), std::string::npos) << screen;
}

}  // namespace
}  // namespace msmon::test
