// The Anomalies table in whole frames of the app (App::handle_key, App::collect, App::compose, no terminal):
// a `:rule` typed on the table the store pages filters it at once, and the name column ends inside the frame.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "store/reader.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tui/app.hpp"
#include "tui/key_table.hpp"
#include "tui/screen_buffer.hpp"
#include "tui/views/anomalies_view.hpp"

namespace msmon::test {
namespace {

class AnomaliesTableFrame : public ::testing::Test {
protected:
    void SetUp() override {
        const auto env = isolated_env(tmp_);
        auto sim = run({program("msmon"), "simulate", tmp_ / "job", "--ranks", "8", "--steps", "60", "--faults",
                        "spike@20,nan@35:r3"},
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
    type("rule Jump");
    press(tui::kKeyEnter);
    const auto lines = frame(120, 30);
    // The spike's 32 anomalies (8 ranks, steps 20-21) of the 80 (the NaN's 48 are NonFinite).
    EXPECT_EQ(lines[1].rfind("sort rank  grouped  rule Jump  32 rows of 80", 0), 0u) << lines[1];
    int rows = 0;
    for (std::size_t i = 3; i < lines.size() && lines[i].find(" msm ") != std::string::npos; ++i, ++rows)
        EXPECT_NE(lines[i].find(" Jump "), std::string::npos) << lines[i];
    EXPECT_GT(rows, 10) << lines[3];
}

TEST_F(AnomaliesTableFrame, the_table_s_names_end_inside_the_frame) {
    press('s');
    for (int width : {100, 120, 160}) {
        bool seen = false;
        for (const auto& l : frame(width, 40))
            if (l.find(" msm ") != std::string::npos) {  // a row of the table
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

// At 80 columns the table's name column had 7 characters ("….fc1.w"): layers.0 and layers.1 read the same, and
// kinds were cut to "grad_unreduc". Now optional columns give way: the name has 30 columns and keeps its layer,
// the kind is whole.
TEST(AnomaliesTable80, the_table_names_keep_their_layer_and_kinds_are_whole) {
    std::vector<AnomalyRecord> list;
    for (int layer : {0, 1})
        for (const char* kind : {"grad_unreduced", "exp_avg_sq"}) {
            AnomalyRecord a;
            a.source = "detected";
            a.rule = "Jump";
            a.rank = layer;
            a.step = 20;
            a.kind = kind;
            a.op = "norm";
            a.name = "module.module.decoder.layers." + std::to_string(layer) + ".mlp.linear_fc1.weight";
            a.value = 0.014499999999999999;
            a.reference = 0.0001;
            a.score = 10 - layer;
            list.push_back(a);
        }
    tui::SharedSelection shared;
    IncidentIndex incidents;
    tui::AnomaliesView view(shared, incidents, [] {});
    view.set_list(list);
    tui::ScreenBuffer buf(80, 24);
    view.draw(buf, 0, 0, 80, 21, tui::Glyphs{});
    std::istringstream in(buf.to_text());
    std::set<std::string> layers;
    int unreduced = 0;
    std::string all;
    for (std::string l; std::getline(in, l);) {
        all += l + "\n";
        if (l.find("grad_unreduc") != std::string::npos) {
            EXPECT_NE(l.find("grad_unreduced "), std::string::npos) << "kind cut: " << l;
            ++unreduced;
        }
        for (const char* layer : {"layers.0.", "layers.1."})
            if (l.find(layer) != std::string::npos && l.find("linear_fc1.weight") != std::string::npos)
                layers.insert(layer);
    }
    EXPECT_EQ(unreduced, 2) << all;
    EXPECT_EQ(layers.size(), 2u) << "each row names its layer:\n" << all;
}

}  // namespace
}  // namespace msmon::test
