// Unit tests for tui/widgets/text_wrap: lines cut at spaces, and a hanging indent for the lines after the first.
#include "tui/widgets/text_wrap.hpp"

#include <gtest/gtest.h>

namespace msmon::tui {
namespace {

TEST(TextWrap, lines_break_at_the_last_space_that_fits) {
    const std::vector<std::string> expected = {"collecting since step 0:", "collected 50 of 3"};
    EXPECT_EQ(wrap_text("collecting since step 0: collected 50 of 3", 24), expected);
}

TEST(TextWrap, an_indent_starts_every_line_after_the_first_and_keeps_them_within_the_width) {
    const auto lines = wrap_text("(takes effect while training only with DYNAMIC_MONITOR=True)", 30, 2);
    const std::vector<std::string> expected = {"(takes effect while training", "  only with",
                                               "  DYNAMIC_MONITOR=True)"};
    EXPECT_EQ(lines, expected);
    const std::vector<std::string> whole = {"fits"};
    EXPECT_EQ(wrap_text("fits", 30, 2), whole);
}

}  // namespace
}  // namespace msmon::tui
