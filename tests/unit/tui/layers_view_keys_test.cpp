// The Layers view's keys between two reads: the event loop reads every pending key before it collects
// again, so Enter right after a key that moved the selection off what was read, or changed the kind, must chart
// what is on screen or nothing, never another tensor or the new kind with the old name.
#include <gtest/gtest.h>

#include "core/text/name_pattern.hpp"
#include "store/reader.hpp"
#include "tests/support/test_env.hpp"
#include "tui/views/layers_view.hpp"

namespace msmon::test {
namespace {

class LayersViewKeys : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(run({program("msmon"), "simulate", tmp_ / "job", "--ranks", "2", "--steps", "20", "--xy"}).exit_code,
                  0);
        ASSERT_EQ(run({program("msmon"), "ingest", tmp_ / "job", "--db", tmp_ / "store.db"}).exit_code, 0);
        reader_ = open_sqlite_reader(tmp_ / "store.db");
        view_ = std::make_unique<tui::LayersView>(shared_, incidents_, [this] { ++charts_; });
        read_and_draw();
    }
    void read_and_draw() {
        view_->collect(*reader_);
        draw();
        if (view_->wants_reload()) view_->collect(*reader_), draw();
    }
    std::string draw() {
        tui::ScreenBuffer buf(120, 30);
        view_->draw(buf, 0, 0, 120, 30, tui::Glyphs{});
        return buf.to_text();
    }
    tui::Reaction press(int key) {
        tui::Reaction r = tui::Reaction::none;
        tui::dispatch(view_->keys(), key, r);
        return r;
    }
    TempDir tmp_;
    std::unique_ptr<Reader> reader_;
    tui::SharedSelection shared_;
    IncidentIndex incidents_;
    std::unique_ptr<tui::LayersView> view_;
    int charts_ = 0;
};

TEST_F(LayersViewKeys, enter_after_a_move_off_what_was_read_charts_nothing_until_it_is_read) {
    // The last row is on another page: not read yet.
    EXPECT_EQ(press(tui::kKeyEnd), tui::Reaction::reload);
    press(tui::kKeyEnter);
    EXPECT_EQ(charts_, 0) << "charted a tensor that was not on screen";
    read_and_draw();
    const auto rows = reader_->module_rows("actv", shared_.focus_rank < 0 ? 0 : shared_.focus_rank);
    ASSERT_FALSE(rows.empty());
    press(tui::kKeyEnter);
    ASSERT_EQ(charts_, 1);
    ASSERT_TRUE(shared_.drill);
    EXPECT_EQ(shared_.drill->series.kind, "actv");
    EXPECT_EQ(shared_.drill->series.name_regex, exact_name_pattern(rows.back().name));
}

TEST_F(LayersViewKeys, enter_after_a_kind_change_charts_the_cell_as_it_was_read) {
    const std::string before = draw();
    ASSERT_NE(before.find("kind actv"), std::string::npos) << before;
    EXPECT_EQ(press(']'), tui::Reaction::reload);  // the next kind, not read yet
    press(tui::kKeyEnter);
    ASSERT_EQ(charts_, 1);
    ASSERT_TRUE(shared_.drill);
    EXPECT_EQ(shared_.drill->series.kind, "actv");  // the kind of the name on screen
    EXPECT_EQ(shared_.drill->series.op, "norm");
}

}  // namespace
}  // namespace msmon::test
