// StallWatch on a clock the test drives: ranks writing a step one after another are not stalls, even when the writer
// pauses between two ranks' files of one step (CI's sanitized demo: a pause of seconds under load flagged rank 3);
// a rank that others leave two steps behind is.
#include "core/detect/stall_watch.hpp"

#include <gtest/gtest.h>

namespace msmon::test {
namespace {

using Clock = StallWatch::Clock;
using std::chrono::milliseconds;

// 4 ranks write steps 0..last every 100 ms, rank by rank; returns the time of the last write.
Clock::time_point write_steps(StallWatch& w, Clock::time_point t, std::int64_t first, std::int64_t last,
                              int ranks = 4) {
    for (std::int64_t s = first; s <= last; ++s)
        for (int r = 0; r < ranks; ++r) {
            t += milliseconds(25);
            w.advance(r, 100 + r, s, t);
        }
    return t;
}

TEST(StallWatch, a_writer_paused_between_two_ranks_files_of_one_step_is_no_stall) {
    const DetectorOptions options;  // StallWatch keeps a reference
    StallWatch w{options};
    w.go_live();
    Clock::time_point t = write_steps(w, Clock::time_point{}, 0, 20);
    // Step 21: ranks 0-2 are written, then the writer is held back for 3 s (30 step times) before rank 3.
    for (int r = 0; r < 3; ++r) w.advance(r, 100 + r, 21, t += milliseconds(25));
    std::vector<AnomalyRecord> out;
    w.judge(t + milliseconds(3000), out);
    EXPECT_TRUE(out.empty()) << out.front().message;
    w.advance(3, 103, 21, t + milliseconds(3000));
    write_steps(w, t + milliseconds(3000), 22, 30);
    w.judge(t + milliseconds(4000), out);
    EXPECT_TRUE(out.empty());
}

TEST(StallWatch, a_rank_the_others_leave_two_steps_behind_is_stalled_once) {
    const DetectorOptions options;  // StallWatch keeps a reference
    StallWatch w{options};
    w.go_live();
    Clock::time_point t = write_steps(w, Clock::time_point{}, 0, 20);
    // Rank 2 writes nothing after step 20; the others go on.
    for (std::int64_t s = 21; s <= 40; ++s)
        for (int r : {0, 1, 3}) w.advance(r, 100 + r, s, t += milliseconds(33));
    std::vector<AnomalyRecord> out;
    w.judge(t, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].rule, "StalledRank");
    EXPECT_EQ(out[0].rank, 2);
    EXPECT_EQ(out[0].step, 20);
    w.judge(t + milliseconds(500), out);
    EXPECT_EQ(out.size(), 1u) << "reported once per step it stalled at";
}

TEST(StallWatch, a_job_that_stops_as_a_whole_has_no_stalled_rank) {
    const DetectorOptions options;  // StallWatch keeps a reference
    StallWatch w{options};
    w.go_live();
    const Clock::time_point t = write_steps(w, Clock::time_point{}, 0, 20);
    std::vector<AnomalyRecord> out;
    w.judge(t + milliseconds(60000), out);
    EXPECT_TRUE(out.empty());
}

// msprobe's dynamic collection: steps 0-20 collected, then nothing for 25 s, then steps 60-80, rank 2 resuming 0.6 s
// after the others. Every rank paused: no stall.
TEST(StallWatch, a_pause_of_every_rank_between_two_collections_is_no_stall_even_with_a_rank_resuming_late) {
    const DetectorOptions options;  // StallWatch keeps a reference
    StallWatch w{options};
    w.go_live();
    Clock::time_point t = write_steps(w, Clock::time_point{}, 0, 20);
    std::vector<AnomalyRecord> out;
    w.judge(t + milliseconds(25000), out);
    t += milliseconds(25000);
    for (int r : {0, 1, 3}) w.advance(r, 100 + r, 60, t += milliseconds(10));
    for (int r : {0, 1, 3}) w.advance(r, 100 + r, 61, t += milliseconds(100));
    w.judge(t + milliseconds(300), out);
    w.advance(2, 102, 61, t += milliseconds(400));  // 0.6 s after the others resumed
    write_steps(w, t, 62, 80);
    w.judge(t + milliseconds(200), out);
    EXPECT_TRUE(out.empty()) << out.front().message;
}

// The same pause, but rank 2 does not resume: stalled, its time counted from the others' resumption.
TEST(StallWatch, a_rank_that_does_not_resume_after_a_pause_is_stalled_counted_from_the_others_resumption) {
    const DetectorOptions options;  // StallWatch keeps a reference
    StallWatch w{options};
    w.go_live();
    Clock::time_point t = write_steps(w, Clock::time_point{}, 0, 20);
    t += milliseconds(25000);
    const Clock::time_point resumed = t;
    for (std::int64_t s = 60; s <= 80; ++s)
        for (int r : {0, 1, 3}) w.advance(r, 100 + r, s, t += milliseconds(33));
    std::vector<AnomalyRecord> out;
    w.judge(t, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].rank, 2);
    EXPECT_EQ(out[0].step, 20);
    EXPECT_NEAR(out[0].value, std::chrono::duration<double>(t - resumed).count(), 0.05) << out[0].message;
    EXPECT_NE(out[0].message.find("since other ranks went past it"), std::string::npos) << out[0].message;
}

}  // namespace
}  // namespace msmon::test
