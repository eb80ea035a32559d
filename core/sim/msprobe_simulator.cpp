// The simulator: per rank, per step, the same files, headers, row order and number text msprobe writes
// (pandas: header once, rows appended with open/append/close, floats rounded to ndigits then repr'd). The numbers
// come from SimulatedTraining (calibrated against real msprobe runs, see simulated_training.cpp); the faults are
// placed by FaultSchedule. A restart starts new run folders, as a relaunched msprobe does; a stalled rank stops
// writing while the others go on.
#include "core/sim/msprobe_simulator.hpp"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <optional>
#include <random>
#include <thread>

#include "core/log/logging.hpp"
#include "core/sim/fault_schedule.hpp"
#include "core/sim/monitor_config_follower.hpp"
#include "core/sim/sim_model.hpp"
#include "core/sim/simulated_training.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

constexpr int kMicroSteps = 2;  // grad_acc_steps of the simulated job: actv/actv_grad rows per micro-batch

std::string round_repr(double v, int ndigits) {
    if (!std::isfinite(v)) return python_float_repr(v);
    const double scale = std::pow(10.0, ndigits);
    double r = std::nearbyint(v * scale) / scale;  // numpy rounds half to even, as nearbyint does by default
    return python_float_repr(r);
}

std::string csv_text(const std::string& s) {
    return s.find(',') == std::string::npos ? s : "\"" + s + "\"";
}

class CsvAppender {
public:
    CsvAppender(SimResult& result) : result_(result) {}
    // Appends rows to <dir>/<prefix>_<a>-<b>.csv, writing the header first if the file is new.
    bool append(const std::string& path, const std::string& header, const std::string& rows, std::string& error) {
        // Made new if it is not there (one call: a run of thousands of ranks creates hundreds of thousands).
        bool fresh = true;
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
        if (fd < 0 && errno == EEXIST) {
            fresh = false;
            fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        }
        if (fd < 0) {
            error = "cannot write " + path;
            return false;
        }
        std::string data = fresh ? header + rows : rows;
        // pandas writes through an ~8 KiB buffer: readers can see a line cut at a chunk boundary.
        for (std::size_t off = 0; off < data.size();) {
            const std::size_t n = std::min<std::size_t>(8192, data.size() - off);
            if (::write(fd, data.data() + off, n) != static_cast<ssize_t>(n)) {
                ::close(fd);
                error = "short write to " + path;
                return false;
            }
            off += n;
        }
        ::close(fd);
        if (fresh) ++result_.files;
        result_.bytes += static_cast<std::int64_t>(data.size());
        return true;
    }

private:
    SimResult& result_;
};

std::string run_dir_name(int rank, std::uint64_t seed, int launch, std::time_t when) {
    std::time_t shanghai = when + 8 * 3600;  // msprobe names folders in Asia/Shanghai time
    std::tm tm{};
    ::gmtime_r(&shanghai, &tm);
    static const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::mt19937_64 rng(seed * 1000003u + static_cast<std::uint64_t>(rank) +
                        static_cast<std::uint64_t>(launch) * 0x9e3779b97f4a7c15ull);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%02d_%02d-%02d-%02d-rank%d-%08llx", months[tm.tm_mon], tm.tm_mday, tm.tm_hour,
                  tm.tm_min, tm.tm_sec, rank, static_cast<unsigned long long>(rng() & 0xffffffffull));
    return buf;
}

