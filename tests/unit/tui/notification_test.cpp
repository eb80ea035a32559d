// The bytes of a notification: the bell, OSC 9 and OSC 777, tmux's passthrough; text from the monitored files
// can neither end the sequence early nor start one of its own.
#include "tui/notification.hpp"

#include <gtest/gtest.h>

namespace msmon::tui {
namespace {

TEST(Notification, plain_terminal_gets_the_bell_then_osc_9_and_osc_777) {
    EXPECT_EQ(notification_bytes("nan at step 3", {true, true, false}),
              "\a\x1b]9;msmon: nan at step 3\a\x1b]777;notify;msmon;nan at step 3\a");
    EXPECT_EQ(notification_bytes("x", {true, false, false}), "\a");
    EXPECT_EQ(notification_bytes("x", {false, true, false}), "\x1b]9;msmon: x\a\x1b]777;notify;msmon;x\a");
    EXPECT_EQ(notification_bytes("x", {false, false, true}), "");
}

TEST(Notification, inside_tmux_each_osc_is_wrapped_for_passthrough_with_its_escapes_doubled) {
    EXPECT_EQ(notification_bytes("x", {false, true, true}),
              "\x1bPtmux;\x1b\x1b]9;msmon: x\a\x1b\\\x1bPtmux;\x1b\x1b]777;notify;msmon;x\a\x1b\\");
}

TEST(Notification, control_bytes_in_the_text_become_visible_and_the_text_is_cut_at_200_bytes) {
    const std::string hostile = "layers.0.\x1b]0;pwned\x07\x1b\\\x9c\xc2\x9c.weight";
    const std::string bytes = notification_bytes(hostile, {false, true, false});
    // Exactly the two sequences' own ESCs and BELs, nothing from the text.
    std::size_t esc = 0, bel = 0;
    for (char c : bytes) {
        esc += c == '\x1b';
        bel += c == '\a';
    }
    EXPECT_EQ(esc, 2u) << bytes;
    EXPECT_EQ(bel, 2u) << bytes;
    EXPECT_NE(bytes.find("layers.0.\\x1B]0;pwned\\x07"), std::string::npos) << bytes;
    const std::string long_text(1000, 'a');
    const std::string cut = notification_bytes(long_text + "\xe2\x80\xa6", {false, true, false});
    EXPECT_EQ(cut,
              "\x1b]9;msmon: " + std::string(200, 'a') + "\a\x1b]777;notify;msmon;" + std::string(200, 'a') + "\a");
    // A cut never splits a character.
    const std::string wide = notification_bytes(std::string(199, 'a') + "\xe4\xb8\xad", {false, true, false});
    EXPECT_EQ(wide.substr(0, 4 + 7 + 199 + 1), "\x1b]9;msmon: " + std::string(199, 'a') + "\a");
}

}  // namespace
}  // namespace msmon::tui
