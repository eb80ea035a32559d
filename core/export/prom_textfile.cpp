// Label values are escaped per the exposition format (backslash, quote, newline); NaN/Inf print as Prometheus
// spells them, so a NaN loss reaches alerting as NaN.
#include "core/export/prom_textfile.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>

#include "core/files/replacement_file.hpp"

namespace msmon {

namespace {

std::string label_value(const std::string& v) {
    std::string out;
    for (const char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out.push_back(c);
    }
    return out;
}

std::string number(double v) {
    if (std::isnan(v)) return "NaN";
    if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

}  // namespace

std::string render_prom_text(const JobGauges& g) {
    std::string out;
    const std::string base = "job_id=\"" + label_value(g.job) + "\",node=\"" + label_value(g.node) + "\"";
    auto metric = [&](const char* name, const char* help, const std::function<void(const RankGauges&)>& samples) {
        out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
        for (const auto& r : g.ranks) samples(r);
    };
    auto sample = [&](const char* name, const RankGauges& r, double v, const std::string& extra = "") {
        out += std::string(name) + "{" + base + ",rank=\"" + std::to_string(r.rank) + "\"" + extra + "} " + number(v) +
               "\n";
    };
    metric("msmon_rank_last_step", "Latest training step this rank wrote any statistic for.", [&](const RankGauges& r) {
        if (r.last_step) sample("msmon_rank_last_step", r, static_cast<double>(*r.last_step));
    });
    metric("msmon_rank_seconds_since_last_step", "Seconds since the agent saw this rank's latest step arrive.",
           [&](const RankGauges& r) {
               if (r.seconds_since_step) sample("msmon_rank_seconds_since_last_step", r, *r.seconds_since_step);
           });
    metric("msmon_rank_loss", "Latest loss this rank logged (NaN when the trainer logged NaN).",
           [&](const RankGauges& r) {
               if (r.loss) sample("msmon_rank_loss", r, *r.loss);
           });
    metric("msmon_rank_global_norm", "Latest global gradient norm this rank logged.", [&](const RankGauges& r) {
        if (r.global_norm) sample("msmon_rank_global_norm", r, *r.global_norm);
    });
    metric("msmon_rank_anomalies",
           "Anomalies found on this rank so far, by rule (msprobe dumps and msmon's detectors).",
           [&](const RankGauges& r) {
               for (const auto& [rule, n] : r.anomalies_by_rule)
                   sample("msmon_rank_anomalies", r, static_cast<double>(n), ",rule=\"" + label_value(rule) + "\"");
           });
    metric("msmon_rank_checkpoints", "Checkpoints listed for this rank in health_ckpts.json.",
           [&](const RankGauges& r) {
               if (r.checkpoints > 0) sample("msmon_rank_checkpoints", r, static_cast<double>(r.checkpoints));
           });
    metric("msmon_rank_unhealthy_checkpoints", "Checkpoints of this rank flagged unhealthy.", [&](const RankGauges& r) {
        if (r.checkpoints > 0)
            sample("msmon_rank_unhealthy_checkpoints", r, static_cast<double>(r.unhealthy_checkpoints));
    });
    metric("msmon_rank_latest_checkpoint_healthy", "1 if this rank's latest checkpoint is healthy, 0 if not.",
           [&](const RankGauges& r) {
               if (r.latest_checkpoint_healthy)
                   sample("msmon_rank_latest_checkpoint_healthy", r, *r.latest_checkpoint_healthy ? 1 : 0);
           });
    out +=
        "# HELP msmon_textfile_updated_seconds When the agent last wrote this file (Unix time).\n"
        "# TYPE msmon_textfile_updated_seconds gauge\n"
        "msmon_textfile_updated_seconds{" +
        base + "} " + number(g.updated_unix_seconds) + "\n";
    return out;
}

std::map<int, StepSeen> read_step_times(const std::string& text, const std::string& job, const std::string& node) {
    const std::string base = "{job_id=\"" + label_value(job) + "\",node=\"" + label_value(node) + "\"";
    std::map<int, std::int64_t> steps;
    std::map<int, double> since;
    std::optional<double> updated;
    for (std::size_t start = 0; start < text.size();) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        start = end + 1;
        const auto brace = line.find('{');
        const auto close = line.rfind("} ");
        if (brace == std::string::npos || close == std::string::npos || line.compare(brace, base.size(), base) != 0)
            continue;
        const std::string name = line.substr(0, brace);
        char* parse_end = nullptr;
        const double v = std::strtod(line.c_str() + close + 2, &parse_end);
        if (parse_end == line.c_str() + close + 2 || !std::isfinite(v)) continue;
        if (name == "msmon_textfile_updated_seconds") {
            updated = v;
            continue;
        }
        const auto rank_at = line.find(",rank=\"", brace + base.size());
        if (rank_at != brace + base.size()) continue;
        const int rank = std::atoi(line.c_str() + rank_at + 7);
        if (name == "msmon_rank_last_step") steps[rank] = static_cast<std::int64_t>(v);
        else if (name == "msmon_rank_seconds_since_last_step") since[rank] = v;
    }
    std::map<int, StepSeen> out;
    if (!updated) return out;
    for (const auto& [rank, step] : steps)
        if (const auto it = since.find(rank); it != since.end()) out[rank] = {step, *updated - it->second};
    return out;
}

bool write_textfile_atomic(const std::string& dir, const std::string& name, const std::string& text,
                           std::string& error) {
    // node_exporter reads only *.prom: the temp name (core/files/replacement_file.hpp) ends in .msmon-XXXXXX. The
    // folder is often shared (the node_exporter textfile collector's): the file is made new (unnamed, or by mkstemp:
    // a name or link planted there by another user is never opened), then made readable to the collector.
    ReplacementFile file;
    if (!file.open(dir, name, error)) return false;
    ::fchmod(file.fd(), 0644);
    if (!file.write_all(text, error)) return false;
    ::fsync(file.fd());
    return file.replace(error);
}

}  // namespace msmon