// One CSV row: "0,<name>,<step>[,<micro>],min,max,norm,mean,nans,zeros,shape,dtype".
class RowText {
public:
    explicit RowText(int ndigits) : ndigits_(ndigits) {}
    // `float_nans`: the count printed as a float ("4.0"), as actv_grad rows show it.
    void row(const std::string& name, const std::string& step, const std::string* micro, const StatRow& s,
             const std::string& shape, bool float_nans, std::string& dst) const {
        head(name, step, micro, dst);
        dst += round_repr(s.min, ndigits_) + "," + round_repr(s.max, ndigits_) + "," + round_repr(s.norm, ndigits_) +
               "," + round_repr(s.mean, ndigits_) + ",";
        dst += float_nans ? python_float_repr(s.nans) : std::to_string(static_cast<long long>(s.nans));
        dst += "," + round_repr(s.zeros, ndigits_) + "," + csv_text(shape) + ",torch.float32\n";
    }
    // A module input that is not a tensor with a gradient (the batch): every op, shape and dtype too, is nan.
    void placeholder(const std::string& name, const std::string& step, const std::string* micro,
                     std::string& dst) const {
        head(name, step, micro, dst);
        dst += "nan,nan,nan,nan,nan,nan,nan,nan\n";
    }

private:
    static void head(const std::string& name, const std::string& step, const std::string* micro, std::string& dst) {
        dst += "0,";
        dst += name;
        dst += ',';
        dst += step;
        dst += ',';
        if (micro) {
            dst += *micro;
            dst += ',';
        }
    }
    int ndigits_;
};

// Row names worked out once.
struct RowNames {
    std::vector<std::string> input, output;  // per module
    explicit RowNames(const SimModel& model) {
        for (const auto& m : model.modules()) {
            input.push_back(SimModel::row_name(m, false));
            output.push_back(SimModel::row_name(m, true));
        }
    }
};

// One step's rows of the kinds replicas share: grad_reduced, exp_avg, exp_avg_sq, param_origin, param_updated.
struct ShardText {
    std::string reduced, m, v, po, pu;
    void clear() {
        for (std::string* s : {&reduced, &m, &v, &po, &pu}) s->clear();
    }
    void add(const RowText& text, const SimParam& p, const std::string& step, bool optimizer_state,
             const StatRow& grad_reduced, const StatRow& exp_avg, const StatRow& exp_avg_sq, const StatRow& origin,
             const StatRow& updated) {
        text.row(p.name, step, nullptr, grad_reduced, p.shape, false, reduced);
        if (optimizer_state) {
            text.row(p.name, step, nullptr, exp_avg, p.shape, false, m);
            text.row(p.name, step, nullptr, exp_avg_sq, p.shape, false, v);
        }
        text.row(p.name, step, nullptr, origin, p.shape, false, po);
        text.row(p.name, step, nullptr, updated, p.shape, false, pu);
    }
};

}  // namespace

