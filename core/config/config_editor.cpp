// ConfigEditor: unsaved edits against the file, external changes, conflicts, saving.
#include "core/config/config_editor.hpp"

#include <algorithm>

namespace msmon {

using json = nlohmann::ordered_json;

namespace {

bool turned_on(const json& before, const json& after, const char* key, const char* sub = nullptr) {
    auto get = [&](const json& d) {
        const json* v = sub ? find_path(d, {key, sub}) : find_path(d, {key});
        return v && v->is_boolean() && v->get<bool>();
    };
    return get(after) && !get(before);
}

bool dynamic_on(const json& d) {
    const json* v = find_path(d, {"dynamic_on"});
    return v && v->is_boolean() && v->get<bool>();
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += (out.empty() ? "" : ", ") + l;
    return out;
}

}  // namespace

ConfigEditor::ConfigEditor(ConfigTarget target) : target_(std::move(target)) {
    reload();
}

FileStamp ConfigEditor::stamp_now() const {
    std::string ignored;
    const auto file = pin_monitor_config(target_, ignored);
    return file ? stamp_of(*file) : FileStamp{};
}

void ConfigEditor::adopt(const json& doc, const FileStamp& stamp) {
    base_ = doc;
    edited_ = doc;
    stamp_ = stamp;
    conflict_.reset();
    loaded_ = true;
    load_error_.clear();
}

void ConfigEditor::reload() {
    const ConfigRead r = read_monitor_config(target_);
    if (r.status != ConfigRead::Status::ok || !r.doc.is_object()) {
        loaded_ = false;
        load_error_ =
            r.status == ConfigRead::Status::ok ? "the file is not a JSON object (msprobe would crash on it)" : r.error;
        stamp_ = stamp_now();
        return;
    }
    adopt(r.doc, stamp_now());
}

bool ConfigEditor::poll() {
    const FileStamp now = stamp_now();
    if (now == stamp_) return false;
    const ConfigRead r = read_monitor_config(target_);
    if (r.status != ConfigRead::Status::ok || !r.doc.is_object()) {
        stamp_ = now;
        notice_ = "the file changed and cannot be read: " + r.error;
        if (!loaded_) load_error_ = notice_;
        return true;
    }
    const json before = base_;
    const bool had_edits = !pending().empty();
    const std::vector<std::string> theirs = describe_patch(before, diff_configs(before, r.doc));
    if (loaded_ && dynamic_on(before) && !dynamic_on(r.doc)) {
        saw_write_back_ = true;
        write_back_time_ = now.mtime;
    }
    const std::string when = clock_text(now.mtime);
    if (!loaded_ || !had_edits) {
        const bool was_loaded = loaded_;
        adopt(r.doc, now);
        notice_ = was_loaded
                      ? "the file changed at " + when +
                            " and was reloaded: " + (theirs.empty() ? std::string("same content") : joined(theirs))
                      : "";
        return true;
    }
    // Unsaved edits and a change on disk: keep both, let the user choose.
    ConfigConflict c;
    c.theirs = r.doc;
    c.their_changes = theirs;
    c.my_changes = pending_lines();
    conflict_ = std::move(c);
    stamp_ = now;
    notice_ = "the file changed at " + when + " while you had unsaved edits";
    return true;
}

std::vector<ConfigRow> ConfigEditor::rows() const {
    std::vector<ConfigRow> out;
    const auto& fields = monitor_config_fields(version());
    for (const auto& f : fields) {
        ConfigRow row;
        row.key = f.name;
        row.path = field_path(f);
        row.field = &f;
        const json* now = find_path(edited_, row.path);
        const json* was = find_path(base_, row.path);
        row.present = now != nullptr;
        row.value = now ? *now : json::parse(f.fallback);
        row.changed = (now == nullptr) != (was == nullptr) || (now && !same_config_value(*now, *was));
        out.push_back(std::move(row));
    }
    add_unknown_rows(edited_, {}, fields, out);
    return out;
}

void ConfigEditor::add_unknown_rows(const json& node, const std::vector<std::string>& prefix,
                                    const std::vector<ConfigField>& fields, std::vector<ConfigRow>& out) const {
    for (auto it = node.begin(); it != node.end(); ++it) {
        std::vector<std::string> path = prefix;
        path.push_back(it.key());
        bool leaf = false, container = false;
        for (const auto& f : fields) {
            const auto fp = field_path(f);
            leaf = leaf || fp == path;
            container = container || (fp.size() > path.size() && std::equal(path.begin(), path.end(), fp.begin()));
        }
        if (leaf) continue;
        if (container && it->is_object()) {
            add_unknown_rows(*it, path, fields, out);
            continue;
        }
        ConfigRow row;
        row.key = path_text(path);
        row.path = path;
        row.present = true;
        row.value = *it;
        const json* was = find_path(base_, path);
        row.changed = !was || !same_config_value(*was, *it);
        out.push_back(std::move(row));
    }
}

bool ConfigEditor::pending_aborts_training() const {
    if (version() == MonitorConfigVersion::v2)
        return monitor_config_aborts_training(edited_, version()) && !monitor_config_aborts_training(base_, version());
    return turned_on(base_, edited_, "print_struct") || turned_on(base_, edited_, "cc_distribution", "cc_log_only");
}

void ConfigEditor::toggle(const std::vector<std::string>& path) {
    const json* v = find_path(edited_, path);
    const bool now = v && v->is_boolean() && v->get<bool>();
    edited_ = apply_patch(edited_, {{path, json(!now)}});
}

bool ConfigEditor::set(const std::vector<std::string>& path, const std::string& text, std::string& error) {
    json value;
    try {
        value = json::parse(text);
    } catch (const json::parse_error&) {
        if (text.empty() || text.find_first_of("{}[]\"") != std::string::npos) {
            error = "not JSON: " + text;
            return false;
        }
        value = text;  // a bare word: a string (format csv, sa_order ...)
    }
    edited_ = apply_patch(edited_, {{path, std::move(value)}});
    return true;
}

void ConfigEditor::remove(const std::vector<std::string>& path) {
    // Only what is there: removing a nested key must not create its parents.
    if (find_path(edited_, path)) edited_ = apply_patch(edited_, {{path, std::nullopt}});
}

bool ConfigEditor::start_collection(long long collect_times) {
    if (!has_dynamic_mode(version())) return false;
    edited_["dynamic_on"] = true;
    edited_["collect_times"] = collect_times;
    return true;
}

bool ConfigEditor::stop_collection() {
    if (!has_dynamic_mode(version())) return false;
    edited_["dynamic_on"] = true;
    edited_["collect_times"] = 0;
    return true;
}

void ConfigEditor::keep_mine() {
    if (!conflict_) return;
    const ConfigPatch mine = pending();
    base_ = conflict_->theirs;
    edited_ = apply_patch(base_, mine);
    conflict_.reset();
    notice_ = "your edits are now on top of the file's new content (not saved yet)";
}

void ConfigEditor::take_theirs() {
    if (!conflict_) return;
    base_ = conflict_->theirs;
    edited_ = base_;
    conflict_.reset();
    notice_ = "your edits were dropped; showing the file as it is now";
}

SaveReport ConfigEditor::save(const SaveTiming& timing) {
    SaveReport report;
    poll();  // a change on disk since the form was read must be seen before writing
    if (conflict_) {
        report.error = "the file changed on disk: choose your version or theirs first";
        return report;
    }
    const ConfigPatch patch = pending();
    if (patch.empty()) {
        report.error = "nothing to save";
        return report;
    }
    const json base_doc = base_;
    report = guarded_save(
        target_, patch,
        [version = version()](const json&, const json& after) -> std::string {
            const ConfigCheck c = check_monitor_config(after, version);
            return c.ok() ? std::string() : "not written — msprobe would reject it: " + c.errors.front();
        },
        timing);
    if (!report.writes.empty()) {
        // What we wrote is now the file; a racing rewrite after that shows up on the next poll.
        adopt(report.saved, report.writes.back());
        saw_write_back_ = false;
    }
    if (report.in_effect) {
        notice_ = "saved at " + clock_text(report.writes.back().mtime) + ": " + joined(describe_patch(base_doc, patch));
        if (!report.notices.empty()) notice_ += " (" + report.notices.back() + ")";
    } else {
        notice_ = "NOT saved: " + report.error;
    }
    return report;
}

}  // namespace msmon
