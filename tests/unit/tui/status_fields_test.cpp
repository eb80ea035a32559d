// Unit tests for tui/widgets/status_fields: which of the status line's fields a narrow screen keeps.
#include "tui/widgets/status_fields.hpp"

#include <gtest/gtest.h>

#include "tui/screen_buffer.hpp"

namespace msmon::tui {
namespace {

const std::string kNotice =
    "new incident: actv module.module.decoder.layers.1.mlp.linear_fc2.output became non-finite at step 35 on rank 3";

std::vector<StatusField> fields_with(const std::string& notice) {
    return {{"8 ranks", 5},     {"steps 0-52", 4},  {"inotify", 6}, {"1200 values/s", 7},
            {"2 incidents", 1}, {"0 malformed", 6}, {notice, 3}};
}

TEST(StatusFields, everything_that_fits_is_shown_in_its_order) {
    EXPECT_EQ(fit_status_fields(fields_with(""), 120, true),
              " 8 ranks | steps 0-52 | inotify | 1200 values/s | 2 incidents | 0 malformed");
}

TEST(StatusFields, the_lowest_ranked_fields_go_first_when_the_line_is_narrow) {
    EXPECT_EQ(fit_status_fields(fields_with(""), 50, true), " 8 ranks | steps 0-52 | inotify | 2 incidents");
    EXPECT_EQ(fit_status_fields(fields_with(""), 30, true), " steps 0-52 | 2 incidents");
}

TEST(StatusFields, a_notice_too_long_for_the_line_is_cut_and_the_fields_ranked_before_it_stay) {
    // The failure this was written for: a new incident's notice wider than the screen was left out, and the loop
    // had dropped the run's ranks and steps first to make room for it; the line read " 2 incidents | <folder>".
    const std::string line = fit_status_fields(fields_with(kNotice), 80, true);
    EXPECT_EQ(line.rfind(" 2 incidents | new incident: actv module.module.decoder.layers.1", 0), 0u) << line;
    EXPECT_EQ(display_width(line), 80) << line;
    EXPECT_EQ(line.substr(line.size() - 3), "\u2026") << line;
}

TEST(StatusFields, a_notice_that_fits_alone_is_whole_and_the_fields_ranked_after_it_make_room) {
    const std::string notice = "new incident: norm nan in grad_reduced at step 30, rank 1";
    EXPECT_EQ(fit_status_fields(fields_with(notice), 90, true),
              " steps 0-52 | 2 incidents | new incident: norm nan in grad_reduced at step 30, rank 1");
}

TEST(StatusFields, where_the_run_is_shows_whole_or_not_at_all) {
    // 14 columns free after the steps: the watch field (rank 6) is not cut to "inotify, da…".
    const std::vector<StatusField> fields = {{"steps 0-41", 4}, {"inotify, data 0s ago", 6}};
    EXPECT_EQ(fit_status_fields(fields, 28, true), " steps 0-41");
}

TEST(StatusFields, a_field_left_out_does_not_take_the_fields_ranked_after_it) {
    // 9 columns free after the incidents: too few to cut the notice into, enough for the ranks.
    const std::vector<StatusField> fields = {{"8 ranks", 5}, {"2 incidents", 1}, {kNotice, 3}};
    EXPECT_EQ(fit_status_fields(fields, 24, true), " 8 ranks | 2 incidents");
}

TEST(StatusFields, a_cut_needs_twelve_free_columns_and_the_ascii_mark_is_a_tilde) {
    const std::vector<StatusField> fields = {{"2 incidents", 1}, {kNotice, 3}};
    EXPECT_EQ(fit_status_fields(fields, 25, true), " 2 incidents");
    EXPECT_EQ(fit_status_fields(fields, 27, false), " 2 incidents | new inciden~");
}

TEST(StatusFields, an_answer_wider_than_the_line_is_cut_to_it_and_comes_before_the_rest) {
    // A command's answer (rank 0) is what the person is looking for: cut to the line, not left out.
    const std::vector<StatusField> fields = {{"2 incidents", 1}, {kNotice, 0}};
    EXPECT_EQ(fit_status_fields(fields, 20, false), " new incident: actv~");
    EXPECT_EQ(fit_status_fields({{"2 incidents", 1}}, 8, true), " 2 inci\u2026");
    EXPECT_EQ(fit_status_fields({}, 20, false), "");
}

}  // namespace
}  // namespace msmon::tui
