// msmon-tui in a terminal whose locale is not UTF-8 (LANG=C): the Config tab's review of a change shows the ASCII
// stand-ins of its arrow and dashes, where it used to show '?'.
#include <gtest/gtest.h>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

TEST(TuiWithoutUtf8, the_config_review_shows_ascii_stand_ins_not_question_marks) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "6"}).exit_code, 0);
    const std::string cfg = tmp / "monitor_config.json";
    write_file(cfg,
               "{\n    \"targets\": {},\n    \"dynamic_on\": false,\n    \"collect_times\": 1,\n"
               "    \"wg_distribution\": true,\n    \"format\": \"csv\",\n    \"ops\": [\"norm\"]\n}\n");
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "store.db") + " --config " + cfg, 100,
                  30, {{"LANG", "C"}, {"LC_ALL", "C"}, {"TERM", "xterm-256color"}, {"XDG_STATE_HOME", tmp / "state"}});
    ASSERT_FALSE(t.wait_for("Overview", milliseconds(8000)).empty()) << t.capture();
    t.send_keys("5", true);
    ASSERT_FALSE(t.wait_for("msprobe accepts this version", milliseconds(5000)).empty()) << t.capture();
    t.send_keys("j", true);  // dynamic_on, the second row
    t.send_keys("Space");
    std::string screen = t.wait_for(">*dynamic_on", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("1 unsaved change - s review and save, u undo"), std::string::npos) << screen;
    t.send_keys("s", true);
    screen = t.wait_for("Save these changes", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("dynamic_on: false > true"), std::string::npos) << screen;
    EXPECT_NE(screen.find("(re)starts collecting - the"), std::string::npos) << screen;
    EXPECT_NE(screen.find("+--"), std::string::npos) << "the dialog's border in ASCII:\n" << screen;
    EXPECT_EQ(screen.find(" ? "), std::string::npos) << "a glyph shown as '?':\n" << screen;
    for (const char c : screen) EXPECT_LT(static_cast<unsigned char>(c), 0x80) << screen;
    t.send_keys("Escape");
    ASSERT_TRUE(t.settle()) << t.last_wait_error();
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
