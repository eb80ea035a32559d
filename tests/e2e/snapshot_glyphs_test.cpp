// Without a UTF-8 locale msmon-tui shows every glyph as its ASCII stand-in, never as '?': each view's snapshot of
// real msprobe runs under LANG=C is compared cell by cell with the same snapshot under C.UTF-8.
#include <gtest/gtest.h>

#include "core/text/utf8.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/view_snapshots.hpp"
#include "tui/glyph_stand_ins.hpp"

namespace msmon::test {
namespace {

// Glyphs that draw a plot (braille dots, block elements, box drawing): the ASCII forms of charts, sparklines,
// heatmaps and trees are drawn apart, with their own geometry, so such a cell need only be ASCII, and not '?'.
bool plot_glyph(char32_t c) {
    return (c >= 0x2800 && c <= 0x28FF) || (c >= 0x2580 && c <= 0x259F) || (c >= 0x2500 && c <= 0x257F);
}

std::string utf8(char32_t c) {
    std::string out;
    append_utf8(out, c);
    return out;
}

TEST(SnapshotGlyphs, without_utf8_every_view_shows_each_glyph_as_its_ascii_stand_in_never_a_question_mark) {
    TempDir tmp;
    if (shared_dir().empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared/fixtures is absent: no real runs to draw");
    // A collection running longer than collect_times: the Config tab says so after a dash.
    const std::string config = tmp / "config.json";
    write_file(config,
               "{\"targets\": {}, \"dynamic_on\": true, \"collect_times\": 3, \"xy_distribution\": true, "
               "\"format\": \"csv\", \"ops\": [\"min\", \"max\", \"norm\"]}\n");
    int text_glyphs = 0;
    // nan: an incident's rows (▸), the Layers marks (◆ •), names cut (…); lr-blowup: a message with "×".
    for (const std::string fixture : {"nan", "lr-blowup"}) {
        const std::string db = ingest_msprobe_fault_run(tmp, fixture);
        for (const std::string& view : view_names()) {
            for (const std::string size : {"80x24", "160x50"}) {
                const std::string where = fixture + " " + view + " " + size;
                const CommandResult unicode = view_snapshot(tmp, db, config, view, size, "C.UTF-8");
                const CommandResult ascii = view_snapshot(tmp, db, config, view, size, "C");
                ASSERT_EQ(unicode.exit_code, 0) << where << ": " << unicode.err;
                ASSERT_EQ(ascii.exit_code, 0) << where << ": " << ascii.err;
                for (const char b : ascii.out)
                    ASSERT_LT(static_cast<unsigned char>(b), 0x80) << where << ": a byte >= 0x80 under LANG=C:\n"
                                                                   << ascii.out;
                const auto u = frame_cells(unicode.out), a = frame_cells(ascii.out);
                ASSERT_EQ(u.size(), a.size()) << where << "\n" << unicode.out << "\n" << ascii.out;
                for (std::size_t y = 0; y < u.size(); ++y) {
                    for (std::size_t x = 0; x < u[y].size(); ++x) {
                        const char32_t g = u[y][x];
                        if (g < 0x80) continue;
                        const char32_t shown = x < a[y].size() ? a[y][x] : U' ';  // trailing blanks are trimmed
                        const std::string at = where + " row " + std::to_string(y) + " column " + std::to_string(x) +
                                               ": " + utf8(g) + " shown as '" + utf8(shown) + "'\n" + unicode.out +
                                               "\n" + ascii.out;
                        if (plot_glyph(g)) {
                            EXPECT_TRUE(shown >= 0x20 && shown < 0x7F && shown != U'?') << at;
                            continue;
                        }
                        ++text_glyphs;
                        EXPECT_NE(tui::ascii_stand_in(g), '?') << "no stand-in for " << at;
                        EXPECT_EQ(shown, static_cast<char32_t>(tui::ascii_stand_in(g))) << at;
                    }
                }
            }
        }
    }
    EXPECT_GT(text_glyphs, 0) << "no view drew a glyph other than a plot's: nothing was compared";
}

}  // namespace
}  // namespace msmon::test
