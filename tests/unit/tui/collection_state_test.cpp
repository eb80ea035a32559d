// The config view's collection line, from collected steps and the config on disk.
#include "tui/models/collection_state.hpp"

#include <gtest/gtest.h>

namespace msmon::tui {
namespace {

using json = nlohmann::ordered_json;

TEST(CollectionState, counts_the_run_after_the_save_against_collect_times) {
    const json on = json::parse(R"({"dynamic_on": true, "collect_times": 5})");
    // Steps 10..12 were an older collection; after our save at newest step 12, steps 40..42 are the new one.
    const std::vector<std::int64_t> steps = {42, 41, 40, 12, 11, 10};
    const auto s = describe_collection(steps, on, 12, std::nullopt);
    EXPECT_EQ(s.phase, CollectionState::Phase::collecting);
    EXPECT_EQ(s.since_step, 40);
    EXPECT_EQ(s.collected, 3);
    EXPECT_EQ(s.text, "collecting since step 40: collected 3 of 5, latest step 42");
}

TEST(CollectionState, waits_for_the_trainer_until_new_steps_arrive) {
    const json on = json::parse(R"({"dynamic_on": true, "collect_times": 5})");
    const auto s = describe_collection({12, 11}, on, 12, std::nullopt);
    EXPECT_EQ(s.phase, CollectionState::Phase::waiting);
    EXPECT_NE(s.text.find("DYNAMIC_MONITOR=True"), std::string::npos);
}

TEST(CollectionState, a_write_back_reads_as_finished_with_its_time_and_step_interval_spacing) {
    const json off = json::parse(R"({"dynamic_on": false, "collect_times": 3, "step_interval": 2})");
    const auto s = describe_collection({24, 22, 20, 9}, off, std::nullopt, std::string("14:02:11.000"));
    EXPECT_EQ(s.phase, CollectionState::Phase::finished);
    EXPECT_EQ(
        s.text,
        "collection finished at step 24? msprobe set dynamic_on → false at 14:02:11.000 (steps 20-24, 3 collected)");
    EXPECT_EQ(describe_collection({}, off, std::nullopt, std::nullopt).phase, CollectionState::Phase::no_data);
    EXPECT_EQ(describe_collection({5, 4}, off, std::nullopt, std::nullopt).phase, CollectionState::Phase::idle);
}

TEST(CollectionState, stop_early_counts_one_step) {
    const json stop = json::parse(R"({"dynamic_on": true, "collect_times": 0})");
    EXPECT_EQ(describe_collection({7}, stop, 6, std::nullopt).text,
              "collecting since step 7: collected 1 of 1, latest step 7");
}

// `msmon config enable --collect-times 3` from a shell (not this editor's save): the new collection's first step is
// in, 42 steps after the previous collection's last. A gap wider than step_interval ends a collection.
TEST(CollectionState, a_collection_started_elsewhere_counts_from_the_gap_before_it) {
    const json on = json::parse(R"({"dynamic_on": true, "collect_times": 3})");
    EXPECT_EQ(describe_collection({105, 63, 62, 61, 60, 59}, on, std::nullopt, std::nullopt).text,
              "collecting since step 105: collected 1 of 3, latest step 105");
    const json off = json::parse(R"({"dynamic_on": false, "collect_times": 3})");
    EXPECT_EQ(describe_collection({107, 106, 105, 63, 62}, off, std::nullopt, std::string("14:02:11.000")).text,
              "collection finished at step 107? msprobe set dynamic_on → false at 14:02:11.000 (steps 105-107, 3 "
              "collected)");
}

}  // namespace
}  // namespace msmon::tui
