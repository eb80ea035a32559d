// The MindFormers side of `msmon simulate`: every step is planned first (faults, data skip, restarts,
// checkpoints), then each rank's records are rendered in the logger's exact text and written as Python's
// logging writes them: one write per record, RotatingFileHandler rollover by rename, rank 0's health JSON
// rewritten whole.
#include "core/sim/mindformers_simulator.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <utility>

#include "core/log/logging.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

// The simulated job's yaml: monitor_config, CheckpointMonitor, logger (spec §4.1, §5.2, §1.2, §7.1).
constexpr double kSpikeThreshold = 3.0;        // global_norm_spike_threshold
constexpr int kSpikeCountThreshold = 2;        // global_norm_spike_count_threshold
constexpr double kEmbeddingThreshold = 270.0;  // embedding_local_norm_threshold
constexpr double kStopSpike = 100;             // gradient factor of the spikes a stop@ fault implies
constexpr int kBackupCount = 5;                // RotatingFileHandler backupCount
constexpr int kEpochs = 2;
constexpr int kMicroBatches = 2;
constexpr const char* kCkptPrefix = "llama3_1_8b";
constexpr double kLrMax = 1e-5, kLrMin = 1e-6;
constexpr double kFlopsPerNpuStep = 2.99e14;  // about 170.7 TFLOPS per NPU at 1752 ms

// ---- number text exactly as Python and numpy print it ----

std::string f32_text(float v, std::chars_format fmt, int precision = -1) {
    char buf[128];
    const auto r = precision < 0 ? std::to_chars(buf, buf + sizeof buf, v, fmt)
                                 : std::to_chars(buf, buf + sizeof buf, v, fmt, precision);
    return std::string(buf, r.ptr);
}

std::string non_finite_text(double v) {
    return std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
}

// str(np.float32(v)): shortest digits, positional in [1e-4, 1e16) with at least one decimal, else scientific.
std::string np_scalar(float v) {
    if (!std::isfinite(v)) return non_finite_text(v);
    const double a = std::fabs(static_cast<double>(v));
    if (a == 0 || (a >= 1e-4 && a < 1e16)) {
        std::string s = f32_text(v, std::chars_format::fixed);
        if (s.find('.') == std::string::npos) s += ".0";
        return s;
    }
    return f32_text(v, std::chars_format::scientific);
}

// One float32 element as np.array2string prints it (precision 8, floatmode maxprec): "47.329006", "1.",
// "1.e-05".
std::string np_element(float v) {
    if (!std::isfinite(v)) return non_finite_text(v);
    const double a = std::fabs(static_cast<double>(v));
    const bool scientific = a != 0 && (a >= 1e8 || a < 1e-4);
    std::string s = f32_text(v, scientific ? std::chars_format::scientific : std::chars_format::fixed);
    const auto e = scientific ? s.find('e') : s.size();
    const auto dot = s.find('.');
    if (dot != std::string::npos && e - dot - 1 > 8) {  // more than 8 decimals: round to 8, trim zeros
        s = f32_text(v, scientific ? std::chars_format::scientific : std::chars_format::fixed, 8);
        const auto e8 = scientific ? s.find('e') : s.size();
        std::size_t keep = e8;
        while (keep > 0 && s[keep - 1] == '0') --keep;
        s.erase(keep, e8 - keep);
        return s;
    }
    if (dot == std::string::npos) s.insert(e, ".");
    return s;
}

std::string np_array1(float v) {
    return "[" + np_element(v) + "]";
}

// A float32 vector as numpy prints a wide-ranged array: scientific, equal digits, wrapped at 75 columns.
std::string np_array_scientific(const std::vector<float>& values) {
    int digits = 0;
    for (float v : values) {
        if (!std::isfinite(v)) continue;
        const std::string s = f32_text(v, std::chars_format::scientific);
        const auto dot = s.find('.'), e = s.find('e');
        if (dot != std::string::npos) digits = std::max(digits, static_cast<int>(e - dot - 1));
    }
    digits = std::min(digits, 8);
    std::vector<std::string> words;
    std::size_t width = 0;
    for (float v : values) {
        words.push_back(std::isfinite(v) ? f32_text(v, std::chars_format::scientific, digits)
                                         : non_finite_text(v));
        width = std::max(width, words.back().size());
    }
    std::string out = "[", line = "[";
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::string word = std::string(width - words[i].size(), ' ') + words[i];
        const std::size_t tail = i + 1 == words.size() ? 1 : 0;  // the closing bracket
        if (i > 0 && line.size() + 1 + word.size() + tail > 75) {
            out += "\n ";
            line = " ";
        } else if (i > 0) {
            out += ' ';
            line += ' ';
        }
        out += word;
        line += word;
    }
    return out + "]";
}

// Python's "%*.*f" (and f"{v:5.6f}"): nan and inf as words, right-aligned to the width.
std::string py_fixed(double v, int width, int precision) {
    char buf[64];
    if (std::isfinite(v))
        std::snprintf(buf, sizeof buf, "%*.*f", width, precision, v);
    else
        std::snprintf(buf, sizeof buf, "%*s", width, non_finite_text(v).c_str());
    return buf;
}

// str(datetime.timedelta(seconds=n)): "6:19:18", "1 day, 3:35:10", "25 days, 2:07:41".
std::string timedelta_text(std::int64_t seconds) {
    const std::int64_t days = seconds / 86400, rest = seconds % 86400;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(rest / 3600),
                  static_cast<long long>(rest / 60 % 60), static_cast<long long>(rest % 60));
    if (days == 0) return buf;
    return std::to_string(days) + (days == 1 ? " day, " : " days, ") + buf;
}

