// The Anomalies table in whole frames of the app (App::handle_key, App::collect, App::compose, no terminal):
// a
// `:rule` typed on the table the store pages filters it at once, and the name column ends inside the frame.
#include <gtest/gtest.h>

#include <sstream>

#include "store/reader.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tui/app.hpp"
#include "tui/key_table.hpp"
#include "tui/screen_buffer.hpp"

namespace msmon::test {
namespace {

class AnomaliesTableFrame : public ::testing::Test {
  protected:
    void SetUp() override {
        const auto env = isolated_env(tmp_);
        auto sim = run({program("msmon"), "simulate", tmp_ / "job", "--ranks", "8", "--steps", "60",
                        "--faults", "spike@20,nan@35:r3"},
                       env);
        ASSERT_EQ(sim.exit_code, 0) << sim.err;
        auto ingest = run({program("msmon"), "ingest", tmp_ / "job", "--db", tmp_ / "store.db"}, env);
        ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
        app_ = std::make_unique<tui::App>(open_sqlite_reader(tmp_ / "store.db"));
        app_->select_view("anomalies");
        app_->collect();
    }
    // One key as the event loop handles it: a reload collects, then a frame.
    void press(int key) {
        bool reload = false, redraw = false;
        app_->handle_key(key, 0, 0, reload, redraw);
        if (reload) app_->collect();
    }
    void type(const std::string& text) {
        for (char c : text) press(static_cast<unsigned char>(c));
    }
    std::vector<std::string> frame(int width, int height) {
        tui::ScreenBuffer buf(width, height);
        app_->compose(buf, tui::Glyphs{});
        std::vector<std::string> out;
        std::istringstream in(buf.to_text());
        for (std::string l; std::getline(in, l);) out.push_back(l);
        return out;
    }
    TempDir tmp_;
    std::unique_ptr<tui::App> app_;
};

TEST_F(AnomaliesTableFrame, a_rule_typed_on_the_paged_table_filters_its_rows_at_once) {
    press('s');  // from incidents to the table the store pages
    ASSERT_EQ(frame(120, 30)[1].rfind("sort rank  grouped  ", 0), 0u);
    press(':');
    type("rule NonFinite");
    press(tui::kKeyEnter);
    const auto lines = frame(120, 30);
    EXPECT_EQ(lines[1].rfind("sort rank  grouped  rule NonFinite  1 rows of 33", 0), 0u) << lines[1];
    EXPECT_NE(lines[3].find(" NonFinite "), std::string::npos) << lines[3];
    EXPECT_EQ(lines[4].find_first_not_of(' '), std::string::npos) << "a second row: " << lines[4];
}

TEST_F(AnomaliesTableFrame, the_table_s_names_end_inside_the_frame) {
    press('s');
    for (int width : {100, 120, 160}) {
        bool seen = false;
        for (const auto& l : frame(width, 40))
            if (l.find("layernorm") != std::string::npos) {
                seen = true;
                std::size_t cols = 0;
                for (unsigned char c : l) cols += (c & 0xC0) != 0x80;
                EXPECT_LE(cols, static_cast<std::size_t>(width));
                EXPECT_TRUE(l.size() >= 6 && l.compare(l.find_last_not_of(' ') - 5, 6, "weight") == 0)
                    << width << ": " << l;
            }
        EXPECT_TRUE(seen) << width;
    }
}

}  // namespace
}  // namespace msmon::test
