// Health model from the Reader: checkpoints, events, detector findings, and per-rank series maxima.
#include "tui/models/health_model.hpp"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/detect/rules.hpp"
#include "core/parse/job_threshold_text.hpp"

namespace msmon::tui {

namespace {

std::vector<StepValue> max_over_ranks(Reader& reader, const std::string& kind) {
    std::map<std::int64_t, double> by_step;
    for (const auto& rs : reader.rank_series({kind, "value", std::nullopt, 0, {}}))
        for (const auto& p : rs.points) {
            auto [it, fresh] = by_step.try_emplace(p.step, p.value);
            if (!fresh && (std::isnan(p.value) || p.value > it->second)) it->second = p.value;
        }
    std::vector<StepValue> out;
    for (const auto& [s, v] : by_step) out.push_back({s, v});
    return out;
}

}  // namespace

HealthModel collect_health(Reader& reader, const HealthModel* previous) {
    HealthModel m;
    m.checkpoints = reader.checkpoints();
    for (std::size_t i = 0; i < m.checkpoints.size(); ++i) {
        const auto& c = m.checkpoints[i];
        if (c.healthy && (!m.latest_healthy || c.step >= m.checkpoints[*m.latest_healthy].step)) m.latest_healthy = i;
    }
    if (m.checkpoints.empty()) {
        constexpr std::string_view kHealthFile = "/health_ckpts.json";
        for (const auto& issue : reader.issues(200))  // the newest first
            if (issue.path.size() >= kHealthFile.size() &&
                issue.path.compare(issue.path.size() - kHealthFile.size(), kHealthFile.size(), kHealthFile) == 0) {
                m.checkpoints_unread = issue.path + " " + issue.reason;
                break;
            }
    }
    m.events = reader.events();
    m.restarts = job_restarts(reader.run_segments(), m.events);
    for (const auto& e : m.events) {
        if (e.kind == "data_skip" && e.step) m.data_skip_steps.insert(*e.step);
        if (e.kind == "stop" || (e.kind == "error" && (!m.stop || m.stop->kind != "stop"))) m.stop = e;
    }
    for (const auto& a : reader.anomalies({})) {
        if (rule_of(a) == Rule::GlobalNormSpike) {
            m.spike_steps.insert(a.step);
            m.spike_ranks.insert(a.rank);
            m.spike_threshold = a.reference;
        } else if (rule_of(a) == Rule::EmbeddingNormHigh) {
            m.embedding_high_steps.insert(a.step);
            m.embedding_threshold = a.reference;
        }
    }
    // The thresholds in use win over the ones a finding recorded (the job's may have come after it).
    m.thresholds = reader.thresholds_used();
    for (const auto& t : m.thresholds) {
        if (t.key == kSpikeThresholdKey && t.value) m.spike_threshold = t.value;
        if (t.key == kEmbeddingThresholdKey && t.value) m.embedding_threshold = t.value;
    }
    m.global_norm = max_over_ranks(reader, "global_norm");
    m.embedding_norm = max_over_ranks(reader, "embedding_local_norm");
    // Progress per rank: the latest step of any statistic it writes, and its step time from the logs.
    const StoreCatalog cat = reader.catalog();
    std::map<int, RankProgress> ranks;
    for (int r : cat.ranks) ranks[r].rank = r;
    for (const auto& [rank, step] : reader.rank_last_steps()) ranks[rank].last_step = step;
    for (const auto& rs : reader.rank_series({"per_step_time", "value", std::nullopt, 1, {}}))
        if (!rs.points.empty()) ranks[rs.rank].step_ms = rs.points.back().value;
    AnomalyFilter stalled;
    stalled.source = "detected";
    for (const auto& a : reader.anomalies(stalled))
        if (rule_of(a) == Rule::StalledRank) ranks[a.rank].stalled = true;
    for (auto& [_, p] : ranks) m.ranks.push_back(p);
    m.checks = check_coverage(reader, previous ? &previous->checks : nullptr);  // read again on a new step only
    return m;
}

}  // namespace msmon::tui
