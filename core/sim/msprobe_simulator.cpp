// The simulator: per rank, per step, the same files, headers, row order and number text msprobe writes
// (pandas: header once, rows appended with open/append/close, floats rounded to ndigits then repr'd).
#include "core/sim/msprobe_simulator.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <random>
#include <thread>

#include "core/log/logging.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

struct Param {
    std::string name;
    std::string shape;  // pandas text: "[3072, 1024]" (quoted in the CSV) or [1024]
    double numel = 1;
    double grad_norm0 = 1;   // gradient norm scale
    double param_norm0 = 1;  // parameter norm scale
};

std::vector<Param> make_params(int count, std::mt19937_64& rng) {
    const int hidden = 1024, ffn = 4096, vocab = 25216;
    struct Shape {
        const char* suffix;
        int rows, cols;
    };
    const Shape layer[] = {{"input_layernorm.weight", hidden, 0},           {"self_attention.linear_qkv.weight", 3 * hidden, hidden},
                           {"self_attention.linear_proj.weight", hidden, hidden}, {"pre_mlp_layernorm.weight", hidden, 0},
                           {"mlp.linear_fc1.weight", ffn, hidden},         {"mlp.linear_fc2.weight", hidden, ffn}};
    std::vector<Param> out;
    auto add = [&](std::string name, int rows, int cols) {
        Param p;
        p.name = std::move(name);
        p.shape = cols ? "[" + std::to_string(rows) + ", " + std::to_string(cols) + "]" : "[" + std::to_string(rows) + "]";
        p.numel = static_cast<double>(rows) * (cols ? cols : 1);
        std::uniform_real_distribution<double> u(-2.0, 0.0);
        p.grad_norm0 = std::pow(10.0, u(rng));
        p.param_norm0 = cols ? std::sqrt(p.numel) * 0.02 : std::sqrt(p.numel);
        out.push_back(std::move(p));
    };
    add("module.module.embedding.word_embeddings.weight", vocab, hidden);
    for (int layer_index = 0; static_cast<int>(out.size()) < count - 2; ++layer_index)
        for (const auto& s : layer)
            if (static_cast<int>(out.size()) < count - 2)
                add("module.module.decoder.layers." + std::to_string(layer_index) + "." + s.suffix, s.rows, s.cols);
    if (count >= 2) add("module.module.decoder.final_layernorm.weight", hidden, 0);
    if (count >= 3) add("module.module.output_layer.weight", vocab, hidden);
    out.resize(static_cast<std::size_t>(count));
    return out;
}

std::string round_repr(double v, int ndigits) {
    if (!std::isfinite(v)) return python_float_repr(v);
    const double scale = std::pow(10.0, ndigits);
    double r = std::nearbyint(v * scale) / scale;  // numpy rounds half to even, as nearbyint does by default
    return python_float_repr(r);
}

std::string csv_text(const std::string& s) {
    return s.find(',') == std::string::npos ? s : "\"" + s + "\"";
}

struct StatRow {
    double min, max, norm, mean, nans, zeros;
};

StatRow stats_for(double norm, double numel, double nan_count, std::mt19937_64& rng) {
    std::normal_distribution<double> n(0.0, 1.0);
    const double rms = norm / std::sqrt(numel);
    StatRow r;
    if (nan_count > 0) {
        const double nan = std::nan("");
        return {nan, nan, nan, nan, nan_count, 0.0};
    }
    r.norm = norm;
    r.max = rms * (3.5 + 0.3 * std::abs(n(rng)));
    r.min = -rms * (3.5 + 0.3 * std::abs(n(rng)));
    r.mean = rms * 0.02 * n(rng);
    r.nans = 0;
    r.zeros = 0.0;
    return r;
}