std::string printf_text(const char* fmt, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

// ---- deterministic noise: a hash of (seed, rank, step, channel), independent of the order of writing ----

std::uint64_t mix64(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

double uniform01(std::uint64_t seed, int rank, std::int64_t step, int channel) {
    std::uint64_t h = mix64(seed);
    h = mix64(h ^ static_cast<std::uint64_t>(rank + 1));
    h = mix64(h ^ static_cast<std::uint64_t>(step));
    h = mix64(h ^ static_cast<std::uint64_t>(channel));
    return (static_cast<double>(h >> 11) + 0.5) * 0x1.0p-53;
}

// A standard normal sample, clamped to ±3 so healthy values never cross the thresholds by chance.
double gauss(std::uint64_t seed, int rank, std::int64_t step, int channel) {
    const double u1 = uniform01(seed, rank, step, 2 * channel),
                 u2 = uniform01(seed, rank, step, 2 * channel + 1);
    const double g = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return std::clamp(g, -3.0, 3.0);
}

enum Channel {
    ch_global_norm = 1,
    ch_loss,
    ch_step_time,
    ch_warmup,
    ch_rank_loss,
    ch_lbl,
    ch_adam,
    ch_weight,
    ch_linearity,
    ch_save_time,
    ch_param = 100
};

float lr_at(std::int64_t opt_step, std::int64_t warmup, std::int64_t total) {
    if (opt_step < warmup)
        return static_cast<float>(kLrMax * static_cast<double>(opt_step) / static_cast<double>(warmup));
    const double progress = std::min(1.0, static_cast<double>(opt_step - warmup) /
                                              static_cast<double>(std::max<std::int64_t>(1, total - warmup)));
    return static_cast<float>(kLrMin +
                              0.5 * (kLrMax - kLrMin) * (1 + std::cos(3.141592653589793 * progress)));
}

// ---- the toy model: a two-layer llama split over the pipeline stages ----

struct MfParam {
    std::string name;
    std::int64_t size;
    double grad_norm;  // L2 norm of its local gradient early in training
    bool monitored;    // TrainingStateMonitor target: local_norm/<name> is logged
};

std::vector<MfParam> layer_params(int layer) {
    const std::string p = "model.layers." + std::to_string(layer) + ".";
    return {{p + "attention_norm.weight", 4096, 0.06, true},
            {p + "attention.wq.weight", 16777216, 1.0, true},
            {p + "attention.wk.weight", 4194304, 0.55, false},
            {p + "attention.wv.weight", 4194304, 0.7, false},
            {p + "attention.wo.weight", 16777216, 1.6, false},
            {p + "ffn_norm.weight", 4096, 0.05, false},
            {p + "feed_forward.w1.weight", 58720256, 2.4, true},
            {p + "feed_forward.w2.weight", 58720256, 2.0, false},
            {p + "feed_forward.w3.weight", 58720256, 2.3, false}};
}

// Stage 0 holds the embedding (first in norm_size, as get_embedding_info expects); the last stage the head.
std::vector<MfParam> stage_params(int stage, int stages) {
    std::vector<MfParam> out;
    if (stage == 0) {
        out.push_back({"model.tok_embeddings.embedding_weight", 131072000, 12.0, false});
        for (auto& p : layer_params(0)) out.push_back(p);
    }
    if (stage == stages - 1) {
        for (auto& p : layer_params(1)) out.push_back(p);
        out.push_back({"model.norm_out.weight", 4096, 0.08, false});
        out.push_back({"lm_head.weight", 131072000, 9.0, false});
    }
    return out;
}

int stage_of(int rank, const MindFormersPlan& plan) {
    return rank < plan.ranks / plan.pipeline_stages ? 0 : plan.pipeline_stages - 1;
}

// What one rank computes in one step.
struct RankStep {
    std::vector<float> sum_squares;  // per stage parameter (the wrapper's local_norm output)
    float embedding = 0;             // stage 0: the embedding's entry of sum_squares
    float device_local_norm = 0;
    float micro_loss[kMicroBatches] = {0, 0};
    float loss = 0;  // what MFLossMonitor prints: 0 off the last stage
    float device_accum_loss = 0;
};

RankStep rank_step(const MfPlannedStep& st, int rank, const std::vector<MfParam>& params, bool last_stage,
                   std::uint64_t seed) {
    RankStep r;
    const double g = static_cast<double>(st.step);
    const double decay = std::sqrt(0.83 + 0.62 * std::exp(-g / 100.0));
    const bool nan_here = st.nan_on(rank);
    double total = 0;
    for (std::size_t i = 0; i < params.size(); ++i) {
        const double norm = params[i].grad_norm * decay *
                            (1 + 0.03 * gauss(seed, rank, st.step, ch_param + static_cast<int>(i))) *
                            st.spike;
        const float ss = nan_here ? std::nanf("") : static_cast<float>(norm * norm);
        r.sum_squares.push_back(ss);
        total += ss;
    }
    r.device_local_norm = static_cast<float>(std::sqrt(total));
    if (!params.empty() && params[0].size == 131072000 &&
        params[0].name.find("embedding") != std::string::npos)
        r.embedding = r.sum_squares[0];
    if (last_stage) {
        const double loss = st.loss + 0.02 * gauss(seed, rank, st.step, ch_rank_loss);
        r.micro_loss[0] = static_cast<float>(loss * 1.0017);
        r.micro_loss[1] = static_cast<float>(loss * 0.9983);
        if (nan_here) r.micro_loss[0] = r.micro_loss[1] = std::nanf("");
        r.device_accum_loss = r.micro_loss[0] + r.micro_loss[1];
        r.loss = r.device_accum_loss / kMicroBatches;
    }
    return r;
}

// ---- log records ----

struct Caller {
    const char* file;
    int line;
    const char* func;
};

constexpr const char* kCallback = "mindformers/core/callback/callback.py";
constexpr const char* kBaseTrainer = "mindformers/trainer/base_trainer.py";
constexpr Caller kRunMode{"mindformers/run_mindformer.py", 69, "main"};
constexpr Caller kSetOutput{"mindformers/utils/file_utils.py", 51, "set_output_path"};
constexpr Caller kTrainerInit{"mindformers/trainer/trainer.py", 333, "__init__"};
constexpr Caller kBuildDataset{kBaseTrainer, 1140, "training_process"};
constexpr Caller kDatasetSize{kBaseTrainer, 1144, "training_process"};
constexpr Caller kEpochsLine{"mindformers/trainer/utils.py", 222, "check_runner_config"};
constexpr Caller kBuildCallbacks{kBaseTrainer, 1297, "training_process"};
constexpr Caller kCompiling{kBaseTrainer, 1646, "training_process"};
constexpr Caller kStarting{kBaseTrainer, 1660, "training_process"};
constexpr Caller kTrainingOver{kBaseTrainer, 1689, "training_process"};
constexpr Caller kFlops{kCallback, 488, "_calculate_model_flops"};
constexpr Caller kLocalNormDump{kCallback, 247, "_get_loss_output"};
constexpr Caller kPipelineWarning{kCallback, 550, "_fix_loss_for_parallel"};
constexpr Caller kStepLine{kCallback, 747, "print_output_info"};
constexpr Caller kStepLineNoLr{kCallback, 756, "print_output_info"};
constexpr Caller kProgress{kCallback, 764, "print_output_info"};
constexpr Caller kFinishSaving{kCallback, 1781, "print_savetime"};
constexpr Caller kSaving{kCallback, 1870, "save_checkpoint"};
constexpr Caller kSaveBatch{kCallback, 1929, "save_checkpoint"};
constexpr Caller kSaveEpoch{kCallback, 1930, "save_checkpoint"};
constexpr Caller kSaveStep{kCallback, 1931, "save_checkpoint"};
constexpr Caller kSaveGlobalStep{kCallback, 1932, "save_checkpoint"};
constexpr Caller kEmbedding{kCallback, 1001, "on_train_step_end"};
constexpr Caller kTsm{kCallback, 1496, "_to_log"};
constexpr Caller kSkip{kCallback, 1060, "abnormal_global_norm_check"};
constexpr Caller kConsecutive{kCallback, 1064, "abnormal_global_norm_check"};

struct Record {
    const char* level;
    Caller caller;
    std::string message;
    bool health_json_after = false;  // rank 0 rewrites health_ckpts.json right after this record
};

std::string asctime_now() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
    std::tm tm{};
    ::localtime_r(&t, &tm);
    char buf[48];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d %02d:%02d:%02d,%03d", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
    return buf;
}

// MindSpore's own time format: "2026-07-14-06:47:00.610.000".
std::string mindspore_time_now() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    const auto us =
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() % 1000000;
    std::tm tm{};
    ::localtime_r(&t, &tm);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02d-%02d:%02d:%02d.%03d.%03d", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(us / 1000),
                  static_cast<int>(us % 1000));
    return buf;
}

