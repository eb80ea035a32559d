// A key override moves a binding and its help label; a key the table does not bind, one taken there, or one valid
// everywhere is refused with the reason.
#include "tui/key_overrides.hpp"

#include <gtest/gtest.h>

namespace msmon::tui {
namespace {

KeyTable table() {
    return {{{'w'}, "w", "x axis", [] { return Reaction::redraw; }},
            {{kKeyLeft, 'h'}, "h/Left", "pan left", [] { return Reaction::reload; }},
            {{'b'}, "b", "band", [] { return Reaction::none; }}};
}

TEST(KeyOverrides, a_binding_moves_with_its_label) {
    KeyTable t = table();
    std::string error;
    ASSERT_TRUE(rebind_key(t, 'w', 'W', {}, error)) << error;
    ASSERT_TRUE(rebind_key(t, 'h', 'H', {}, error)) << error;
    EXPECT_EQ(t[0].keys, std::vector<int>{'W'});
    EXPECT_EQ(t[0].label, "W");
    EXPECT_EQ(t[1].keys, (std::vector<int>{kKeyLeft, 'H'}));
    EXPECT_EQ(t[1].label, "H/Left");
    Reaction r = Reaction::none;
    EXPECT_FALSE(dispatch(t, 'w', r)) << "the old key does nothing";
    EXPECT_TRUE(dispatch(t, 'W', r));
    EXPECT_EQ(r, Reaction::redraw);
}

TEST(KeyOverrides, refusals_say_why) {
    KeyTable t = table();
    const KeyTable global = {{{'q'}, "q", "quit", [] { return Reaction::none; }}};
    std::string error;
    EXPECT_FALSE(rebind_key(t, 'z', 'Z', {}, error));
    EXPECT_EQ(error, "no key 'z' to move there");
    EXPECT_FALSE(rebind_key(t, 'w', 'b', {}, error));
    EXPECT_EQ(error, "'b' is taken there");
    EXPECT_FALSE(rebind_key(t, 'w', 'q', {&global}, error));
    EXPECT_EQ(error, "'q' is a key valid everywhere");
    std::string view;
    int from = 0, to = 0;
    EXPECT_FALSE(parse_key_override("chart:Enter", "x", view, from, to, error));
    EXPECT_FALSE(parse_key_override("chart:w", "WW", view, from, to, error));
    EXPECT_TRUE(parse_key_override("chart:w", "W", view, from, to, error));
    EXPECT_EQ(view, "chart");
    EXPECT_EQ(from, 'w');
    EXPECT_EQ(to, 'W');
}

}  // namespace
}  // namespace msmon::tui
