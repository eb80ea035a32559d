// Saving a change to the monitor config while msprobe's ranks may be rewriting it (its write-back of
// `dynamic_on: false`, and the partial file a reader can catch mid-edit).
//
// msprobe's write-back (`dynamic_on: false` when a collection ends) is a read-modify-write of the whole file from
// every monitoring rank, not atomic. Two races can swallow an editor's save:
//   * lost update: a rank read the file just before our rename and writes its copy over ours;
//   * hidden mtime: a rank's write-back lands on the old file and its getmtime() then reads OUR new mtime, so that
//     rank never reads our content.
// So a save (1) waits until the file has been quiet for a moment (no write-back burst in progress), (2) applies
// the change to the file as it is now and writes it atomically, (3) watches the file and the replaced one for a
// settle window, and (4) if either was rewritten meanwhile, applies the change again on top of what is there now
// (up to `max_reapply` times) — and says so. It never reports success for a change that is not in the file.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/config/config_file.hpp"
#include "core/config/config_patch.hpp"

namespace msmon {

struct SaveTiming {
    int quiet_ms = 300;      // the file's mtime must be at least this old before we write
    int settle_ms = 300;     // how long we watch for a racing write-back after each write (keep it under one step)
    int max_wait_ms = 5000;  // give up waiting for quiet after this long (and write anyway)
    int max_reapply = 3;
    // The job's step time, when known. A collection that ends in the step during which we save rewrites the file
    // (dynamic_on false) at the end of that step from OUR content and records its own mtime — so it never reloads
    // our change. That write-back comes less than one step after the save, while a collection we start cannot end
    // sooner than one step after it: when the replaced file had dynamic_on true (a collection may be running), the
    // settle window stretches to one step, and a write-back inside it counts as a race.
    int step_ms = 0;
    int poll_ms = 5;
    // Tests only: the windows a racing rename aims at. After each read, before the write that follows it; and
    // inside the write, at the last moment before the new file is renamed into place.
    std::function<void()> before_write, before_rename;
};

struct SaveReport {
    bool in_effect = false;         // the change is in the file, which nobody rewrote during the last settle window
    std::vector<FileStamp> writes;  // every write msmon made, in order (the last one is what the trainer should read)
    std::vector<timespec> written_at;  // wall clock right after each write's rename
    std::vector<std::string> notices;  // what happened on the way, for the user
    nlohmann::ordered_json saved;      // the document of the last write
    nlohmann::ordered_json replaced;   // the file as it was before the first write
    std::string error;                 // why nothing (more) was written
};

// Checks the document about to be written; returns an empty string to allow it, else the reason not to.
using SaveVeto = std::function<std::string(const nlohmann::ordered_json& before, const nlohmann::ordered_json& after)>;

// The config's folder is pinned once, before the first read: every read and write of this save goes through it.
SaveReport guarded_save(const ConfigTarget& target, const ConfigPatch& patch, const SaveVeto& veto,
                        const SaveTiming& timing = {});

// "14:02:11.123" in local time.
std::string clock_text(const timespec& t);

}  // namespace msmon