std::string file_sink_text(const Record& r, const std::string& time) {
    return "[" + std::string(r.level) + "] " + time + " [" + r.caller.file + ":" +
           std::to_string(r.caller.line) + "] " + r.caller.func + ": " + r.message + "\n";
}

std::string stdout_sink_text(const Record& r, const std::string& time, const std::string& logger_name) {
    return time + " - " + logger_name + "[" + r.caller.file + ":" + std::to_string(r.caller.line) + "] - " +
           r.level + " - " + r.message + "\n";
}

// ---- files ----

bool write_all(int fd, const char* data, std::size_t size) {
    while (size > 0) {
        const ssize_t n = ::write(fd, data, size);
        if (n <= 0) return false;
        data += n;
        size -= static_cast<std::size_t>(n);
    }
    return true;
}

bool exists(const std::string& path) {
    return ::access(path.c_str(), F_OK) == 0;
}

// Python's RotatingFileHandler on one file, opened for the records of one step at a time. Before a record it
// rolls over when tell() + len(record) >= maxBytes (tell counts bytes, len characters, as in CPython), by
// renaming info.log.4 -> .5 ... info.log -> info.log.1.
class RotatingLog {
  public:
    RotatingLog(std::string path, std::int64_t max_bytes) : path_(std::move(path)), max_bytes_(max_bytes) {}
    RotatingLog(const RotatingLog&) = delete;
    RotatingLog& operator=(const RotatingLog&) = delete;
    RotatingLog(RotatingLog&& o) noexcept
        : path_(std::move(o.path_)),
          max_bytes_(o.max_bytes_),
          fd_(std::exchange(o.fd_, -1)),
          size_(o.size_) {}
    ~RotatingLog() { close(); }

    bool open(std::string& error) {
        if (fd_ >= 0) return true;
        fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
        if (fd_ < 0) {
            error = "cannot write " + path_;
            return false;
        }
        struct stat st {};
        size_ = ::fstat(fd_, &st) == 0 ? static_cast<std::int64_t>(st.st_size) : 0;
        return true;
    }
    void close() {
        if (fd_ >= 0) ::close(fd_);
        fd_ = -1;
    }
    // Returns false with `error` set on failure; counts a rollover in `rotations`.
    bool emit(const std::string& record, std::int64_t& rotations, std::string& error) {
        if (!open(error)) return false;
        if (max_bytes_ > 0 && size_ + characters(record) >= max_bytes_) {
            if (!rollover(error)) return false;
            ++rotations;
        }
        if (!write_all(fd_, record.data(), record.size())) {
            error = "short write to " + path_;
            return false;
        }
        size_ += static_cast<std::int64_t>(record.size());
        return true;
    }

  private:
    static std::int64_t characters(const std::string& s) {
        std::int64_t n = 0;
        for (unsigned char c : s) n += (c & 0xC0) != 0x80;
        return n;
    }
    bool rollover(std::string& error) {
        close();
        for (int i = kBackupCount - 1; i > 0; --i) {
            const std::string src = path_ + "." + std::to_string(i),
                              dst = path_ + "." + std::to_string(i + 1);
            if (!exists(src)) continue;
            if (exists(dst)) ::unlink(dst.c_str());
            ::rename(src.c_str(), dst.c_str());
        }
        const std::string first = path_ + ".1";
        if (exists(first)) ::unlink(first.c_str());
        if (::rename(path_.c_str(), first.c_str()) != 0) {
            error = "cannot rotate " + path_;
            return false;
        }
        return open(error);
    }

