// The line editor every prompt of msmon-tui uses: UTF-8 editing, the Emacs keys, history, and a cursor that
// stays on screen.
#include "tui/widgets/line_editor.hpp"

#include <gtest/gtest.h>

#include <string>

namespace msmon::tui {
namespace {

constexpr int ctrl(char c) {
    return c & 0x1F;
}

void type(LineEditor& e, const std::u32string& text) {
    for (char32_t c : text) ASSERT_TRUE(e.edit(static_cast<int>(c)));
}

TEST(LineEditor, types_and_deletes_whole_code_points_anywhere_in_the_line) {
    LineEditor e;
    e.start();
    type(e, U"层.0.fc1");
    EXPECT_EQ(e.text(), "层.0.fc1");
    for (int i = 0; i < 6; ++i) e.edit(kKeyLeft);  // before the first "."
    EXPECT_EQ(e.cursor(), 3u) << "after the 3-byte character";
    e.edit(kKeyBackspace);
    EXPECT_EQ(e.text(), ".0.fc1") << "Backspace takes the whole character, not one byte";
    type(e, U"layers");
    EXPECT_EQ(e.text(), "layers.0.fc1");
    e.edit(kKeyDelete);
    EXPECT_EQ(e.text(), "layers0.fc1");
    e.edit(kKeyHome);
    e.edit(ctrl('d'));
    EXPECT_EQ(e.text(), "ayers0.fc1");
    e.edit(kKeyEnd);
    e.edit(kKeyRight);  // past the end: stays
    EXPECT_EQ(e.cursor(), e.text().size());
}

TEST(LineEditor, emacs_keys_cut_to_the_start_to_the_end_and_the_word_before) {
    LineEditor e;
    e.start("rank 3 step 120");
    e.edit(ctrl('w'));
    EXPECT_EQ(e.text(), "rank 3 step ");
    e.edit(ctrl('w'));
    EXPECT_EQ(e.text(), "rank 3 ");
    e.edit(ctrl('a'));
    e.edit(kKeyRight);
    e.edit(ctrl('k'));
    EXPECT_EQ(e.text(), "r");
    e.edit(ctrl('e'));
    type(e, U"ank 5");
    e.edit(kKeyLeft);
    e.edit(ctrl('u'));
    EXPECT_EQ(e.text(), "5");
    EXPECT_EQ(e.cursor(), 0u);
}

TEST(LineEditor, up_and_down_walk_the_lines_entered_before_and_come_back_to_the_one_being_typed) {
    LineEditor e;
    for (const char* line : {"rank 3", "step 40", "step 40", ""}) {
        e.start(line);
        e.commit();
    }
    e.start();
    type(e, U"ki");
    e.edit(kKeyUp);
    EXPECT_EQ(e.text(), "step 40") << "the last line; repeats and empty lines are not remembered";
    e.edit(kKeyUp);
    EXPECT_EQ(e.text(), "rank 3");
    e.edit(kKeyUp);
    EXPECT_EQ(e.text(), "rank 3") << "the oldest stays";
    e.edit(kKeyDown);
    e.edit(kKeyDown);
    EXPECT_EQ(e.text(), "ki") << "back to the line being typed";
}

TEST(LineEditor, control_characters_and_special_keys_are_not_typed) {
    LineEditor e;
    e.start();
    EXPECT_FALSE(e.edit(kKeyEnter));
    EXPECT_FALSE(e.edit(kKeyEscape));
    EXPECT_FALSE(e.edit(0x1B));
    EXPECT_FALSE(e.edit(0x9B)) << "C1 CSI";
    EXPECT_FALSE(e.edit(kKeyPageDown));
    EXPECT_EQ(e.text(), "");
}

TEST(LineEditor, a_line_wider_than_the_prompt_scrolls_to_keep_the_cursor_on_screen) {
    LineEditor e;
    e.start("module.layers.12.self_attention.linear_qkv.weight");
    ScreenBuffer buf(20, 1);
    e.draw(buf, 0, 0, 20, "/", {});
    EXPECT_EQ(buf.to_text(), "/linear_qkv.weight") << "the end shows, the cursor after it";
    EXPECT_TRUE(buf.at(18, 0).style.attr & kReverse) << "the cursor cell";
    e.edit(kKeyHome);
    buf.clear();
    e.draw(buf, 0, 0, 20, "/", {});
    EXPECT_EQ(buf.to_text(), "/module.layers.12.s\u2026") << "the rest of the line is marked as cut";
    EXPECT_TRUE(buf.at(1, 0).style.attr & kReverse);
    EXPECT_EQ(buf.at(1, 0).ch, U'm');
}

}  // namespace
}  // namespace msmon::tui
