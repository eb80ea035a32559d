// Settings: a JSON object (from config.json, or from the TOML subset), then each entry checked against the table
// of known ones.
#include "core/config/msmon_settings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <unordered_map>

#include "core/files/folder_trust.hpp"
#include "core/log/logging.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

using Json = nlohmann::json;

// Where each key of the document was (for the TOML subset: known exactly; for JSON: the first line that names it
// after its table's name).
using KeyLines = std::map<std::string, int>;

int line_at(const std::string& text, std::size_t byte) {
    int line = 1;
    for (std::size_t i = 0; i < byte && i < text.size(); ++i) line += text[i] == '\n';
    return line;
}

// Where each quoted string of a JSON text is, found in one pass: a key's line is looked up, not searched for (a
// search per key made a file of 40,000 keys take 35 s to read).
class QuotedStrings {
public:
    explicit QuotedStrings(const std::string& text) {
        for (std::size_t i = 0; i < text.size(); ++i) {
            if (text[i] == '\n') newlines_.push_back(i);
            if (text[i] != '"') continue;
            const std::size_t open = i;
            for (++i; i < text.size() && text[i] != '"'; ++i) {
                if (text[i] == '\\') ++i;
                else if (text[i] == '\n') newlines_.push_back(i);
            }
            at_[text.substr(open + 1, i - open - 1)].push_back(open);
        }
    }
    // The first place `quoted` appears as a quoted string at or after `from`.
    std::optional<std::size_t> find(const std::string& quoted, std::size_t from = 0) const {
        const auto it = at_.find(quoted);
        if (it == at_.end()) return std::nullopt;
        const auto at = std::lower_bound(it->second.begin(), it->second.end(), from);
        if (at == it->second.end()) return std::nullopt;
        return *at;
    }
    int line_of(std::size_t byte) const {
        return 1 + static_cast<int>(std::lower_bound(newlines_.begin(), newlines_.end(), byte) - newlines_.begin());
    }

private:
    std::unordered_map<std::string, std::vector<std::size_t>> at_;  // in order
    std::vector<std::size_t> newlines_;
};

KeyLines json_key_lines(const std::string& text, const Json& doc) {
    const QuotedStrings quoted(text);
    KeyLines lines;
    for (const auto& [key, value] : doc.items()) {
        const auto at = quoted.find(key);
        if (!at) continue;
        lines[key] = quoted.line_of(*at);
        if (!value.is_object()) continue;
        for (const auto& [inner, _] : value.items())
            if (const auto in = quoted.find(inner, *at)) lines[key + "." + inner] = quoted.line_of(*in);
    }
    return lines;
}

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

// One TOML value: a string, a boolean or a number; nullopt with `error` otherwise.
std::optional<Json> toml_value(const std::string& text, std::string& error) {
    if (text.empty()) {
        error = "a value is missing after '='";
        return std::nullopt;
    }
    if (text.front() == '"') {
        std::string out;
        for (std::size_t i = 1; i < text.size(); ++i) {
            const char c = text[i];
            if (c == '"') {
                if (const std::string rest = trim(text.substr(i + 1)); !rest.empty() && rest.front() != '#') {
                    error = "text after the closing quote: " + rest;
                    return std::nullopt;
                }
                return Json(out);
            }
            if (c != '\\') {
                out += c;
                continue;
            }
            if (++i == text.size()) break;
            const char e = text[i];
            if (e == 'n') out += '\n';
            else if (e == 't') out += '\t';
            else if (e == '"' || e == '\\') out += e;
            else {
                error = std::string("unknown escape \\") + e;
                return std::nullopt;
            }
        }
        error = "a string without its closing \"";
        return std::nullopt;
    }
    if (text.front() == '\'') {
        const auto end = text.find('\'', 1);
        if (end == std::string::npos) {
            error = "a string without its closing '";
            return std::nullopt;
        }
        return Json(text.substr(1, end - 1));
    }
    std::string bare = text;
    if (const auto hash = bare.find('#'); hash != std::string::npos) bare = trim(bare.substr(0, hash));
    if (bare == "true") return Json(true);
    if (bare == "false") return Json(false);
    if (const auto d = parse_double(bare)) return Json(*d);
    error = "not a value msmon reads (a \"string\", true/false or a number): " + bare;
    return std::nullopt;
}

