// An output's failures are said when they start and when they end, never once per try.
#include "core/export/write_failures.hpp"

#include <gtest/gtest.h>

namespace msmon {
namespace {

TEST(WriteFailures, said_once_when_writes_start_failing_and_once_when_they_work_again) {
    WriteFailures w("--prom-textfile", "the gauges are not written");
    EXPECT_EQ(w.outcome(""), "");
    EXPECT_EQ(w.outcome("Permission denied"), "--prom-textfile: Permission denied (the gauges are not written)");
    EXPECT_EQ(w.outcome("Permission denied"), "");
    EXPECT_EQ(w.outcome("No space left on device"), "") << "still failing: already said";
    EXPECT_EQ(w.failures(), 3u);
    EXPECT_EQ(w.last_error(), "No space left on device");
    EXPECT_EQ(w.outcome(""), "--prom-textfile: written again");
    EXPECT_EQ(w.outcome(""), "");
    EXPECT_EQ(w.last_error(), "");
    EXPECT_EQ(w.failures(), 3u) << "a count of every failure, for --json";
}

}  // namespace
}  // namespace msmon