    std::string path_;
    std::int64_t max_bytes_;
    int fd_ = -1;
    std::int64_t size_ = 0;
};

// Rank 0's CheckpointMonitor: read the whole array, append, json.dump(indent=4) with truncate-then-write (not
// atomic, no trailing newline), here in two writes with a pause so a reader can catch a cut file.
bool append_health_entry(const std::string& path, int is_health, const std::string& ckpt_name,
                         std::string& error) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::array();
    {
        std::string text;
        const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        if (in >= 0) {
            char buf[8192];
            for (ssize_t n; (n = ::read(in, buf, sizeof buf)) > 0;)
                text.append(buf, static_cast<std::size_t>(n));
            ::close(in);
        }
        auto old = nlohmann::ordered_json::parse(text, nullptr, false);
        if (!old.is_discarded() && old.is_array()) doc = std::move(old);
    }
    nlohmann::ordered_json entry = nlohmann::ordered_json::object();
    entry["is_health"] = is_health;
    entry["ckpt_name"] = ckpt_name;
    doc.push_back(std::move(entry));
    const std::string text = doc.dump(4, ' ', true);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0640);
    if (fd < 0) {
        error = "cannot write " + path;
        return false;
    }
    const std::size_t half = text.size() / 2;
    bool ok = write_all(fd, text.data(), half);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ok = ok && write_all(fd, text.data() + half, text.size() - half);
    ::close(fd);
    if (!ok) error = "short write to " + path;
    return ok;
}

// ---- rendering one rank's step ----

struct JobText {
    std::string launch_dir;   // realpath of OUTDIR: where msrun_launcher.sh ran
    std::string output_dir;   // <launch_dir>/output
    std::string logger_name;  // "mindformers" + absolute log dir
};

std::vector<Record> startup_records(const JobText& job, const MindFormersPlan& plan) {
    const auto flops = static_cast<long long>(kFlopsPerNpuStep * plan.ranks);
    return {{"INFO", kRunMode, "Running MindFormers in GRAPH_MODE."},
            {"INFO", kSetOutput, "set output path to '" + job.output_dir + "'"},
            {"INFO", kTrainerInit, "==========Trainer Init Success!=========="},
            {"INFO", kBuildDataset, ".........Build Dataset For Train.........."},
            {"INFO", kDatasetSize,
             "Create train dataset finish, dataset size:" + std::to_string(plan.steps_per_epoch)},
            {"INFO", kEpochsLine, "Will be Training epochs:" + std::to_string(plan.epochs) + ", sink_size:1"},
            {"INFO", kBuildCallbacks, ".........Build Callbacks For Train.........."},
            {"INFO", kCompiling, ".........Model Compiling, Please Wait a Moment..........."},
            {"INFO", kStarting, ".........Starting Training Model.........."},
            {"INFO", kFlops,
             "Full model flops is " + std::to_string(flops) + ", Shard model flops is " +
                 std::to_string(static_cast<long long>(kFlopsPerNpuStep)) + "."}};
}

std::string python_tuple(const std::vector<MfParam>& params) {
    std::string out = "(";
    for (std::size_t i = 0; i < params.size(); ++i) out += (i ? ", " : "") + std::to_string(params[i].size);
    return out + (params.size() == 1 ? ",)" : ")");
}

// The checkpoint a save at this step writes: sink mode names it by global step (<E>) and 1, non-sink by the
// real epoch and the step in it.
struct CheckpointName {
    std::int64_t epoch_part, step_part;
};

CheckpointName checkpoint_of(const MfPlannedStep& st, const MindFormersPlan& plan, MfLogVariant variant) {
    if (variant != MfLogVariant::nonsink) return {st.step, 1};
    return {(st.step - 1) / plan.steps_per_epoch + 1, (st.step - 1) % plan.steps_per_epoch + 1};
}

std::string checkpoint_file(int rank, int times, const CheckpointName& c) {
    return std::string(kCkptPrefix) + "_rank_" + std::to_string(rank) +
           (times > 0 ? "_" + std::to_string(times) : "") + "-" + std::to_string(c.epoch_part) + "_" +
           std::to_string(c.step_part) + ".safetensors";
}

struct StepContext {
    const MindFormersPlan& plan;
    MfLogVariant variant;
    std::uint64_t seed;
    double epoch_loss_mean;  // non-sink: mean of this rank's losses so far in the epoch
};