// The TOML subset as the same JSON object config.json would give; a line it cannot read is a problem.
Json parse_toml(const std::string& text, KeyLines& lines, std::vector<SettingsProblem>& problems) {
    Json doc = Json::object();
    std::string table;
    std::istringstream in(text);
    std::string raw;
    for (int n = 1; std::getline(in, raw); ++n) {
        const std::string line = trim(raw);
        if (line.empty() || line.front() == '#') continue;
        if (line.front() == '[') {
            const auto close = line.find(']');
            if (close == std::string::npos || line.find('.') != std::string::npos) {
                problems.push_back({n, "a table header msmon reads is [name]: " + line});
                continue;
            }
            table = trim(line.substr(1, close - 1));
            lines[table] = n;
            if (!doc.contains(table)) doc[table] = Json::object();
            continue;
        }
        const auto eq = line.find('=');
        if (eq == std::string::npos) {
            problems.push_back({n, "not 'key = value': " + line});
            continue;
        }
        std::string key = trim(line.substr(0, eq));
        if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') && key.back() == key.front())
            key = key.substr(1, key.size() - 2);  // a quoted key ("chart:w")
        std::string error;
        const auto value = toml_value(trim(line.substr(eq + 1)), error);
        if (!value) {
            problems.push_back({n, (table.empty() ? key : table + "." + key) + ": " + error});
            continue;
        }
        if (table.empty()) doc[key] = *value;
        else doc[table][key] = *value;
        lines[table.empty() ? key : table + "." + key] = n;
    }
    return doc;
}

struct Entry {
    const char* key;                                                               // "notify.bell"
    std::function<std::optional<std::string>(const Json&, MsmonSettings&)> apply;  // an error, or none
};

std::optional<std::string> boolean(const Json& v, bool& into) {
    if (!v.is_boolean()) return "must be true or false";
    into = v.get<bool>();
    return std::nullopt;
}

// A bound in MiB: 1 to 65,536.
std::optional<std::string> mebibytes(const Json& v, std::int64_t& into) {
    if (!v.is_number() || !(v.get<double>() >= 1) || v.get<double>() > 65536 ||
        v.get<double>() != std::floor(v.get<double>()))
        return "must be a whole number of MiB, 1 to 65536";
    into = static_cast<std::int64_t>(v.get<double>()) * InputLimits::kMiB;
    return std::nullopt;
}

const std::vector<Entry>& entries() {
    static const std::vector<Entry> table = {
        {"notify.bell", [](const Json& v, MsmonSettings& s) { return boolean(v, s.bell); }},
        {"notify.desktop", [](const Json& v, MsmonSettings& s) { return boolean(v, s.desktop_notify); }},
        {"on_incident.command",
         [](const Json& v, MsmonSettings& s) -> std::optional<std::string> {
             if (!v.is_string()) return "must be a string (a command for /bin/sh -c)";
             s.on_incident = v.get<std::string>();
             return std::nullopt;
         }},
        {"on_incident.timeout_s",
         [](const Json& v, MsmonSettings& s) -> std::optional<std::string> {
             if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 86400)
                 return "must be a number of seconds, 0 < S <= 86400";
             s.on_incident_timeout_s = v.get<double>();
             return std::nullopt;
         }},
        {"x_axis",
         [](const Json& v, MsmonSettings& s) -> std::optional<std::string> {
             if (!v.is_string() || (v != "step" && v != "wall" && v != "elapsed"))
                 return "must be \"step\", \"wall\" or \"elapsed\"";
             s.x_axis = v.get<std::string>();
             return std::nullopt;
         }},
        {"theme",
         [](const Json& v, MsmonSettings& s) -> std::optional<std::string> {
             if (!v.is_string() || (v != "default" && v != "mono")) return "must be \"default\" or \"mono\"";
             s.theme = v.get<std::string>();
             return std::nullopt;
         }},
        {kJsonDocumentLimit, [](const Json& v, MsmonSettings& s) { return mebibytes(v, s.limits.json_document); }},
        {kPromFileLimit, [](const Json& v, MsmonSettings& s) { return mebibytes(v, s.limits.prom_file); }},
        {kClickHouseAnswerLimit,
         [](const Json& v, MsmonSettings& s) { return mebibytes(v, s.limits.clickhouse_answer); }},
        {kClickHouseInflatedLimit,
         [](const Json& v, MsmonSettings& s) { return mebibytes(v, s.limits.clickhouse_inflated); }},
        {kEventRecordLimit, [](const Json& v, MsmonSettings& s) { return mebibytes(v, s.limits.event_record); }},
    };
    return table;
}

