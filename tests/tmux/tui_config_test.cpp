// The Config tab in a real terminal: toggle dynamic_on, set collect_times to 5, review, save — the file is replaced
// atomically with only those two values' lines changed (the user's indentation, one-line lists and 1e-3 kept); then the
// file changes under unsaved edits (a trainer's write-back) and the user keeps both.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;
using json = nlohmann::ordered_json;

// Written by hand: 4-space indent, one-line lists, a number spelled 1e-3.
const char* kConfig = R"({
    "targets": {},
    "dynamic_on": false,
    "collect_times": 1,
    "wg_distribution": true,
    "format": "csv",
    "ops": ["norm", "min", "max", "nans"],
    "eps": 1e-3,
    "my_own_key": {"kept": [1, 2]},
    "alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": 0.5}}], "dump": true}
}
)";

struct Fixture {
    TempDir tmp;
    std::string cfg = tmp / "monitor_config.json";
    std::map<std::string, std::string> env = {
        {"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"TERM", "xterm-256color"}, {"XDG_STATE_HOME", tmp / "state"}};
    Fixture() {
        EXPECT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "6"}).exit_code, 0);
        write_file(cfg, kConfig);
    }
    std::string command() const {
        return program("msmon-tui") + " " + (tmp / "job") + " --db " + (tmp / "store.db") + " --config " + cfg;
    }
};

TEST(TuiConfig, toggle_dynamic_on_set_collect_times_review_and_save) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    Fixture f;
    struct stat before {};
    ASSERT_EQ(::stat(f.cfg.c_str(), &before), 0);
    std::this_thread::sleep_for(milliseconds(20));  // paces the input: a save's mtime differs from `before`
    TmuxSession t(f.command(), 120, 40, f.env);
    ASSERT_FALSE(t.wait_for("Overview", milliseconds(8000)).empty()) << t.capture();
    // The tabs show before the run is read in; the config view's line about the latest collection needs the data.
    ASSERT_FALSE(t.wait_for("steps 0-5", milliseconds(8000)).empty()) << t.capture();
    t.send_keys("5", true);
    std::string screen = t.wait_for("msprobe accepts this version", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("not collecting (dynamic_on false); the latest collection in the data: steps 0-5"),
              std::string::npos)
        << screen;
    // targets is the first row; dynamic_on the second.
    t.send_keys("j", true);
    t.send_keys("Space");
    screen = t.wait_for(">*dynamic_on             true", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("1 unsaved change"), std::string::npos) << screen;
    // collect_times: two rows down, Enter, replace the value, Enter.
    t.send_keys("jj", true);
    t.send_keys("Enter");
    ASSERT_FALSE(t.wait_for("collect_times = 1", milliseconds(3000)).empty()) << t.capture();
    t.send_keys("BSpace");
    t.send_keys("5", true);
    t.send_keys("Enter");
    screen = t.wait_for(">*collect_times          5", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_EQ(json::parse(read_file(f.cfg)), json::parse(kConfig)) << "written before the user saved";
    // s: the diff against the file, then y.
    t.send_keys("s", true);
    screen = t.wait_for("Save these changes", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("dynamic_on: false → true"), std::string::npos) << screen;
    EXPECT_NE(screen.find("collect_times: 1 → 5"), std::string::npos) << screen;
    EXPECT_NE(screen.find("DYNAMIC_MONITOR=True"), std::string::npos) << screen;
    EXPECT_NE(screen.find("┌"), std::string::npos) << "the dialog has a border:\n" << screen;
    EXPECT_NE(screen.find("┘"), std::string::npos) << screen;
    t.send_keys("y", true);
    screen = t.wait_for("saved at", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("no unsaved changes"), std::string::npos) << screen;
    EXPECT_NE(screen.find("collection starts at the trainer's next step"), std::string::npos) << screen;

    struct stat after {};
    ASSERT_EQ(::stat(f.cfg.c_str(), &after), 0);
    EXPECT_NE(after.st_ino, before.st_ino) << "not replaced by rename";
    EXPECT_TRUE(after.st_mtim.tv_sec > before.st_mtim.tv_sec ||
                (after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec > before.st_mtim.tv_nsec));
    const json now = json::parse(read_file(f.cfg));  // throws (fails) if not valid JSON
    json expected = json::parse(kConfig);
    expected["dynamic_on"] = true;
    expected["collect_times"] = 5;
    EXPECT_EQ(now, expected);
    std::vector<std::string> keys_now, keys_expected;
    for (auto it = now.begin(); it != now.end(); ++it) keys_now.push_back(it.key());
    for (auto it = expected.begin(); it != expected.end(); ++it) keys_expected.push_back(it.key());
    EXPECT_EQ(keys_now, keys_expected);
    // Only the two values' lines changed: the rest is the user's text, byte for byte.
    std::string expected_text = kConfig;
    expected_text.replace(expected_text.find("\"dynamic_on\": false"), 19, "\"dynamic_on\": true");
    expected_text.replace(expected_text.find("\"collect_times\": 1"), 18, "\"collect_times\": 5");
    EXPECT_EQ(read_file(f.cfg), expected_text);
    t.send_keys("q", true);
}