std::vector<Record> step_records(const MfPlannedStep& st, int rank, const RankStep& rs,
                                 const std::vector<MfParam>& params, const StepContext& ctx) {
    const MindFormersPlan& plan = ctx.plan;
    const MfLogVariant v = ctx.variant;
    const bool last_stage = stage_of(rank, plan) == plan.pipeline_stages - 1;
    const std::int64_t S = plan.steps_per_epoch;
    const std::int64_t epoch = (st.step - 1) / S + 1, step_in_epoch = (st.step - 1) % S + 1;
    const bool old = v == MfLogVariant::old3;
    std::vector<Record> out;

    // MFLossMonitor: the wrapper's local-norm dump, the pipeline warning, the step line and the progress
    // line.
    out.push_back(
        {"INFO", kLocalNormDump,
         " norm_size: " + python_tuple(params) + "\nlocal_norm:\n" + np_array_scientific(rs.sum_squares)});
    if (plan.pipeline_stages > 1)
        out.push_back({"WARNING", kPipelineWarning,
                       "pipeline stages: " + std::to_string(plan.pipeline_stages) +
                           " > 1, the loss on the last card is valid."});
    char head[96];
    std::snprintf(head, sizeof head, "{ Epoch:[%3lld/%3d], step:[%5lld/%5lld], ",
                  static_cast<long long>(epoch), plan.epochs, static_cast<long long>(step_in_epoch),
                  static_cast<long long>(S));
    std::string line = head;
    const double loss = rs.loss;
    if (v == MfLogVariant::nonsink)
        line += "loss:[" + py_fixed(loss, 5, 6) + "/" + py_fixed(ctx.epoch_loss_mean, 5, 6) + "], ";
    else
        line += "loss: " + py_fixed(loss, 5, old ? 3 : 6) + ", ";
    if (v == MfLogVariant::moe) {
        const double lbl = last_stage ? 0.012 + 0.002 * gauss(ctx.seed, rank, st.step, ch_lbl) : 0.0;
        line += "lm_loss: " + py_fixed(static_cast<float>(loss * 0.97), 5, 6) + ", ";
        if (lbl > 0) line += "load_balancing_loss: " + py_fixed(static_cast<float>(lbl), 5, 6) + ", ";
        line += "mtp_loss: " + py_fixed(static_cast<float>(loss * 1.05), 5, 6) + ", ";
    }
    line += "per_step_time: " + std::to_string(st.per_step_ms) + "ms, ";
    if (v != MfLogVariant::nolr) line += "lr: " + np_scalar(st.lr) + ", ";
    const bool overflow = !std::isfinite(st.global_norm);
    line +=
        std::string("overflow cond: ") + (overflow ? "True" : "False") + ", loss_scale: 1.0, global_norm: ";
    line += v == MfLogVariant::noclip ? "None" : np_array1(st.global_norm);
    const double per_step_s = static_cast<double>(st.per_step_ms) / 1000.0;
    if (v == MfLogVariant::standard || v == MfLogVariant::nolr || v == MfLogVariant::noclip ||
        v == MfLogVariant::moe)
        line += ", train_throughput_per_npu: " +
                printf_text("%.3f", kFlopsPerNpuStep / static_cast<double>(st.per_step_ms) / 1e9) + "T";
    out.push_back({"INFO", v == MfLogVariant::nolr ? kStepLineNoLr : kStepLine, line});

    const double total = static_cast<double>(plan.epochs * S);
    const double percent = static_cast<double>(st.step) / total * 100.0;
    const int bars = static_cast<int>(50 * percent / 100);
    std::string bar;
    for (int i = 0; i < bars; ++i) bar += "\u2588";
    bar += std::string(static_cast<std::size_t>(50 - std::min(bars, 50)), ' ');
    const int dp = plan.ranks / plan.pipeline_stages;
    const double samples = static_cast<double>(dp * kMicroBatches) / plan.ranks / per_step_s;
    const auto remain = static_cast<std::int64_t>((total - static_cast<double>(st.step)) * per_step_s);
    out.push_back({"INFO", kProgress,
                   "  " + printf_text("%4.1f", percent) + "% |" + bar + "| " + printf_text("%.5f", samples) +
                       " samples/s/p  " + timedelta_text(remain) + " }"});
    return out;
}

// CheckpointMonitor's save lines (the health JSON is rewritten after the first).
std::vector<Record> save_records(const MfPlannedStep& st, const MindFormersPlan& plan, MfLogVariant v,
                                 int rank, std::uint64_t seed) {
    const CheckpointName c = checkpoint_of(st, plan, v);
    const std::int64_t epoch_num = v == MfLogVariant::nonsink ? c.epoch_part : st.step;
    const double seconds = 2.0 + 0.05 * uniform01(seed, rank, st.step, ch_save_time);
    std::vector<Record> out;
    out.push_back({"INFO", kSaving, "......Saving ckpt......", true});
    out.push_back(
        {"INFO", kSaveBatch,
         "global_batch_size: " + std::to_string(plan.ranks / plan.pipeline_stages * kMicroBatches)});
    out.push_back({"INFO", kSaveEpoch, "epoch_num: " + std::to_string(epoch_num)});
    out.push_back({"INFO", kSaveStep, "step_num: " + std::to_string(st.step)});
    out.push_back({"INFO", kSaveGlobalStep, "global_step: " + std::to_string(st.opt_step)});
    out.push_back({"INFO", kFinishSaving,
                   "Finish saving ckpt of epoch " + std::to_string(c.epoch_part) + " step " +
                       std::to_string(c.step_part) + " using " + printf_text("%.3f", seconds) + " seconds"});
    return out;
}