class CsvAppender {
public:
    CsvAppender(SimResult& result) : result_(result) {}
    // Appends rows to <dir>/<prefix>_<a>-<b>.csv, writing the header first if the file is new.
    bool append(const std::string& path, const std::string& header, const std::string& rows, std::string& error) {
        const bool fresh = ::access(path.c_str(), F_OK) != 0;
        int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
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

std::string run_dir_name(int rank, std::uint64_t seed, std::time_t when) {
    std::time_t shanghai = when + 8 * 3600;  // msprobe names folders in Asia/Shanghai time
    std::tm tm{};
    ::gmtime_r(&shanghai, &tm);
    static const char* months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    std::mt19937_64 rng(seed * 1000003u + static_cast<std::uint64_t>(rank));
    char buf[96];
    std::snprintf(buf, sizeof buf, "%s%02d_%02d-%02d-%02d-rank%d-%08llx", months[tm.tm_mon], tm.tm_mday, tm.tm_hour,
                  tm.tm_min, tm.tm_sec, rank, static_cast<unsigned long long>(rng() & 0xffffffffull));
    return buf;
}

}  // namespace

bool run_msprobe_simulation(const SimOptions& o, const std::atomic<bool>& stop, SimResult& result,
                            std::string& error) {
    std::mt19937_64 rng(o.seed);
    const std::vector<Param> params = make_params(o.params, rng);
    const std::string root = o.outdir + "/monitor_output";
    if (!make_dirs(root)) {
        error = "cannot create " + root;
        return false;
    }
    const std::time_t now = std::time(nullptr);
    std::vector<std::string> dirs;
    for (int r = 0; r < o.ranks; ++r) {
        dirs.push_back(root + "/" + run_dir_name(o.first_rank + r, o.seed, now + r / 4));
        if (!make_dirs(dirs.back())) {
            error = "cannot create " + dirs.back();
            return false;
        }
    }
    result.rank_dirs = dirs;
    const std::string ops_header = "min,max,norm,mean,nans,zeros,shape,dtype\n";
    const std::string header = "vpp_stage,name,step," + ops_header;
    const std::string micro_header = "vpp_stage,name,step,micro_step," + ops_header;
    const int nan_param = static_cast<int>(params.size()) > 5 ? 5 : static_cast<int>(params.size()) - 1;
    std::vector<std::mt19937_64> rank_rng;
    for (int r = 0; r < o.ranks; ++r) rank_rng.emplace_back(o.seed * 7919u + static_cast<std::uint64_t>(r));
    std::vector<double> param_drift(params.size(), 1.0);
    CsvAppender out(result);
    std::normal_distribution<double> noise(0.0, 1.0);

    auto row_text = [&](const std::string& name, std::int64_t step, const std::string* micro, const StatRow& s,
                        const std::string& shape, std::string& dst) {
        dst += "0,";
        dst += name;
        dst += ',';
        dst += std::to_string(step);
        dst += ',';
        if (micro) {
            dst += *micro;
            dst += ',';
        }
        dst += round_repr(s.min, o.ndigits) + "," + round_repr(s.max, o.ndigits) + "," + round_repr(s.norm, o.ndigits) +
               "," + round_repr(s.mean, o.ndigits) + ",";
        dst += std::isnan(s.nans) ? "nan" : std::to_string(static_cast<long long>(s.nans));
        dst += "," + round_repr(s.zeros, o.ndigits) + "," + csv_text(shape) + ",torch.float32\n";
    };

    const auto t0 = std::chrono::steady_clock::now();
    for (std::int64_t i = 0; i < o.steps && !stop.load(); ++i) {
        const std::int64_t step = o.first_step + i;
        const std::int64_t range_start = step / o.step_count_per_record * o.step_count_per_record;
        const std::string range =
            "_" + std::to_string(range_start) + "-" + std::to_string(range_start + o.step_count_per_record - 1) + ".csv";
        const double decay = 0.5 + 0.5 * std::exp(-static_cast<double>(step) / 200.0);
        for (std::size_t p = 0; p < params.size(); ++p) param_drift[p] *= 1.0 + 0.0005 * std::abs(noise(rng));
        for (int r = 0; r < o.ranks; ++r) {
            auto& rr = rank_rng[static_cast<std::size_t>(r)];
            double spike = 1.0;
            bool nan_here = false;
            for (const auto& f : o.faults) {
                if (f.step != step || (f.rank >= 0 && f.rank != o.first_rank + r)) continue;
                if (f.type == Fault::Type::spike) spike *= f.factor;
                else nan_here = true;
            }
            std::string pre, post, m, v, po, pu, actv, actv_grad;
            for (std::size_t p = 0; p < params.size(); ++p) {
                const Param& par = params[p];
                const double g = par.grad_norm0 * decay * (1.0 + 0.05 * noise(rr)) * spike;
                const bool nan_row = nan_here && static_cast<int>(p) == nan_param;
                row_text(par.name, step, nullptr, stats_for(g * (1.0 + 0.02 * noise(rr)), par.numel, 0, rr), par.shape, pre);
                row_text(par.name, step, nullptr, stats_for(g, par.numel, nan_row ? 1 : 0, rr), par.shape, post);
                if (step > o.first_step) {
                    row_text(par.name, step, nullptr, stats_for(g * 0.1, par.numel, 0, rr), par.shape, m);
                    row_text(par.name, step, nullptr, stats_for(g * g / std::sqrt(par.numel) * 0.01, par.numel, 0, rr),
                             par.shape, v);
                }
                const double w = par.param_norm0 * param_drift[p];
                row_text(par.name, step, nullptr, stats_for(w, par.numel, 0, rr), par.shape, po);
                row_text(par.name, step, nullptr, stats_for(w * (1.0 + 1e-4 * noise(rr)), par.numel, 0, rr), par.shape, pu);
            }
            if (o.activations) {
                for (int micro = 0; micro < 2; ++micro) {
                    const std::string ms = std::to_string(micro);
                    for (std::size_t p = 0; p < params.size(); ++p) {
                        const std::string module = params[p].name.substr(0, params[p].name.rfind('.'));
                        const double a = 100.0 * (1.0 + 0.05 * noise(rr)) * (spike > 1 ? 3.0 : 1.0);
                        row_text(module + ".input", step, &ms, stats_for(a, 4096.0 * 1024, 0, rr), "[4096, 1, 1024]", actv);
                        row_text(module + ".output", step, &ms, stats_for(a * 0.7, 4096.0 * 1024, 0, rr), "[4096, 1, 1024]", actv);
                        row_text(module + ".output", step, &ms, stats_for(a * 1e-3 * spike, 4096.0 * 1024, 0, rr),
                                 "[4096, 1, 1024]", actv_grad);
                    }
                }
            }
            const std::string& dir = dirs[static_cast<std::size_t>(r)];
            // One burst per step, in msprobe's write order (spec §2.7).
            struct Part {
                const char* prefix;
                const std::string* rows;
                const std::string* head;
            } parts[] = {{"actv", &actv, &micro_header},   {"actv_grad", &actv_grad, &micro_header},
                         {"grad_unreduced", &pre, &header}, {"grad_reduced", &post, &header},
                         {"exp_avg", &m, &header},          {"exp_avg_sq", &v, &header},
                         {"param_origin", &po, &header},    {"param_updated", &pu, &header}};
            for (const auto& part : parts) {
                if (part.rows->empty()) continue;
                if (!out.append(dir + "/" + part.prefix + range, *part.head, *part.rows, error)) return false;
                for (char c : *part.rows) result.rows += c == '\n';
            }
        }
        ++result.steps;
        if (o.step_ms > 0) {
            const auto due = t0 + std::chrono::milliseconds(static_cast<std::int64_t>(o.step_ms) * (i + 1));
            while (!stop.load() && std::chrono::steady_clock::now() < due)
                std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
                    due - std::chrono::steady_clock::now(), std::chrono::milliseconds(50)));
        }
    }
    return true;
}

}  // namespace msmon
