// Which built-in terminfo description stands in for a TERM the node cannot describe.
#include <gtest/gtest.h>

#include <string>

#include "tui/terminfo_fallback.hpp"

namespace msmon::tui {
namespace {

std::string stand_in(const char* term) {
    const TerminfoBlob* b = stand_in_for(term);
    return b ? b->name : "";
}

TEST(TerminfoStandIn, each_family_gets_its_closest_description_and_an_unknown_one_none) {
    EXPECT_EQ(stand_in("xterm-256color"), "xterm-256color");
    EXPECT_EQ(stand_in("xterm"), "xterm");
    EXPECT_EQ(stand_in("xterm-kitty"), "xterm-256color");
    EXPECT_EQ(stand_in("alacritty"), "xterm-256color");
    EXPECT_EQ(stand_in("rxvt-unicode-256color"), "xterm-256color");
    EXPECT_EQ(stand_in("screen.xterm-256color"), "screen-256color");
    EXPECT_EQ(stand_in("screen"), "screen");
    EXPECT_EQ(stand_in("screen-bce"), "screen-256color");
    EXPECT_EQ(stand_in("tmux-direct"), "tmux-256color");
    EXPECT_EQ(stand_in("linux-16color"), "linux");
    EXPECT_EQ(stand_in("vt220"), "vt100");
    EXPECT_EQ(stand_in("weird-term"), "");
    EXPECT_EQ(stand_in("dumb"), "");
    // Every blob is a compiled terminfo file: the magic number of the legacy or the extended-number format.
    ASSERT_EQ(builtin_terminfo().size(), 8u);
    for (const TerminfoBlob& b : builtin_terminfo()) {
        ASSERT_GT(b.size, 12u) << b.name;
        const int magic = b.data[0] | (b.data[1] << 8);
        EXPECT_TRUE(magic == 0432 || magic == 01036) << b.name << " " << magic;
    }
}

}  // namespace
}  // namespace msmon::tui
