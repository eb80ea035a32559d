// The state behind the TUI's config form: the file as last read, the user's unsaved version, what changed on disk
// meanwhile, and saving through guarded_save. Views draw it; only its methods touch the file.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/config/config_file.hpp"
#include "core/config/config_patch.hpp"
#include "core/config/guarded_save.hpp"
#include "core/config/monitor_config_schema.hpp"

namespace msmon {

// One line of the form: a field of msprobe's table (of the config's version), or a key msprobe does not know
// (kept as it is). monitor_v2's nested fields are rows of their own: key "monitors.cc.cc_log_only".
struct ConfigRow {
    std::string key;                     // the path as text
    std::vector<std::string> path;       // the path itself (object keys may contain dots)
    const ConfigField* field = nullptr;  // nullptr: unknown key
    bool present = false;                // in the edited document (else msprobe's default applies)
    nlohmann::ordered_json value;        // the edited value, or the default when absent
    bool changed = false;                // differs from the file
};

// The file changed on disk while the user had unsaved edits: both versions, for the user to choose.
struct ConfigConflict {
    nlohmann::ordered_json theirs;           // the file now
    std::vector<std::string> their_changes;  // file as it was → file now
    std::vector<std::string> my_changes;     // file as it was → my edits
};

class ConfigEditor {
public:
    explicit ConfigEditor(ConfigTarget target);

    const std::string& path() const { return target_.path; }
    // Reads the file (again); drops unsaved edits.
    void reload();
    // Looks at the file's stamp (one stat); on a change, reloads or — with unsaved edits — opens a conflict.
    // Returns true when something the user should see changed.
    bool poll();

    bool loaded() const { return loaded_; }
    const std::string& load_error() const { return load_error_; }
    std::vector<ConfigRow> rows() const;
    const nlohmann::ordered_json& edited() const { return edited_; }
    const nlohmann::ordered_json& on_disk() const { return base_; }
    ConfigPatch pending() const { return diff_configs(base_, edited_); }
    std::vector<std::string> pending_lines() const { return describe_patch(base_, pending()); }
    // v1 or monitor_v2, by the edited document's keys: which table, rules and actions apply.
    // The version of the file as read: removing `monitors` or adding a v1 key while editing does not make a v2 file
    // a v1 one (msprobe's v2 still reads it).
    MonitorConfigVersion version() const { return monitor_config_version(base_); }
    ConfigCheck check() const { return check_monitor_config(edited_, version()); }
    // Would the pending change start something that aborts training (print_struct, cc_log_only turned on)?
    bool pending_aborts_training() const;

    // Edits (nothing is written until save()). A key path reaches nested fields; a bare key is a top-level one.
    void toggle(const std::vector<std::string>& path);
    void toggle(const std::string& key) { toggle(std::vector<std::string>{key}); }
    // `text` is JSON; a bare word is taken as a string. Returns false with `error` when it is not usable.
    bool set(const std::vector<std::string>& path, const std::string& text, std::string& error);
    bool set(const std::string& key, const std::string& text, std::string& error) {
        return set(std::vector<std::string>{key}, text, error);
    }
    void remove(const std::vector<std::string>& path);
    void remove(const std::string& key) { remove(std::vector<std::string>{key}); }
    // v1's dynamic mode; false (and nothing changed) for a monitor_v2 config, which has none.
    bool start_collection(long long collect_times);  // dynamic_on true + collect_times N (the reset)
    bool stop_collection();                          // dynamic_on true + collect_times 0
    void discard_edits() { edited_ = base_; }

    // Writes the pending change (guarded_save). Refused while a conflict is open or when msprobe would reject it.
    SaveReport save(const SaveTiming& timing = {});

    const std::optional<ConfigConflict>& conflict() const { return conflict_; }
    void keep_mine();    // my changes applied on top of the file as it is now (still unsaved)
    void take_theirs();  // drop my changes

    // The last thing that happened to the file, for the status of the form ("reloaded: dynamic_on true → false
    // at 14:02:11 — collection finished?"), and when.
    const std::string& notice() const { return notice_; }
    // dynamic_on went from true to false on disk, not by us: a collection finished (the trainer's write-back).
    bool saw_write_back() const { return saw_write_back_; }
    const timespec& write_back_time() const { return write_back_time_; }

private:
    // Keys no field of `fields` names, under `node` (at `prefix`), recursing into objects that hold fields.
    void add_unknown_rows(const nlohmann::ordered_json& node, const std::vector<std::string>& prefix,
                          const std::vector<ConfigField>& fields, std::vector<ConfigRow>& out) const;
    void adopt(const nlohmann::ordered_json& doc, const FileStamp& stamp);
    // The file's stamp now (pinned afresh: the folder may have been replaced since); size -1 when it cannot be.
    FileStamp stamp_now() const;

    ConfigTarget target_;
    bool loaded_ = false;
    std::string load_error_;
    nlohmann::ordered_json base_ = nlohmann::ordered_json::object();
    nlohmann::ordered_json edited_ = nlohmann::ordered_json::object();
    FileStamp stamp_;
    std::optional<ConfigConflict> conflict_;
    std::string notice_;
    bool saw_write_back_ = false;
    timespec write_back_time_{};
};

}  // namespace msmon
