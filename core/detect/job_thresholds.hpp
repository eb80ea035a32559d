// Which threshold each of MindFormers' own checks is judged with: the flag given to msmon, else the job's own
// (what its logs and TensorBoard text say, learned while reading), else MindFormers' default. The readers put
// what they learn in the batch as store settings; DetectorSet takes them before it judges the batch's rows and
// stores what it uses ("thresholds_used"), which `msmon health` and the Health tab show.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/detect/detector_options.hpp"
#include "core/model/record_batch.hpp"
#include "core/model/threshold_use.hpp"

namespace msmon {

inline constexpr const char* kJobThresholdSetting = "job_threshold.";  // + key: "<value>\t<evidence>\t<where>"

// How sure the job's value is: the check's own log line (the value the running wrapper compares with) beats a
// config dump (which may list a check that is off).
enum class JobEvidence { config_text = 1, check_line = 2 };

// Puts what a reader learned into the batch's settings (the last of a batch wins among equal evidence).
void put_job_threshold(RecordBatch& batch, const char* key, double value, JobEvidence evidence, std::string where);

class JobThresholds {
public:
    explicit JobThresholds(const DetectorOptions& flags);
    // A setting (stored, or of the batch): true when it changed a threshold in use.
    bool learn(const std::string& key, const std::string& value);
    // None when neither a flag nor the job gives it: a job without data skip has no spike to skip, and guessing
    // MindFormers' default (3.0) flagged every step of a job whose own threshold is higher.
    std::optional<double> spike() const;
    std::int64_t spike_count() const;
    std::optional<double> embedding() const;
    std::vector<ThresholdUse> uses() const;
    // What was learned of the job, as the settings to store (the readers' batch settings are replaced by these).
    std::vector<std::pair<std::string, std::string>> settings() const;

    // One of the job's values, and where it was read ("msrun_log/worker_0.log line 15").
    struct Learned {
        double value = 0;
        int evidence = 0;
        std::string where;
        Learned(double v, int e, std::string w);
        static std::optional<Learned> decode(const std::string& text);  // "<value>\t<evidence>\t<where>"
        std::string encode() const;
        bool replaces(const Learned& before) const;
    };

private:
    std::optional<double> flag_spike_, flag_embedding_;
    std::optional<std::int64_t> flag_count_;
    std::optional<Learned> spike_, count_, embedding_;
};

}  // namespace msmon