void apply(const Json& doc, const KeyLines& lines, LoadedSettings& out) {
    auto line_of = [&](const std::string& key) {
        const auto it = lines.find(key);
        return it == lines.end() ? 0 : it->second;
    };
    if (!doc.is_object()) {
        out.problems.push_back({1, "the settings must be one object ({...})"});
        return;
    }
    std::map<std::string, const Json*> flat;
    for (const auto& [key, value] : doc.items()) {
        if (value.is_object())
            for (const auto& [inner, v] : value.items()) flat[key + "." + inner] = &v;
        else flat[key] = &value;
    }
    for (const auto& [key, value] : flat) {
        if (key.rfind("keys.", 0) == 0) {
            if (!value->is_string()) out.problems.push_back({line_of(key), key + " must be a string (the new key)"});
            else out.settings.keys.push_back({key.substr(5), value->get<std::string>(), line_of(key)});
            continue;
        }
        const Entry* entry = nullptr;
        for (const Entry& e : entries())
            if (key == e.key) entry = &e;
        if (!entry) {
            std::string known;
            for (const Entry& e : entries()) known += (known.empty() ? "" : ", ") + std::string(e.key);
            out.problems.push_back(
                {line_of(key), "unknown setting " + key + " (msmon knows " + known + ", keys.VIEW:K)"});
            continue;
        }
        if (auto error = entry->apply(*value, out.settings)) out.problems.push_back({line_of(key), key + " " + *error});
    }
}

}  // namespace

std::vector<std::string> LoadedSettings::messages() const {
    std::vector<std::string> out;
    for (const auto& p : problems)
        out.push_back(path + (p.line > 0 ? " line " + std::to_string(p.line) : std::string()) + ": " + p.message);
    return out;
}

LoadedSettings parse_settings(const std::string& path, const std::string& text) {
    LoadedSettings out;
    out.path = path;
    KeyLines lines;
    const bool toml = path.size() >= 5 && path.compare(path.size() - 5, 5, ".toml") == 0;
    Json doc;
    if (toml) {
        doc = parse_toml(text, lines, out.problems);
    } else {
        try {
            doc = Json::parse(text);
        } catch (const Json::parse_error& e) {
            out.problems.push_back({line_at(text, e.byte > 0 ? e.byte - 1 : 0), std::string("not JSON: ") + e.what()});
            return out;
        }
        if (doc.is_object()) lines = json_key_lines(text, doc);
    }
    apply(doc, lines, out);
    return out;
}

LoadedSettings load_settings() {
    std::vector<std::string> candidates;
    if (const char* env = std::getenv("MSMON_CONFIG")) {
        if (!*env) return {};
        candidates.push_back(env);
    } else {
        std::string dir;
        try {
            dir = config_dir();
        } catch (const std::exception&) {
            return {};  // no home at all: nothing to read
        }
        candidates = {dir + "/config.json", dir + "/config.toml"};
    }
    std::string home;
    try {
        home = home_dir();
    } catch (const std::exception&) {
        home = "/";  // no home: every folder up to / is checked
    }
    for (const std::string& path : candidates) {
        std::string text, error;
        switch (read_trusted_file(path, home, text, error)) {
            case TrustedRead::ok:
                return parse_settings(path, text);
            case TrustedRead::missing:
                if (std::getenv("MSMON_CONFIG")) {
                    LoadedSettings out;
                    out.path = path;
                    out.problems.push_back({0, "cannot be read (MSMON_CONFIG names it)"});
                    return out;
                }
                continue;
            case TrustedRead::refused: {
                LoadedSettings out;
                out.path = path;
                out.problems.push_back({0, error});
                return out;
            }
        }
    }
    return {};
}

}  // namespace msmon
