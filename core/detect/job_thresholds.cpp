#include "core/detect/job_thresholds.hpp"

#include "core/parse/job_threshold_text.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

constexpr std::int64_t kMindFormersSpikeCount = 10;  // MonitorConfig.global_norm_spike_count_threshold

std::string job_words(const std::string& where) {
    return "the job's, from " + where;
}

}  // namespace

JobThresholds::Learned::Learned(double v, int e, std::string w) : value(v), evidence(e), where(std::move(w)) {}

std::optional<JobThresholds::Learned> JobThresholds::Learned::decode(const std::string& text) {
    const auto a = text.find('\t'), b = a == std::string::npos ? a : text.find('\t', a + 1);
    if (b == std::string::npos) return std::nullopt;
    const auto v = parse_double(std::string_view(text).substr(0, a));
    const auto evidence = parse_int(std::string_view(text).substr(a + 1, b - a - 1));
    if (!v || !evidence) return std::nullopt;
    return Learned(*v, static_cast<int>(*evidence), text.substr(b + 1));
}

std::string JobThresholds::Learned::encode() const {
    return format_double(value) + "\t" + std::to_string(evidence) + "\t" + where;
}

// Stronger evidence wins (a config dump never overrides the check's own line); among equals the place latest in file
// order ("rank_0/info.log line 40" after "rank_0/info.log line 12", "rank_1/..." after both): a relaunch's new value
// comes later in its file, and the choice is the same whatever order the files are read in, so a restarted ingest
// stores what a clean one does.
bool JobThresholds::Learned::replaces(const Learned& before) const {
    if (evidence != before.evidence) return evidence > before.evidence;
    const auto split = [](const std::string& where) {
        const auto at = where.rfind(" line ");
        return std::pair(where.substr(0, at),
                         at == std::string::npos ? 0 : parse_int(std::string_view(where).substr(at + 6)).value_or(0));
    };
    return split(before.where) < split(where);
}

void put_job_threshold(RecordBatch& batch, const char* key, double value, JobEvidence evidence, std::string where) {
    std::string setting = std::string(kJobThresholdSetting) + key;
    const JobThresholds::Learned now(value, static_cast<int>(evidence), std::move(where));
    for (auto& [k, v] : batch.settings)
        if (k == setting) {
            const auto before = JobThresholds::Learned::decode(v);
            if (!before || now.replaces(*before)) v = now.encode();
            return;
        }
    batch.settings.emplace_back(std::move(setting), now.encode());
}

JobThresholds::JobThresholds(const DetectorOptions& flags)
    : flag_spike_(flags.global_norm_threshold),
      flag_embedding_(flags.embedding_norm_threshold),
      flag_count_(flags.global_norm_count_threshold) {}

bool JobThresholds::learn(const std::string& key, const std::string& value) {
    const std::string prefix = kJobThresholdSetting;
    if (key.rfind(prefix, 0) != 0) return false;
    const std::string name = key.substr(prefix.size());
    std::optional<Learned>* slot = name == kSpikeThresholdKey        ? &spike_
                                   : name == kSpikeCountThresholdKey ? &count_
                                   : name == kEmbeddingThresholdKey  ? &embedding_
                                                                     : nullptr;
    if (!slot) return false;
    auto learned = Learned::decode(value);
    if (!learned || (*slot && !learned->replaces(**slot))) return false;
    *slot = std::move(*learned);
    return true;
}

std::vector<std::pair<std::string, std::string>> JobThresholds::settings() const {
    std::vector<std::pair<std::string, std::string>> out;
    const std::pair<const char*, const std::optional<Learned>*> slots[] = {
        {kSpikeThresholdKey, &spike_}, {kSpikeCountThresholdKey, &count_}, {kEmbeddingThresholdKey, &embedding_}};
    for (const auto& [key, slot] : slots)
        if (*slot) out.emplace_back(std::string(kJobThresholdSetting) + key, (*slot)->encode());
    return out;
}

std::optional<double> JobThresholds::spike() const {
    if (flag_spike_) return flag_spike_;
    if (spike_) return spike_->value;
    return std::nullopt;
}

std::int64_t JobThresholds::spike_count() const {
    return flag_count_ ? *flag_count_ : count_ ? static_cast<std::int64_t>(count_->value) : kMindFormersSpikeCount;
}

std::optional<double> JobThresholds::embedding() const {
    if (flag_embedding_) return flag_embedding_;
    if (embedding_) return embedding_->value;
    return std::nullopt;
}

std::vector<ThresholdUse> JobThresholds::uses() const {
    const std::string not_seen = "; the job's not seen";
    std::vector<ThresholdUse> uses;
    uses.push_back({kSpikeThresholdKey, spike(),
                    flag_spike_ ? "--global-norm-threshold"
                    : spike_    ? job_words(spike_->where)
                                : "not checked: no --global-norm-threshold, and no data skip in the job's output"});
    uses.push_back({kSpikeCountThresholdKey, static_cast<double>(spike_count()),
                    flag_count_ ? "--global-norm-count"
                    : count_    ? job_words(count_->where)
                                : "MindFormers' default" + not_seen});
    uses.push_back({kEmbeddingThresholdKey, embedding(),
                    flag_embedding_ ? "--embedding-threshold"
                    : embedding_    ? job_words(embedding_->where)
                                    : "not checked: no --embedding-threshold, none in the job's output"});
    return uses;
}

}  // namespace msmon
