// The Config tab on a monitor_v2 config in a real terminal: titled as such, its nested fields as rows with their help,
// what the job will collect instead of a dynamic collection's state; a nested toggle reviewed and saved with only its
// line changed; `c` (v1's dynamic collection) says what to do instead.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;
using json = nlohmann::ordered_json;

const char* kV2 = R"({
    "framework": "pytorch",
    "output_dir": "./monitor_v2_out",
    "start_step": 10,
    "stop_step": 20,
    "monitors": {
        "module": {"enabled": true, "targets": ["mlp"]},
        "weight_grad": {"enabled": false, "ops": ["norm", "nans"], "eps": 1e-8}
    }
}
)";

TEST(TuiConfigV2, a_monitor_v2_config_is_shown_by_its_own_fields_and_a_nested_toggle_is_saved_in_place) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    const std::string cfg = tmp / "monitor_v2_config.json";
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "6"}).exit_code, 0);
    write_file(cfg, kV2);
    const std::map<std::string, std::string> env = {
        {"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"TERM", "xterm-256color"}, {"XDG_STATE_HOME", tmp / "state"}};
    TmuxSession t(program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "store.db") + " --config " + cfg, 120,
                  40, env);
    ASSERT_FALSE(t.wait_for("Overview", milliseconds(8000)).empty()) << t.capture();
    t.send_keys("5", true);
    std::string screen = t.wait_for("monitor_v2 config", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("(read once, when the job starts: no dynamic mode)"), std::string::npos) << screen;
    EXPECT_NE(screen.find("the job collects steps 10-19, every step; monitors module\n"), std::string::npos) << screen;
    EXPECT_NE(screen.find("msprobe accepts this version"), std::string::npos) << screen;
    EXPECT_NE(screen.find("stop_step"), std::string::npos) << screen;
    EXPECT_NE(screen.find("collection ends before this step"), std::string::npos) << screen;
    EXPECT_NE(screen.find("monitors.module.targets"), std::string::npos) << screen;
    EXPECT_NE(screen.find("[\"mlp\"]"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("dynamic_on"), std::string::npos) << "v1's dynamic_on is not offered:\n" << screen;
    EXPECT_EQ(screen.find("DYNAMIC_MONITOR"), std::string::npos) << screen;

    // c: v1's dynamic collection does not exist here; the form says what to do instead.
    t.send_keys("c", true);
    screen = t.wait_for("monitor_v2 has no dynamic mode", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("no unsaved changes"), std::string::npos) << "c changed something:\n" << screen;

    // monitors.weight_grad.enabled is the 16th row (11 top-level fields, module's 4, then it).
    for (int i = 0; i < 15; ++i) t.send_keys("j", true);
    screen = t.wait_for("> monitors.weight_grad.enabled", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    t.send_keys("Space");
    screen = t.wait_for(">*monitors.weight_grad.enabled", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("1 unsaved change"), std::string::npos) << screen;
    EXPECT_EQ(read_file(cfg), kV2) << "written before the user saved";
    t.send_keys("s", true);
    screen = t.wait_for("Save these changes", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("monitors.weight_grad.enabled: false → true"), std::string::npos) << screen;
    EXPECT_NE(screen.find("applies at the job's next"), std::string::npos) << screen;
    t.send_keys("y", true);
    screen = t.wait_for("saved at", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("the job collects steps 10-19, every step; monitors module, weight_grad"), std::string::npos)
        << "the window follows the file:\n"
        << screen;
    std::string expected = kV2;
    expected.replace(expected.find("\"enabled\": false"), 16, "\"enabled\": true");
    EXPECT_EQ(read_file(cfg), expected);
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
