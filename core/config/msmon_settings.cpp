// Settings: a JSON object (from config.json, or from the TOML subset), then each entry checked against the table
// of known ones.
#include "core/config/msmon_settings.hpp"

#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

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

KeyLines json_key_lines(const std::string& text, const Json& doc) {
    KeyLines lines;
    for (const auto& [key, value] : doc.items()) {
        const auto at = text.find("\"" + key + "\"");
        if (at == std::string::npos) continue;
        lines[key] = line_at(text, at);
        if (!value.is_object()) continue;
        for (const auto& [inner, _] : value.items()) {
            const auto in = text.find("\"" + inner + "\"", at);
            if (in != std::string::npos) lines[key + "." + inner] = line_at(text, in);
        }
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