TEST(TuiConfig, a_write_back_under_unsaved_edits_shows_both_and_keeps_what_the_user_chooses) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    Fixture f;
    json on = json::parse(kConfig);
    on["dynamic_on"] = true;
    on["collect_times"] = 3;
    write_file(f.cfg, on.dump(2));
    TmuxSession t(f.command(), 120, 40, f.env);
    ASSERT_FALSE(t.wait_for("Overview", milliseconds(8000)).empty()) << t.capture();
    t.send_keys("5", true);
    ASSERT_FALSE(t.wait_for("collecting since step", milliseconds(5000)).empty()) << t.capture();
    // No edits: the trainer's write-back is simply reloaded and said.
    json off = on;
    off["dynamic_on"] = false;
    write_file(f.cfg, off.dump(2));  // in place, as msprobe does
    std::string screen =
        t.wait_for("collection finished at step 5? msprobe set dynamic_on → false", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("reloaded: dynamic_on: true → false"), std::string::npos) << screen;
    // Unsaved edit (wg_distribution off), then someone else changes ops on disk.
    for (int i = 0; i < 13; ++i) t.send_keys("j", true);
    screen = t.wait_for("> wg_distribution", milliseconds(3000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    t.send_keys("Space");
    ASSERT_FALSE(t.wait_for(">*wg_distribution        false", milliseconds(3000)).empty()) << t.capture();
    json theirs = off;
    theirs["ops"] = json::parse(R"(["norm"])");
    std::this_thread::sleep_for(milliseconds(20));  // paces the input: this write's mtime differs from the last
    write_file(f.cfg, theirs.dump(2));
    screen = t.wait_for("while you had unsaved edits", milliseconds(5000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("ops: [\"norm\",\"min\",\"max\",\"nans\"] → [\"norm\"]"), std::string::npos) << screen;
    EXPECT_NE(screen.find("wg_distribution: true → false"), std::string::npos) << screen;
    // Saving is refused until the user chooses; m keeps theirs plus mine.
    t.send_keys("m", true);
    ASSERT_FALSE(t.wait_for("your edits are now on top", milliseconds(3000)).empty()) << t.capture();
    t.send_keys("s", true);
    ASSERT_FALSE(t.wait_for("Save these changes", milliseconds(3000)).empty()) << t.capture();
    t.send_keys("y", true);
    ASSERT_FALSE(t.wait_for("saved at", milliseconds(5000)).empty()) << t.capture();
    json expected = theirs;
    expected["wg_distribution"] = false;
    EXPECT_EQ(json::parse(read_file(f.cfg)), expected);
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test