bool run_msprobe_simulation(const SimOptions& o, const std::atomic<bool>& stop, SimResult& result, std::string& error) {
    const SimModel model(o.params, o.seed);
    auto schedule = FaultSchedule::make(model, o.faults, o.first_step, o.steps, o.first_rank, o.ranks, error);
    if (!schedule) return false;
    const std::string root = o.outdir + "/monitor_output";
    if (!make_dirs(root)) {
        error = "cannot create " + root;
        return false;
    }
    SimulatedTraining training(model, o.first_rank, o.ranks, o.tp, o.activations, kMicroSteps, o.seed);
    training.set_printed_digits(o.ndigits);
    const RowNames names(model);
    const RowText text(o.ndigits);
    const std::string ops_header = "min,max,norm,mean,nans,zeros,shape,dtype\n";
    const std::string header = "vpp_stage,name,step," + ops_header;
    const std::string micro_header = "vpp_stage,name,step,micro_step," + ops_header;
    const auto& params = model.params();
    const auto& modules = model.modules();
    const auto& values = model.values();
    std::vector<std::string> micro_text;
    for (int m = 0; m < kMicroSteps; ++m) micro_text.push_back(std::to_string(m));
    CsvAppender out(result);
    std::vector<ShardText> shard_text(static_cast<std::size_t>(training.shards()));
    ShardText own_text;

    const std::vector<std::int64_t> resume_steps = schedule->resume_steps();
    std::map<std::int64_t, SimulatedTraining::State> checkpoints;
    std::vector<std::int64_t> stall(static_cast<std::size_t>(o.ranks));
    for (int r = 0; r < o.ranks; ++r) stall[static_cast<std::size_t>(r)] = schedule->stall_step(o.first_rank + r);

    const auto t0 = std::chrono::steady_clock::now();
    const std::time_t start = std::time(nullptr);
    std::int64_t written = 0;                    // steps written, repeats after a restart included (for pacing)
    std::int64_t high_water = o.first_step - 1;  // the last step any earlier launch reached
    std::int64_t step = o.first_step;
    for (int launch = 0; !stop.load(); ++launch) {
        // A launch's run folders, named when it starts.
        std::vector<std::string> dirs;
        const std::time_t when = launch == 0 ? start : std::max(std::time(nullptr), start + 60 * launch);
        for (int r = 0; r < o.ranks; ++r) {
            dirs.push_back(root + "/" + run_dir_name(o.first_rank + r, o.seed, launch, when + r / 4));
            if (!make_dirs(dirs.back())) {
                error = "cannot create " + dirs.back();
                return false;
            }
            result.rank_dirs.push_back(dirs.back());
        }
        std::vector<bool> stalled(static_cast<std::size_t>(o.ranks), false);
        // A relaunched job's msprobe starts afresh: static mode reads the config again, dynamic mode waits for it.
        std::optional<MonitorConfigFollower> follower;
        if (!o.monitor_config.empty()) follower.emplace(o.monitor_config, o.dynamic_monitor);
        std::int64_t resume = -1;
        const std::int64_t launch_high_water = high_water;
        for (; step <= schedule->last_step() && !stop.load(); ++step) {
            for (std::int64_t c : resume_steps)
                if (c == step) checkpoints[c] = training.state();
            const bool first_pass = step > launch_high_water;
            training.run_step(step, launch, schedule->at(step, first_pass));
            // A step msprobe does not collect is trained all the same; nothing of it is written.
            const bool collected = !follower || follower->collects(step);
            const std::string step_text = std::to_string(step);
            const std::int64_t range_start = step / o.step_count_per_record * o.step_count_per_record;
            const std::string range = "_" + std::to_string(range_start) + "-" +
                                      std::to_string(range_start + o.step_count_per_record - 1) + ".csv";
            // grad_reduced, exp_avg, exp_avg_sq and the weights are the same on every replica of a shard: their
            // text too, made once per shard.
            for (int s = 0; collected && s < training.shards(); ++s) {
                ShardText& t = shard_text[static_cast<std::size_t>(s)];
                t.clear();
                for (std::size_t p = 0; p < params.size(); ++p) {
                    const int pi = static_cast<int>(p);
                    t.add(text, params[p], step_text, training.has_optimizer_state(), training.grad_reduced(s, pi),
                          training.exp_avg(s, pi), training.exp_avg_sq(s, pi), training.param_origin(s, pi),
                          training.param_updated(s, pi));
                }
            }
            for (int r = 0; collected && r < o.ranks; ++r) {
                const std::size_t ri = static_cast<std::size_t>(r);
                if (stalled[ri]) continue;
                // A rank with its own copy of a weight (silent corruption) prints that copy's rows.
                const ShardText* shared = &shard_text[static_cast<std::size_t>(training.shard_of(r))];
                if (std::any_of(training.own_rows().begin(), training.own_rows().end(),
                                [&](const auto& own) { return own.rank == r; })) {
                    own_text.clear();
                    for (std::size_t p = 0; p < params.size(); ++p) {
                        const int pi = static_cast<int>(p), s = training.shard_of(r);
                        const SimulatedTraining::OwnRows* own = nullptr;
                        for (const auto& row : training.own_rows())
                            if (row.rank == r && row.param == pi) own = &row;
                        if (own)
                            own_text.add(text, params[p], step_text, training.has_optimizer_state(), own->grad_reduced,
                                         own->exp_avg, own->exp_avg_sq, own->origin, own->updated);
                        else
                            own_text.add(text, params[p], step_text, training.has_optimizer_state(),
                                         training.grad_reduced(s, pi), training.exp_avg(s, pi),
                                         training.exp_avg_sq(s, pi), training.param_origin(s, pi),
                                         training.param_updated(s, pi));
                    }
                    shared = &own_text;
                }
                const std::string &reduced = shared->reduced, &m = shared->m, &v = shared->v, &po = shared->po,
                                  &pu = shared->pu;
                std::string unreduced, actv, actv_grad;
                // Backward order: the last layer's gradients are ready first.
                for (std::size_t p = params.size(); p-- > 0;)
                    text.row(params[p].name, step_text, nullptr, training.grad_unreduced(r, static_cast<int>(p)),
                             params[p].shape, false, unreduced);
                if (o.activations) {
                    for (int micro = 0; micro < kMicroSteps; ++micro) {
                        const std::string* ms = &micro_text[static_cast<std::size_t>(micro)];
                        const int nan_module = training.nan_module(r, micro);
                        const int nan_value =
                            nan_module >= 0 ? modules[static_cast<std::size_t>(nan_module)].output : -1;
                        const int dead_module = training.dead_module();
                        const int dead_value =
                            dead_module >= 0 ? modules[static_cast<std::size_t>(dead_module)].output : -1;
                        auto actv_row = [&](std::size_t mi, int value, const std::string& name) {
                            // Rows of the NaN's (the dead module's zeros') tensor written before its module's hook
                            // ran are still clean.
                            const bool before = value == nan_value && static_cast<int>(mi) < nan_module;
                            const bool alive = value == dead_value && static_cast<int>(mi) < dead_module;
                            const StatRow& s = before  ? training.clean_output(r, micro)
                                               : alive ? training.alive_output(r, micro)
                                                       : training.actv(r, micro, value);
                            text.row(name, step_text, ms, s, values[static_cast<std::size_t>(value)].shape, false,
                                     actv);
                        };
                        for (std::size_t mi = 0; mi < modules.size(); ++mi) {
                            actv_row(mi, modules[mi].input, names.input[mi]);
                            actv_row(mi, modules[mi].output, names.output[mi]);
                        }
                        for (std::size_t mi = modules.size(); mi-- > 0;) {
                            const SimModule& mod = modules[mi];
                            if (mod.input_grad < 0) {
                                text.placeholder(names.input[mi], step_text, ms, actv_grad);
                            } else {
                                text.row(names.input[mi], step_text, ms, training.actv_grad(r, micro, mod.input_grad),
                                         values[static_cast<std::size_t>(mod.input)].shape, true, actv_grad);
                            }
                            text.row(names.output[mi], step_text, ms, training.actv_grad(r, micro, mod.output_grad),
                                     values[static_cast<std::size_t>(mod.output)].shape, true, actv_grad);
                        }
                    }
                }
                const std::string& dir = dirs[ri];
                // One burst per step, in msprobe's write order (at the end of each collected optimizer.step()).
                struct Part {
                    const char* prefix;
                    const std::string* rows;
                    const std::string* head;
                } parts[] = {{"actv", &actv, &micro_header},
                             {"actv_grad", &actv_grad, &micro_header},
                             {"grad_unreduced", &unreduced, &header},
                             {"grad_reduced", &reduced, &header},
                             {"exp_avg", &m, &header},
                             {"exp_avg_sq", &v, &header},
                             {"param_origin", &po, &header},
                             {"param_updated", &pu, &header}};
                for (const auto& part : parts) {
                    if (part.rows->empty()) continue;
                    if (!out.append(dir + "/" + part.prefix + range, *part.head, *part.rows, error)) return false;
                    for (char c : *part.rows) result.rows += c == '\n';
                }
            }
            for (int r = 0; r < o.ranks; ++r)  // a stalled rank writes nothing after this step
                if (first_pass && step == stall[static_cast<std::size_t>(r)])
                    stalled[static_cast<std::size_t>(r)] = true;
            if (follower) follower->finish_step(step);  // collect_times reached: the write-back; the poll
            result.steps += collected;
            ++written;
            if (o.step_ms > 0) {
                const auto due = t0 + std::chrono::milliseconds(static_cast<std::int64_t>(o.step_ms) * written);
                while (!stop.load() && std::chrono::steady_clock::now() < due)
                    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
                        due - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
            }
            high_water = std::max(high_water, step);
            if (first_pass) resume = schedule->restart_after(step);
            if (resume >= 0) break;
        }
        if (resume < 0) break;
        // The job died after this step and is relaunched from the checkpoint taken as `resume` began (the one saved
        // after this very step: the state as it is).
        if (resume <= step) training.restore(checkpoints.at(resume));
        step = resume;
    }
    return true;
}

}  // namespace msmon
