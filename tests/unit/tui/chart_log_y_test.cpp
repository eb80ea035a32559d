// Log-y on a statistic with values <= 0 says so (it drew an empty chart), every chart mode shows in the title, and
// log-y chosen on one drill-down does not carry into the next one.
#include <gtest/gtest.h>

#include <sstream>

#include "store/reader.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tui/app.hpp"

namespace msmon::test {
namespace {

class ChartLogY : public ::testing::Test {
protected:
    void SetUp() override {
        const auto env = isolated_env(tmp_);
        auto sim = run(
            {program("msmon"), "simulate", tmp_ / "job", "--ranks", "4", "--steps", "40", "--faults", "spike@20"}, env);
        ASSERT_EQ(sim.exit_code, 0) << sim.err;
        auto ingest = run({program("msmon"), "ingest", tmp_ / "job", "--db", tmp_ / "store.db"}, env);
        ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
        app_ = std::make_unique<tui::App>(open_sqlite_reader(tmp_ / "store.db"));
        app_->collect();
    }
    void press(int key) {
        bool reload = false, redraw = false;
        app_->handle_key(key, 0, 0, reload, redraw);
        if (reload) app_->collect();
    }
    void command(const std::string& text) {
        press(':');
        for (char c : text) press(static_cast<unsigned char>(c));
        press(tui::kKeyEnter);
    }
    std::string frame() {
        tui::ScreenBuffer buf(120, 30);
        app_->compose(buf, tui::Glyphs{});
        if (app_->visible_view_wants_reload()) {
            app_->collect();
            app_->compose(buf, tui::Glyphs{});
        }
        return buf.to_text();
    }
    TempDir tmp_;
    std::unique_ptr<tui::App> app_;
};

TEST_F(ChartLogY, values_at_or_below_zero_are_said_and_a_new_drill_down_starts_linear) {
    press('2');
    command("op min");  // gradients' minima: all negative
    frame();
    press('L');
    std::string f = frame();
    EXPECT_NE(f.find("log-y: every value here is <= 0, nothing to draw on a log axis (L: linear)"), std::string::npos)
        << f;
    command("op mean");  // means of both signs
    f = frame();
    EXPECT_NE(f.find("values <= 0 not drawn)"), std::string::npos) << f;
    press('a');
    f = frame();
    EXPECT_NE(f.find("other ranks hidden"), std::string::npos) << f;
    // A drill-down from the Anomalies tab: linear again, though log-y was on.
    press('3');
    frame();
    press(tui::kKeyEnter);
    f = frame();
    ASSERT_NE(f.find("+ zoom in"), std::string::npos) << "not on the chart:\n" << f;
    EXPECT_EQ(f.find("log-y"), std::string::npos) << f;
}

}  // namespace
}  // namespace msmon::test
