// The job's thresholds read from its config text, and the order a threshold is chosen in: a flag, the check's own
// log line, the config text, MindFormers' default.
#include "core/detect/job_thresholds.hpp"

#include <gtest/gtest.h>

#include "core/parse/job_threshold_text.hpp"

namespace msmon {
namespace {

TEST(JobThresholdText, pprint_lines_dict_text_and_yaml_give_each_key_once) {
    auto one = thresholds_in_text("                'embedding_local_norm_threshold': 270.0,");
    ASSERT_EQ(one.size(), 1u);
    EXPECT_STREQ(one[0].key, kEmbeddingThresholdKey);
    EXPECT_EQ(one[0].value, 270.0);

    auto dict = thresholds_in_text(
        "monitor_config: {'monitor_on': True, 'global_norm_spike_threshold': 3.5, "
        "'global_norm_spike_count_threshold': 2}");
    ASSERT_EQ(dict.size(), 2u);
    EXPECT_STREQ(dict[0].key, kSpikeThresholdKey);
    EXPECT_EQ(dict[0].value, 3.5);
    EXPECT_STREQ(dict[1].key, kSpikeCountThresholdKey);
    EXPECT_EQ(dict[1].value, 2.0);

    auto yaml = thresholds_in_text("  global_norm_spike_threshold: 1e1");
    ASSERT_EQ(yaml.size(), 1u);
    EXPECT_EQ(yaml[0].value, 10.0);
    auto dotted = thresholds_in_text("monitor_config.global_norm_spike_threshold = 4");
    ASSERT_EQ(dotted.size(), 1u);
    EXPECT_EQ(dotted[0].value, 4.0);
}

TEST(JobThresholdText, a_longer_name_a_missing_value_or_other_text_gives_nothing) {
    EXPECT_TRUE(thresholds_in_text("'my_global_norm_spike_threshold': 3.0").empty());
    EXPECT_TRUE(thresholds_in_text("'global_norm_spike_threshold': None").empty());
    EXPECT_TRUE(thresholds_in_text("global_norm_spike_threshold is 3").empty());
    EXPECT_TRUE(thresholds_in_text("opt_global_step: 0, skip_data_grad_norm_threshold: 3.0, is_skip: [ True]").empty());
    EXPECT_TRUE(thresholds_in_text("").empty());
}

TEST(JobThresholds, a_flag_beats_the_check_line_which_beats_the_config_text_which_beats_the_default) {
    DetectorOptions none;
    JobThresholds t(none);
    EXPECT_FALSE(t.spike()) << "no data skip seen: no spike threshold guessed";
    EXPECT_EQ(t.spike_count(), 10);
    EXPECT_FALSE(t.embedding());

    RecordBatch batch;
    put_job_threshold(batch, kSpikeThresholdKey, 5.0, JobEvidence::config_text, "worker_0.log line 7");
    put_job_threshold(batch, kSpikeThresholdKey, 4.0, JobEvidence::check_line, "worker_0.log line 15");
    put_job_threshold(batch, kSpikeThresholdKey, 6.0, JobEvidence::config_text, "worker_0.log line 90");
    ASSERT_EQ(batch.settings.size(), 1u);  // the batch keeps the check line's
    for (const auto& [k, v] : batch.settings) EXPECT_TRUE(t.learn(k, v));
    EXPECT_EQ(t.spike(), 4.0);
    // A config dump read later does not move it; among check lines the latest in file order is named, whatever
    // order they arrive in (a relaunch's new value comes later in its file).
    EXPECT_FALSE(t.learn(std::string(kJobThresholdSetting) + kSpikeThresholdKey, "7\t1\tlater.log line 1"));
    EXPECT_TRUE(t.learn(std::string(kJobThresholdSetting) + kSpikeThresholdKey, "5\t2\tworker_0.log line 31"));
    EXPECT_FALSE(t.learn(std::string(kJobThresholdSetting) + kSpikeThresholdKey, "4\t2\tworker_0.log line 20"));
    EXPECT_EQ(t.uses()[0], (ThresholdUse{kSpikeThresholdKey, 5.0, "the job's, from worker_0.log line 31"}));

    DetectorOptions flags;
    flags.global_norm_threshold = 2.5;
    flags.embedding_norm_threshold = 100;
    JobThresholds f(flags);
    for (const auto& [k, v] : batch.settings) f.learn(k, v);
    EXPECT_EQ(f.spike(), 2.5);
    EXPECT_EQ(f.embedding(), 100.0);
    EXPECT_EQ(f.uses()[0].source, "--global-norm-threshold");
    EXPECT_EQ(f.uses()[2].source, "--embedding-threshold");
}

TEST(JobThresholds, the_uses_round_trip_through_their_stored_text) {
    JobThresholds t{DetectorOptions{}};
    const auto uses = t.uses();
    ASSERT_EQ(uses.size(), 3u);
    EXPECT_FALSE(uses[2].value);
    EXPECT_EQ(decode_threshold_uses(encode_threshold_uses(uses)), uses);
}

}  // namespace
}  // namespace msmon
