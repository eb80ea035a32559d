// Which incidents are new: an incident once, whatever it grows into; the backlog never; msprobe's noise never;
// the incident as JSON (ASCII only, non-finite values as null beside their text).
#include "core/detect/new_incidents.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

namespace msmon {
namespace {

AnomalyRecord anomaly(const char* rule, int rank, std::int64_t step, double score, const char* name = "layers.0.fc1") {
    AnomalyRecord a;
    a.source = "detected";
    a.rule = rule;
    a.rank = rank;
    a.step = step;
    a.kind = "grad_reduced";
    a.name = name;
    a.op = "norm";
    a.score = score;
    a.call_id = 0;
    return a;
}

std::vector<std::size_t> take(NewIncidents& news, const std::vector<AnomalyRecord>& all) {
    return news.take(all, group_incidents(all));
}

TEST(NewIncidents, an_incident_is_news_once_whatever_it_grows_into) {
    NewIncidents news;
    std::vector<AnomalyRecord> all = {anomaly("NonFinite", 3, 11, 100)};
    EXPECT_EQ(take(news, all).size(), 1u);
    all.push_back(anomaly("NonFinite", 0, 11, 100));  // the same step: the same incident, grown
    all.push_back(anomaly("NonFinite", 1, 12, 100));  // msmon's detections chain into the step before
    EXPECT_TRUE(take(news, all).empty());
    all.push_back(anomaly("Jump", 2, 500, 80));  // far later: another event
    const auto fresh = take(news, all);
    ASSERT_EQ(fresh.size(), 1u);
    EXPECT_EQ(group_incidents(all)[fresh[0]].first_step, 500);
    EXPECT_TRUE(take(news, all).empty());
}

TEST(NewIncidents, the_backlog_and_msprobe_noise_are_never_news) {
    NewIncidents news;
    std::vector<AnomalyRecord> all = {anomaly("Jump", 0, 5, 80)};
    news.prime(all);
    EXPECT_TRUE(take(news, all).empty());
    AnomalyRecord noise = anomaly("AnomalyTurbulence", 0, 40, 1.5);
    noise.source = "msprobe";
    all.push_back(noise);
    EXPECT_TRUE(take(news, all).empty()) << "a mean near zero is not an incident worth a bell";
    // Noise first, then a NaN at the same step: the incident is news when it becomes worth it.
    all.push_back(anomaly("NonFinite", 0, 40, 100));
    EXPECT_EQ(take(news, all).size(), 1u);
}

// Following a job, a new incident settles before it is announced: the log's global-norm line of the step can come
// before the CSV rows of the tensor where the NaN began, and the announcement should name where it began.
TEST(NewIncidents, a_new_incident_is_announced_once_settled_as_it_stands_then) {
    using Clock = NewIncidents::Clock;
    NewIncidents news(std::chrono::seconds(3));
    const Clock::time_point t0 = Clock::now();
    AnomalyRecord symptom = anomaly("GlobalNormSpike", 0, 35, 50, "");
    symptom.kind = "global_norm";
    std::vector<AnomalyRecord> all = {symptom};
    EXPECT_TRUE(news.take(all, group_incidents(all), t0).empty());
    EXPECT_TRUE(news.pending());
    all.push_back(anomaly("NonFinite", 3, 35, 100, "layers.1.fc2"));  // the origin, a second later
    EXPECT_TRUE(news.take(all, group_incidents(all), t0 + std::chrono::seconds(1)).empty());
    const auto incidents = group_incidents(all);
    const auto fresh = news.take(all, incidents, t0 + std::chrono::seconds(3));
    ASSERT_EQ(fresh.size(), 1u) << "settled 3 s after its first sight, not after the origin's";
    const AnomalyRecord& origin = all[incidents[fresh[0]].origin];
    EXPECT_EQ(origin.rule, "NonFinite");
    EXPECT_EQ(origin.rank, 3);
    EXPECT_FALSE(news.pending());
    EXPECT_TRUE(news.take(all, incidents, t0 + std::chrono::seconds(10)).empty()) << "once";
}

// Where reading stands holds a settled incident back while something before its origin may still come: ingest not
// yet quiet since the settle ended, a finding of its step held for its rank's next step, a rank not yet at its step.
// kMaxSettle after its first sight it is announced as it stands.
TEST(NewIncidents, a_settled_incident_waits_for_reading_to_reach_its_step_and_at_most_kmaxsettle) {
    using Clock = NewIncidents::Clock;
    using std::chrono::seconds;
    NewIncidents news(seconds(3));
    const Clock::time_point t0 = Clock::now();
    std::vector<AnomalyRecord> all = {anomaly("NonFinite", 0, 11, 100)};  // rank 0's reduced gradient: a symptom
    ReadProgress p;
    p.quiet_at = t0 + seconds(4);
    p.all_ranks_at = 10;  // rank 3 writes behind
    EXPECT_TRUE(news.take(all, group_incidents(all), t0, &p).empty());
    EXPECT_TRUE(news.take(all, group_incidents(all), t0 + seconds(4), &p).empty()) << "a rank is not at step 11";
    EXPECT_GE(*news.next_due(), t0 + seconds(4)) << "looked at again later, not at once";
    p.all_ranks_at = 11;
    p.held_from_step = 11;  // rank 3's activations of step 11 wait for its step 12
    EXPECT_TRUE(news.take(all, group_incidents(all), t0 + seconds(5), &p).empty()) << "a finding of step 11 is held";
    p.held_from_step = 12;
    p.quiet_at = t0 + seconds(2);
    EXPECT_TRUE(news.take(all, group_incidents(all), t0 + seconds(5), &p).empty()) << "not quiet since the settle";
    all.push_back(anomaly("NonFinite", 3, 11, 100));
    all.back().kind = "actv";
    p.quiet_at = t0 + seconds(5);
    const auto incidents = group_incidents(all);
    const auto fresh = news.take(all, incidents, t0 + seconds(5), &p);
    ASSERT_EQ(fresh.size(), 1u);
    EXPECT_EQ(all[incidents[fresh[0]].origin].rank, 3) << "named where it began";
    // Another incident whose step a rank never reaches: announced kMaxSettle after its first sight.
    all.push_back(anomaly("Jump", 1, 400, 80));
    p.all_ranks_at = 300;
    EXPECT_TRUE(news.take(all, group_incidents(all), t0 + seconds(10), &p).empty());
    EXPECT_TRUE(news.take(all, group_incidents(all), t0 + seconds(39), &p).empty());
    EXPECT_EQ(news.take(all, group_incidents(all), t0 + seconds(10) + kMaxSettle, &p).size(), 1u);
}

TEST(NewIncidents, json_is_ascii_and_keeps_hostile_names_and_non_finite_values_exact) {
    const std::string hostile = "layers.0.$(touch x);`y`\x1b]0;t\x07\xe4\xb8\xad\xff.weight";
    AnomalyRecord a = anomaly("NonFinite", 3, 11, 100, hostile.c_str());
    a.value = std::nan("");
    a.reference = 0.5;
    const std::vector<AnomalyRecord> all = {a};
    const auto incidents = group_incidents(all);
    const std::string text = incident_json(all, incidents[0], {"/data/job"});
    for (unsigned char c : text) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << int(c);
    const auto j = nlohmann::json::parse(text);
    EXPECT_TRUE(j["value"].is_null());
    EXPECT_EQ(j["value_text"], "nan");
    EXPECT_EQ(j["reference"], 0.5);
    EXPECT_EQ(j["step"], 11);
    EXPECT_EQ(j["rank"], 3);
    EXPECT_EQ(j["job"], "/data/job");
    // The valid UTF-8 and the shell text arrive as they were; the one invalid byte is replaced.
    const std::string module = j["module"];
    EXPECT_EQ(module.substr(0, hostile.size() - 8), hostile.substr(0, hostile.size() - 8));
    EXPECT_NE(module.find("\xe4\xb8\xad"), std::string::npos);
    EXPECT_NE(module.find("\xef\xbf\xbd.weight"), std::string::npos);

    const std::string headline = incident_headline(all, incidents[0], 60);
    EXPECT_LE(headline.size(), 60u);
    EXPECT_EQ(headline.find('\x1b'), std::string::npos);
    EXPECT_EQ(headline.substr(0, 39), "norm nan in grad_reduced at step 11, ra");
}

}  // namespace
}  // namespace msmon