// TrainingStateMonitor: metrics, embedding norm, data-skip check (in its on_train_step_end order, §3.2).
std::vector<Record> monitor_records(const MfPlannedStep& st, int rank, const RankStep& rs,
                                    const std::vector<MfParam>& params, const StepContext& ctx) {
    const MindFormersPlan& plan = ctx.plan;
    const bool last_stage = stage_of(rank, plan) == plan.pipeline_stages - 1;
    const bool old = ctx.variant == MfLogVariant::old3;
    const std::int64_t S = plan.steps_per_epoch;
    char head[80];
    std::snprintf(head, sizeof head, "Epoch:[%3lld/%3d], step:[%5lld/%5lld] ",
                  static_cast<long long>((st.step - 1) / S + 1), plan.epochs,
                  static_cast<long long>((st.step - 1) % S + 1), static_cast<long long>(S));
    std::vector<Record> out;
    // r1.8+ logs "%s" of the value (numpy or Python text); r1.5-r1.7 logged "%.4f".
    auto tsm = [&](const std::string& tag, const std::string& text, double value) {
        out.push_back({"INFO", kTsm, head + tag + ": " + (old ? py_fixed(value, 0, 4) : text)});
    };
    const double decay = std::exp(-static_cast<double>(st.step) / 300.0);
    std::string optimizer_param;  // the optimizer state is logged for the first attention projection
    for (std::size_t i = 0; i < params.size(); ++i) {
        if (!params[i].monitored) continue;
        if (optimizer_param.empty() && params[i].name.find("attention.wq") != std::string::npos)
            optimizer_param = params[i].name;
        const float norm = std::sqrt(rs.sum_squares[i]);
        tsm("local_norm/" + params[i].name, np_scalar(norm), norm);
    }
    tsm("device_local_norm", np_scalar(rs.device_local_norm), rs.device_local_norm);
    if (last_stage)
        for (float micro : rs.micro_loss) tsm("micro_local_lm_loss", np_array1(micro), micro);
    if (!optimizer_param.empty()) {
        const float m =
            static_cast<float>(0.0021 * (0.6 + decay) * (1 + 0.02 * gauss(ctx.seed, rank, st.step, ch_adam)));
        const float v2 = static_cast<float>(3.2e-7 * (0.6 + decay) *
                                            (1 + 0.02 * gauss(ctx.seed, rank, st.step, ch_adam + 1)));
        tsm("adam_m_norm/" + optimizer_param, python_float_repr(m), m);
        tsm("adam_v_norm/" + optimizer_param, python_float_repr(v2), v2);
    }
    const float weight = static_cast<float>(1203.88 + 0.004 * static_cast<double>(st.step) +
                                            0.001 * gauss(ctx.seed, rank, st.step, ch_weight));
    tsm("weight_norm", python_float_repr(weight), weight);
    const double linearity = 0.993 + 0.002 * gauss(ctx.seed, rank, st.step, ch_linearity);
    tsm("throughput_linearity", python_float_repr(linearity), linearity);
    if (last_stage) tsm("device_accum_local_lm_loss", np_scalar(rs.device_accum_loss), rs.device_accum_loss);

    out.push_back({"INFO", kEmbedding,
                   "embedding_local_norm: " +
                       (stage_of(rank, plan) == 0 ? np_scalar(rs.embedding) : std::string("0"))});
    if (st.skipped) {
        out.push_back({"INFO", kSkip,
                       "opt_global_step: " + std::to_string(st.opt_step) +
                           ", skip_data_grad_norm_threshold: " + python_float_repr(kSpikeThreshold) +
                           ", is_skip: [ True]"});
        if (!st.stop && st.spike_count < kSpikeCountThreshold)
            out.push_back(
                {"INFO", kConsecutive,
                 "Current global norm " + np_array1(st.global_norm) + " of step " + std::to_string(st.step) +
                     " has been " + std::to_string(st.spike_count) +
                     " consecutive times greater than threshold: " + python_float_repr(kSpikeThreshold)});
    }
    return out;
}

// The uncaught ValueError that TrainingStateMonitor raises, as Python prints it to stderr (msrun: worker
// log).
std::string stop_traceback(const MfPlannedStep& st, const JobText& job) {
    const std::string mf = job.launch_dir + "/mindformers/",
                      ms = "/usr/local/python3.11/lib/python3.11/site-packages/mindspore/";
    std::string t = "Traceback (most recent call last):\n";
    auto frame = [&](const std::string& file, int line, const char* func, const char* code) {
        t +=
            "  File \"" + file + "\", line " + std::to_string(line) + ", in " + func + "\n    " + code + "\n";
    };
    frame(job.launch_dir + "/run_mindformer.py", 354, "<module>", "main(config_)");
    frame(mf + "tools/cloud_adapter/cloud_monitor.py", 44, "wrapper", "raise exc");
    frame(mf + "tools/cloud_adapter/cloud_monitor.py", 34, "wrapper", "result = run_func(*args, **kwargs)");
    frame(job.launch_dir + "/run_mindformer.py", 46, "main", "trainer.train()");
    frame(mf + "trainer/trainer.py", 531, "train", "self.trainer.train(");
    frame(mf + "trainer/causal_language_modeling/causal_language_modeling.py", 115, "train",
          "self.training_process(");
    frame(mf + "trainer/base_trainer.py", 1679, "training_process",
          "model.train(config.runner_config.epochs, dataset,");
    frame(ms + "train/model.py", 1121, "train", "self._train(epoch,");
    frame(ms + "train/model.py", 117, "wrapper", "func(self, *args, **kwargs)");
    frame(ms + "train/model.py", 681, "_train",
          "self._train_dataset_sink_process(epoch, train_dataset, list_callback,");
    frame(ms + "train/model.py", 776, "_train_dataset_sink_process",
          "list_callback.on_train_step_end(run_context)");
    frame(ms + "train/callback/_callback.py", 440, "on_train_step_end", "cb.on_train_step_end(run_context)");
    frame(mf + "core/callback/callback.py", 1003, "on_train_step_end",
          "self.abnormal_global_norm_check(cb_params)");
    frame(mf + "core/callback/callback.py", 1069, "abnormal_global_norm_check", "raise ValueError(");
    return t + "ValueError: Current global norm " + np_array1(st.global_norm) + " of step " +
           std::to_string(st.step) + " has been " + std::to_string(kSpikeCountThreshold) +
           " consecutive times greater than threshold " + python_float_repr(kSpikeThreshold) +
           ", stop training...\n";
}

// One rank's two sinks.
struct RankFiles {
    RotatingLog info;
    RotatingLog worker;  // stdout of the rank's process: never rotated
};

}  // namespace

std::optional<MfLogVariant> parse_mf_log_variant(std::string_view name) {
    static const std::map<std::string_view, MfLogVariant> names = {
        {"standard", MfLogVariant::standard}, {"nonsink", MfLogVariant::nonsink},
        {"nolr", MfLogVariant::nolr},         {"noclip", MfLogVariant::noclip},
        {"moe", MfLogVariant::moe},           {"old3", MfLogVariant::old3}};
    auto it = names.find(name);
    if (it == names.end()) return std::nullopt;
    return it->second;
}

bool MfPlannedStep::nan_on(int rank) const {
    return std::any_of(nan_ranks.begin(), nan_ranks.end(), [rank](int r) { return r < 0 || r == rank; });
}

