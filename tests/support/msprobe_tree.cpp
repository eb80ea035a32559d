// Reading a monitor_output tree whole, and the spread measures of simulated against real runs.
#include "tests/support/msprobe_tree.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <regex>

#include "tests/support/reference_csv.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {

namespace fs = std::filesystem;

double TreeRow::number(const std::string& column) const {
    auto it = cells.find(column);
    double v = std::numeric_limits<double>::quiet_NaN();
    if (it == cells.end() || !reference_double(it->second, v)) return std::numeric_limits<double>::quiet_NaN();
    return v;
}

MsprobeTree read_msprobe_tree(const std::string& dir) {
    MsprobeTree tree;
    std::string root = dir;
    if (fs::is_directory(dir + "/monitor_output")) root = dir + "/monitor_output";
    static const std::regex rank_re(R"(-rank(\d+)-)");
    static const std::regex file_re(R"(^(.*)_(\d+)-(\d+)(?:_part_\d+)?\.csv$)");
    for (const auto& d : fs::directory_iterator(root))
        if (d.is_directory()) tree.folders.push_back(d.path().filename().string());
    std::sort(tree.folders.begin(), tree.folders.end());
    for (const auto& folder : tree.folders) {
        std::smatch rm;
        if (!std::regex_search(folder, rm, rank_re)) continue;
        const int rank = std::stoi(rm[1]);
        std::vector<std::string> files;
        for (const auto& f : fs::directory_iterator(root + "/" + folder)) files.push_back(f.path().filename().string());
        std::sort(files.begin(), files.end());
        for (const auto& file : files) {
            std::smatch fm;
            if (!std::regex_match(file, fm, file_re)) continue;
            const auto records = parse_csv_reference(read_file(root + "/" + folder + "/" + file));
            if (records.empty()) continue;
            const auto& header = records[0];
            for (std::size_t i = 1; i < records.size(); ++i) {
                if (records[i].size() != header.size()) continue;
                TreeRow r;
                r.rank = rank;
                r.folder = folder;
                r.kind = fm[1];
                r.file = file;
                for (std::size_t c = 0; c < header.size(); ++c) r.cells[header[c]] = records[i][c];
                r.name = r.cells["name"];
                r.step = std::stoll(r.cells["step"]);
                if (auto it = r.cells.find("micro_step"); it != r.cells.end()) r.micro = std::stoi(it->second);
                tree.rows.push_back(std::move(r));
            }
        }
    }
    return tree;
}

std::string spread_class(const TreeRow& row) {
    if (row.kind == "actv" || row.kind == "actv_grad") return row.kind;
    auto it = row.cells.find("shape");
    const bool one_d = it != row.cells.end() && it->second.find(',') == std::string::npos;
    return row.kind + (one_d ? "/1-D" : "/2-D");
}

namespace {

Quantiles quantiles(std::vector<double> xs) {
    Quantiles q;
    q.n = xs.size();
    if (xs.empty()) return q;
    std::sort(xs.begin(), xs.end());
    auto at = [&](double p) {
        const double i = p * static_cast<double>(xs.size() - 1);
        const std::size_t lo = static_cast<std::size_t>(std::floor(i)), hi = std::min(lo + 1, xs.size() - 1);
        return xs[lo] + (xs[hi] - xs[lo]) * (i - static_cast<double>(lo));
    };
    q.median = at(0.5);
    q.p95 = at(0.95);
    q.p99 = at(0.99);
    q.max = xs.back();
    return q;
}

bool usable(double v) {
    return std::isfinite(v) && v > 0;
}

}  // namespace

std::map<std::string, Spread> spread_by_class(const MsprobeTree& tree, const std::string& op) {
    // The n-th folder of each rank is launch n of the job.
    std::map<std::string, int> launch_of;
    std::map<int, int> launches;
    for (const auto& folder : tree.folders) {
        static const std::regex rank_re(R"(-rank(\d+)-)");
        std::smatch m;
        if (std::regex_search(folder, m, rank_re)) launch_of[folder] = launches[std::stoi(m[1])]++;
    }
    struct SeriesKey {
        std::string cls, kind, name;
        int micro, launch;
        bool operator<(const SeriesKey& o) const {
            return std::tie(cls, kind, name, micro, launch) < std::tie(o.cls, o.kind, o.name, o.micro, o.launch);
        }
    };
    std::map<SeriesKey, std::map<int, std::map<long long, double>>> series;  // → rank → step → value
    for (const auto& r : tree.rows)
        series[{spread_class(r), r.kind, r.name, r.micro, launch_of[r.folder]}][r.rank][r.step] = r.number(op);
    std::map<std::string, std::vector<double>> cross, step;
    for (const auto& [key, by_rank] : series) {
        std::map<long long, std::vector<double>> at_step;
        for (const auto& [rank, values] : by_rank) {
            const double* prev = nullptr;
            long long prev_step = 0;
            for (const auto& [s, v] : values) {
                if (prev && s == prev_step + 1 && usable(*prev) && usable(v))
                    step[key.cls].push_back(std::abs(std::log(v / *prev)));
                prev = &v;
                prev_step = s;
                if (usable(v)) at_step[s].push_back(v);
            }
        }
        for (auto& [s, xs] : at_step) {
            if (xs.size() < 2) continue;
            std::vector<double> sorted = xs;
            std::sort(sorted.begin(), sorted.end());
            const std::size_t n = sorted.size();
            const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
            for (double x : xs) cross[key.cls].push_back(std::abs(std::log(x / median)));
        }
    }
    std::map<std::string, Spread> out;
    for (auto& [cls, xs] : cross) out[cls].cross = quantiles(std::move(xs));
    for (auto& [cls, xs] : step) out[cls].step = quantiles(std::move(xs));
    return out;
}

std::string spread_table(const std::map<std::string, Spread>& real, const std::map<std::string, Spread>& sim) {
    std::string out =
        "class                 | cross-rank median/p95/p99/max: real | simulated   || step-to-step: real | simulated\n";
    std::map<std::string, bool> classes;
    for (const auto& [cls, _] : real) classes[cls] = true;
    for (const auto& [cls, _] : sim) classes[cls] = true;
    auto q = [](const std::map<std::string, Spread>& m, const std::string& cls, bool cross) {
        auto it = m.find(cls);
        if (it == m.end()) return std::string("            -            ");
        const Quantiles& x = cross ? it->second.cross : it->second.step;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3f %.3f %.3f %.3f", x.median, x.p95, x.p99, x.max);
        return std::string(buf);
    };
    for (const auto& [cls, _] : classes) {
        char head[32];
        std::snprintf(head, sizeof head, "%-21s", cls.c_str());
        out += std::string(head) + " | " + q(real, cls, true) + " | " + q(sim, cls, true) + " || " +
               q(real, cls, false) + " | " + q(sim, cls, false) + "\n";
    }
    return out;
}

}  // namespace msmon::test
