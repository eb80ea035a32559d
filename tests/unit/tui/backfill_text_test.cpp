// Unit tests for tui/models/backfill_text: what the status line says while a backlog's history is read, and the
// span the charts draw as unread.
#include "tui/models/backfill_text.hpp"

#include <gtest/gtest.h>

namespace msmon::tui {
namespace {

BackfillProgress reading(std::size_t fed, std::int64_t through) {
    BackfillProgress p;
    p.active = true;
    p.files = 1000;
    p.files_fed = fed;
    p.first_step = 0;
    p.last_step = 399;
    p.history_through = through;
    p.unread_last = 398;
    p.folders = 64;
    return p;
}

TEST(BackfillText, says_how_much_history_is_in_and_which_steps) {
    EXPECT_EQ(backfill_text(reading(310, 123), true), "history: 31% \u2014 steps 0\u2013123 of 0\u2013399 on 64 ranks");
    EXPECT_EQ(backfill_text(reading(310, 123), false), "history: 31% - steps 0-123 of 0-399 on 64 ranks");
    EXPECT_EQ(backfill_text(reading(8, -1), false), "history: 0% - reading 0-399 on 64 ranks");
    EXPECT_EQ(backfill_text(reading(1000, 398), false), "history: 99% - judging the newest steps of 0-399 on 64 ranks");
    BackfillProgress done = reading(1000, 399);
    done.active = false;
    EXPECT_EQ(backfill_text(done, false), "");
}

TEST(BackfillText, the_unread_span_runs_from_the_step_after_the_history_read_to_the_last_unread_one) {
    EXPECT_EQ(unread_span(reading(310, 123)), (std::pair<std::int64_t, std::int64_t>{124, 398}));
    EXPECT_EQ(unread_span(reading(1000, 398)), std::nullopt);  // everything read: the newest steps being judged
    BackfillProgress done = reading(1000, 399);
    done.active = false;
    EXPECT_EQ(unread_span(done), std::nullopt);
}

}  // namespace
}  // namespace msmon::tui