MindFormersPlan plan_mindformers_run(const SimOptions& sim, const MindFormersOptions& mf) {
    MindFormersPlan p;
    p.ranks = sim.ranks;
    p.pipeline_stages = sim.ranks >= 2 ? 2 : 1;
    p.epochs = kEpochs;
    p.first_step = sim.first_step + 1;
    p.last_step = sim.first_step + sim.steps;
    p.steps_per_epoch = std::max<std::int64_t>(1, (p.last_step + 1) / kEpochs);  // the run spans two epochs
    p.seed = sim.seed;
    p.restart_at = mf.restart_at;
    p.ckpt_every = std::max<std::int64_t>(1, mf.ckpt_every);
    p.warmup = std::clamp<std::int64_t>(p.last_step / 10, 1, 100);
    p.base_ms = sim.step_ms > 0 ? sim.step_ms : 1752.0;
    p.stop_on_spikes = mf.stop_on_spikes;
    for (const auto& f : sim.faults) {
        if (f.type == Fault::Type::spike)
            p.spikes[f.step] = (p.spikes.count(f.step) ? p.spikes[f.step] : 1.0) * f.factor;
        if (f.type == Fault::Type::nan) p.nans[f.step].push_back(f.rank);
        if (f.type == Fault::Type::stop && f.step >= p.first_step && f.step <= p.last_step &&
            (p.stop_fault < 0 || f.step < p.stop_fault))
            p.stop_fault = f.step;
    }
    // A stop is the second of two consecutive spikes: make sure both are there (in msprobe's output too).
    if (p.stop_fault >= 0) {
        for (std::int64_t s : {p.stop_fault - 1, p.stop_fault}) {
            if (s < p.first_step) continue;
            const double had = p.spikes.count(s) ? p.spikes[s] : 1.0;
            if (had >= kStopSpike) continue;
            p.implied_spikes.push_back(Fault{Fault::Type::spike, s, -1, kStopSpike / had});
            p.spikes[s] = kStopSpike;
        }
    }
    if (!p.stop_on_spikes) {
        p.stop_step = p.stop_fault;
    } else {
        MfStepSequence seq(p);
        while (auto st = seq.next())
            if (st->stop) p.stop_step = st->step;
    }
    return p;
}

MfStepSequence::MfStepSequence(const MindFormersPlan& plan)
    : plan_(plan),
      step_(plan.first_step),
      opt_(plan.first_step - 1) {}  // earlier steps all applied an update

std::optional<MfPlannedStep> MfStepSequence::next() {
    if (done_ || step_ > plan_.last_step) return std::nullopt;
    const MindFormersPlan& p = plan_;
    MfPlannedStep st;
    const std::int64_t g = step_++;
    st.step = g;
    st.launch = launch_;
    st.first_of_launch = std::exchange(first_of_launch_, false);
    if (auto it = p.spikes.find(g); it != p.spikes.end()) st.spike = it->second;
    if (auto it = p.nans.find(g); it != p.nans.end()) st.nan_ranks = it->second;
    const double x = static_cast<double>(g);
    double gn =
        (0.5 + 1.6 * std::exp(-x / 150.0)) * (1 + 0.04 * gauss(p.seed, -1, g, ch_global_norm)) * st.spike;
    double loss = 2.2 + 8.5 * std::exp(-x / 120.0) + 0.03 * gauss(p.seed, -1, g, ch_loss);
    if (st.spike > 1) loss *= 1 + 0.25 * std::log10(st.spike);
    if (!st.nan_ranks.empty()) gn = loss = std::nan("");
    st.global_norm = static_cast<float>(gn);
    st.loss = loss;
    // TrainingStateMonitor.abnormal_global_norm_check; the wrapper applies the update only when norm <
    // threshold.
    if (st.global_norm >= kSpikeThreshold) {
        st.skipped = true;
        st.spike_count = ++count_;
        st.stop = p.stop_on_spikes && count_ >= kSpikeCountThreshold;
    } else {
        count_ = 0;
        if (std::isfinite(st.global_norm)) ++opt_;
    }
    if (g == p.stop_fault) st.stop = true;
    st.opt_step = opt_;
    st.lr = lr_at(opt_, p.warmup, p.last_step);
    double ms = p.base_ms * (1 + 0.01 * gauss(p.seed, -1, g, ch_step_time));
    if (st.first_of_launch) ms += 150000 + 20000 * uniform01(p.seed, -1, g, ch_warmup);  // graph compilation
    st.per_step_ms = static_cast<std::int64_t>(ms);
    st.save = g % p.ckpt_every == 0 || (g == p.last_step && !st.stop);
    st.restart_after = !st.stop && g == p.restart_at && g < p.last_step;
    if (st.stop) done_ = true;
    if (st.restart_after) {
        ++launch_;
        count_ = 0;
        first_of_launch_ = true;
    }
    return st;
}

SimOptions msprobe_options_for(const SimOptions& sim, const MindFormersPlan& plan) {
    SimOptions out = sim;
    out.faults.clear();
    for (const auto& f : sim.faults)
        if (f.type != Fault::Type::stop) out.faults.push_back(f);
    for (const auto& f : plan.implied_spikes) out.faults.push_back(f);
    if (plan.stop_step >= 0) out.steps = std::min(sim.steps, plan.stop_step - sim.first_step + 1);
    return out;
}

