// New incidents by their key anomalies; an incident as JSON and as one line.
#include "core/detect/new_incidents.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

std::string anomaly_identity(const AnomalyRecord& a) {
    std::string id;
    id.reserve(a.source.size() + a.rule.size() + a.kind.size() + a.vpp_stage.size() + a.name.size() + a.op.size() + 48);
    // Fields joined with a byte no name holds (msprobe's names are printable; a hostile one still only
    // collides with itself).
    for (const std::string* f : {&a.source, &a.rule, &a.kind, &a.vpp_stage, &a.name, &a.op}) {
        id += *f;
        id += '\x1f';
    }
    id += std::to_string(a.rank);
    id += '\x1f';
    id += std::to_string(a.step);
    id += '\x1f';
    id += a.micro_step ? std::to_string(*a.micro_step) : std::string("-");
    return id;
}

void NewIncidents::prime(const std::vector<AnomalyRecord>& anomalies) {
    for (const AnomalyRecord& a : anomalies)
        if (a.score >= kIncidentScore) seen_.insert(anomaly_identity(a));
}

std::optional<NewIncidents::Clock::time_point> NewIncidents::next_due() const {
    std::optional<Clock::time_point> first;
    for (const auto& [_, seen] : pending_)
        if (!first || seen < *first) first = seen;
    if (first) *first = std::max(*first + settle_, retry_at_);
    return first;
}

std::vector<std::size_t> NewIncidents::take(const std::vector<AnomalyRecord>& anomalies,
                                            const std::vector<Incident>& incidents, Clock::time_point now,
                                            const ReadProgress* progress) {
    std::vector<std::size_t> fresh;
    std::vector<std::string> keys;
    for (std::size_t i = 0; i < incidents.size(); ++i) {
        const Incident& inc = incidents[i];
        if (inc.score < kIncidentScore) continue;
        keys.clear();
        bool known = false;
        for (const std::size_t m : inc.members) {
            if (anomalies[m].score < kIncidentScore) continue;
            keys.push_back(anomaly_identity(anomalies[m]));
            known = known || seen_.count(keys.back()) > 0;
        }
        if (keys.empty()) continue;
        if (!known) {
            // First seen when any of its key anomalies was; it is announced once it has settled.
            Clock::time_point first = now;
            for (const auto& k : keys)
                if (const auto it = pending_.find(k); it != pending_.end()) first = std::min(first, it->second);
            bool settled = now - first >= settle_;
            if (settled && progress && now - first < kMaxSettle)  // what could come before the origin is in
                settled = progress->quiet_at >= first + settle_ &&
                          (!progress->held_from_step || *progress->held_from_step > inc.first_step) &&
                          progress->all_ranks_at >= inc.first_step;
            if (!settled && now - first >= settle_) retry_at_ = now + kProgressRetry;  // reading is not there yet
            if (!settled) {
                for (const auto& k : keys) pending_.try_emplace(k, first);
                continue;
            }
            fresh.push_back(i);
        }
        for (const auto& k : keys) pending_.erase(k);
        seen_.insert(keys.begin(), keys.end());  // a grown incident's new members are not news either
    }
    return fresh;
}

namespace {

// JSON has no NaN or infinity: a number when finite, else null, with the text beside it.
void put_number(nlohmann::ordered_json& j, const char* key, double v) {
    if (std::isfinite(v)) j[key] = v;
    else j[key] = nullptr;
}

}  // namespace

std::string incident_json(const std::vector<AnomalyRecord>& anomalies, const Incident& incident,
                          const std::vector<std::string>& job_folders) {
    const AnomalyRecord& o = anomalies[incident.origin];
    nlohmann::ordered_json j;
    j["event"] = "incident";
    j["step"] = o.step;
    if (o.micro_step) j["micro_step"] = *o.micro_step;
    else j["micro_step"] = nullptr;
    j["rank"] = o.rank;
    j["kind"] = o.kind;
    j["module"] = o.name;
    j["vpp_stage"] = o.vpp_stage;
    j["op"] = o.op;
    j["rule"] = o.rule;
    j["source"] = o.source;
    j["score"] = incident.score;
    put_number(j, "value", o.value);
    j["value_text"] = format_double(o.value);
    if (o.reference) put_number(j, "reference", *o.reference);
    else j["reference"] = nullptr;
    j["message"] = o.message;
    j["first_step"] = incident.first_step;
    j["last_step"] = incident.last_step;
    j["ranks"] = incident.ranks;
    j["anomalies"] = incident.members.size();
    j["job"] =
        job_folders.size() == 1 ? nlohmann::ordered_json(job_folders.front()) : nlohmann::ordered_json(job_folders);
    // ensure_ascii: every byte above 0x7F and every control byte is a \u escape; invalid UTF-8 is replaced.
    return j.dump(-1, ' ', true, nlohmann::ordered_json::error_handler_t::replace);
}

std::string origin_value_text(const AnomalyRecord& o) {
    return o.op.empty() || o.op == "value" ? format_short(o.value) : o.op + " " + format_short(o.value);
}

std::string incident_headline(const std::vector<AnomalyRecord>& anomalies, const Incident& incident,
                              std::size_t max_bytes) {
    const AnomalyRecord& o = anomalies[incident.origin];
    std::string line = origin_value_text(o) + " in " + o.kind + " at step " + std::to_string(o.step) + ", rank " +
                       std::to_string(o.rank);
    if (!o.name.empty()) line += ", " + o.name;
    line += " (" + o.rule;
    if (incident.ranks.size() > 1) line += ", " + std::to_string(incident.ranks.size()) + " ranks";
    line += ")";
    std::string safe = escape_for_display(line);
    if (safe.size() > max_bytes) {
        std::size_t end = max_bytes >= 3 ? max_bytes - 3 : 0;
        while (end > 0 && (static_cast<unsigned char>(safe[end]) & 0xC0) == 0x80) --end;
        safe.resize(end);
        safe += "\xE2\x80\xA6";
    }
    return safe;
}

}  // namespace msmon
