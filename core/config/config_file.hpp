// Reading and writing the monitor config while a trainer may be rewriting it (spec §5.4-§5.5): reads retry an
// empty or cut file; writes are atomic (temp file, fsync, rename onto the real path, folder fsync), keep the
// mode, and always move the mtime forward so the trainer notices.
#pragma once

#include <ctime>
#include <string>

#include <nlohmann/json.hpp>

namespace msmon {

struct ConfigRead {
    enum class Status { ok, missing, being_written, invalid } status = Status::missing;
    nlohmann::ordered_json doc;
    std::string error;
    timespec mtime{};
};

// Reads and parses the config; an empty or unparsable read right after a change is retried (`attempts` × 50 ms)
// before it is called invalid.
ConfigRead read_monitor_config(const std::string& path, int attempts = 20);

// The text msmon writes: a JSON object, indent 2 (as the trainer writes it), key order kept, floats as float
// literals (1e-08), real booleans, UTF-8 without BOM, a final newline.
std::string render_monitor_config(const nlohmann::ordered_json& doc);

// Atomically replaces the config (through a symlink, onto its target). Returns false with `error` set; the
// original file is then untouched.
bool write_monitor_config(const std::string& path, const nlohmann::ordered_json& doc, std::string& error);

}  // namespace msmon