bool run_mindformers_simulation(const SimOptions& sim, const MindFormersOptions& mf,
                                const MindFormersPlan& plan, const std::atomic<bool>& stop,
                                MindFormersResult& result, std::string& error) {
    namespace fs = std::filesystem;
    const std::string output = sim.outdir + "/output";
    const std::string log_dir = output + "/log", msrun_dir = output + "/msrun_log";
    for (const auto& dir : {output, log_dir, msrun_dir}) {
        if (!make_dirs(dir)) {
            error = "cannot create " + dir;
            return false;
        }
    }
    std::error_code ec;
    JobText job;
    job.launch_dir = fs::canonical(sim.outdir, ec).string();
    job.output_dir = fs::canonical(output, ec).string();
    job.logger_name = "mindformers" + fs::canonical(log_dir, ec).string();
    if (ec) {
        error = "cannot resolve " + output;
        return false;
    }

    std::vector<RankFiles> files;
    std::vector<std::vector<MfParam>> params;
    for (int r = 0; r < plan.ranks; ++r) {
        const std::string rank_dir = log_dir + "/rank_" + std::to_string(r);
        if (mf.logs && (!make_dirs(rank_dir) || ::chmod(rank_dir.c_str(), 0750) != 0)) {
            error = "cannot create " + rank_dir;
            return false;
        }
        files.push_back({RotatingLog(rank_dir + "/info.log", mf.log_max_bytes),
                         RotatingLog(msrun_dir + "/worker_" + std::to_string(r) + ".log", 0)});
        params.push_back(stage_params(stage_of(r, plan), plan.pipeline_stages));
    }

    // Writes one record to both sinks of a rank, with one timestamp, one write per sink.
    auto emit = [&](int rank, const Record& rec) {
        if (!mf.logs) return true;
        const std::string time = asctime_now();
        RankFiles& f = files[static_cast<std::size_t>(rank)];
        const std::string text = file_sink_text(rec, time);
        if (!f.info.emit(text, result.rotations, error)) return false;
        std::int64_t never = 0;
        if (!f.worker.emit(stdout_sink_text(rec, time, job.logger_name), never, error)) return false;
        result.lines += std::count(text.begin(), text.end(), '\n');
        result.bytes += static_cast<std::int64_t>(text.size());
        return true;
    };
    auto raw_worker = [&](int rank, const std::string& text) {
        std::int64_t never = 0;
        return !mf.logs || files[static_cast<std::size_t>(rank)].worker.emit(text, never, error);
    };

    std::vector<double> loss_sum(static_cast<std::size_t>(plan.ranks), 0.0);
    std::vector<int> loss_count(static_cast<std::size_t>(plan.ranks), 0);
    int ckpt_times = 0;  // MindSpore adds _1, _2 ... to the prefix when a relaunch finds earlier checkpoints
    bool saved_this_launch = false;
    std::int64_t epoch = -1;
    MfStepSequence seq(plan);
    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; !stop.load(); ++i) {
        const auto next = seq.next();
        if (!next) break;
        const MfPlannedStep& st = *next;
        if (st.first_of_launch) {
            ++result.launches;
            if (saved_this_launch) ++ckpt_times;
            saved_this_launch = false;
            for (int r = 0; r < plan.ranks && mf.logs; ++r) {
                // The error.log handler creates its file at startup; nothing here logs at ERROR.
                const std::string error_log = log_dir + "/rank_" + std::to_string(r) + "/error.log";
                const int fd = ::open(error_log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
                if (fd >= 0) ::close(fd);
                const int pid = 40000 + 97 * st.launch + r;
                if (!raw_worker(
                        r, "[WARNING] ME(" + std::to_string(pid) +
                               ":281473441098720,MainProcess):" + mindspore_time_now() +
                               " [mindspore/graph/_mark_deprecated.py:59] Module 'mindspore.common.api' is "
                               "deprecated.\n"))
                    return false;
                for (const auto& rec : startup_records(job, plan))
                    if (!emit(r, rec)) return false;
                files[static_cast<std::size_t>(r)].info.close();
                files[static_cast<std::size_t>(r)].worker.close();
            }
        }
        if (const std::int64_t e = (st.step - 1) / plan.steps_per_epoch;
            e != epoch) {  // non-sink mean restarts
            epoch = e;
            std::fill(loss_sum.begin(), loss_sum.end(), 0.0);
            std::fill(loss_count.begin(), loss_count.end(), 0);
        }
        std::vector<RankStep> rank_steps;
        int is_health = 0;
        for (int r = 0; r < plan.ranks; ++r) {
            const bool last_stage = stage_of(r, plan) == plan.pipeline_stages - 1;
            rank_steps.push_back(rank_step(st, r, params[static_cast<std::size_t>(r)], last_stage, sim.seed));
            // get_checkpoint_health_info: any stage-0 rank at or over the threshold; always 0 without
            // pipeline.
            if (plan.pipeline_stages > 1 && stage_of(r, plan) == 0 &&
                rank_steps.back().embedding >= kEmbeddingThreshold)
                is_health = 1;
        }
        if (st.save) saved_this_launch = true;
        auto save_health = [&]() {
            const std::string name = checkpoint_file(0, ckpt_times, checkpoint_of(st, plan, mf.variant));
            ++result.checkpoints;
            return append_health_entry(output + "/health_ckpts.json", is_health, name, error);
        };
        for (int r = 0; r < plan.ranks && mf.logs; ++r) {
            const auto ur = static_cast<std::size_t>(r);
            const RankStep& rs = rank_steps[ur];
            loss_sum[ur] += rs.loss;
            ++loss_count[ur];
            const StepContext ctx{plan, mf.variant, sim.seed, loss_sum[ur] / loss_count[ur]};
            std::vector<Record> recs = step_records(st, r, rs, params[ur], ctx);
            if (st.save)
                for (auto& rec : save_records(st, plan, mf.variant, r, sim.seed))
                    recs.push_back(std::move(rec));
            for (auto& rec : monitor_records(st, r, rs, params[ur], ctx)) recs.push_back(std::move(rec));
            if (!st.stop && st.step == plan.last_step)
                recs.push_back({"INFO", kTrainingOver, ".........Training Over!............."});
            for (const auto& rec : recs) {
                if (!emit(r, rec)) return false;
                if (rec.health_json_after && r == 0 && mf.health && !save_health()) return false;
            }
            if (st.stop && !raw_worker(r, stop_traceback(st, job))) return false;
            files[ur].info.close();
            files[ur].worker.close();
        }
        if (mf.health && !mf.logs && st.save && !save_health()) return false;
        ++result.steps;
        result.stopped = st.stop;
        if (sim.step_ms > 0) {
            const auto due = t0 + std::chrono::milliseconds(static_cast<std::int64_t>(sim.step_ms) * (i + 1));
            while (!stop.load() && std::chrono::steady_clock::now() < due)
                std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
                    due - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
        }
    }
    return true;
}

}  // namespace msmon
