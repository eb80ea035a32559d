#include "core/detect/job_thresholds.hpp"

#include "core/parse/job_threshold_text.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

constexpr double kMindFormersSpikeThreshold = 3.0;   // MonitorConfig.global_norm_spike_threshold
constexpr std::int64_t kMindFormersSpikeCount = 10;  // MonitorConfig.global_norm_spike_count_threshold

std::string job_words(const std::string& where) {
    return "the job's, from " + where;
}

}  // namespace

void put_job_threshold(RecordBatch& batch, const char* key, double value, JobEvidence evidence, std::string where) {
    std::string setting = std::string(kJobThresholdSetting) + key;
    std::string text = format_double(value) + "\t" + std::to_string(static_cast<int>(evidence)) + "\t" + where;
    for (auto& [k, v] : batch.settings)
        if (k == setting) {
            // The batch keeps the strongest evidence; among equals a new value, else the first place it was read.
            const auto tab = v.find('\t');
            const auto before_value = parse_double(std::string_view(v).substr(0, tab));
            const auto before =
                tab == std::string::npos ? 0 : parse_int(std::string_view(v).substr(tab + 1, 1)).value_or(0);
            const auto now = static_cast<int>(evidence);
            if (now > before || (now == before && before_value != value)) v = std::move(text);
            return;
        }
    batch.settings.emplace_back(std::move(setting), std::move(text));
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
    const auto a = value.find('\t'), b = a == std::string::npos ? a : value.find('\t', a + 1);
    if (b == std::string::npos) return false;
    const auto v = parse_double(value.substr(0, a));
    const auto evidence = parse_int(value.substr(a + 1, b - a - 1));
    if (!v || !evidence) return false;
    Learned learned{*v, static_cast<int>(*evidence), value.substr(b + 1)};
    if (*slot && (*slot)->evidence > learned.evidence) return false;  // a config dump never overrides the check's line
    // The same value again (every skip line repeats it): the first place it was read stays the one named.
    if (*slot && (*slot)->evidence == learned.evidence && (*slot)->value == learned.value) return false;
    *slot = std::move(learned);
    return true;
}

double JobThresholds::spike() const {
    return flag_spike_ ? *flag_spike_ : spike_ ? spike_->value : kMindFormersSpikeThreshold;
}

std::int64_t JobThresholds::spike_count() const {
    return flag_count_ ? *flag_count_ : count_ ? static_cast<std::int64_t>(count_->value) : kMindFormersSpikeCount;
}

std::optional<double> JobThresholds::embedding() const {
    if (flag_embedding_) return flag_embedding_;
    if (embedding_) return embedding_->value;
    return std::nullopt;
}

std::string JobThresholds::spike_source() const {
    return flag_spike_ ? "--global-norm-threshold" : spike_ ? "the job's" : "MindFormers' default";
}

std::string JobThresholds::embedding_source() const {
    return flag_embedding_ ? "--embedding-threshold" : "the job's";
}

std::vector<ThresholdUse> JobThresholds::uses() const {
    const std::string not_seen = "; the job's not seen";
    std::vector<ThresholdUse> uses;
    uses.push_back({kSpikeThresholdKey, spike(),
                    flag_spike_ ? "--global-norm-threshold"
                    : spike_    ? job_words(spike_->where)
                                : "MindFormers' default" + not_seen});
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
