// The order a backlog is read in when msmon starts: what every rank is doing now first, its history behind.
// The first scan lists each folder's files (nothing is read while listing) and hands them here; the engine then
// takes, in turn:
//   1. the window: each folder's newest msprobe CSV of each kind (the file of the highest step range), so that every
//      rank's newest step is stored within moments of starting;
//   2. the other files, in their folders' order (MindFormers logs, event files, stacks, dumps, health files);
//   3. the history: the older CSVs of every folder in one ascending order of 64-step blocks across folders (a
//      block's files of one folder, then the next folder's), so that each series comes in step order, a block's
//      ranks come together (cross-rank checks complete as they go) and commits write a chunk per tensor and block.
// A rank's rows from the window are stored at once but judged only once its history is (IngestEngine: the history
// judges first, the window's rows are then read back from the store and judged in order).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace msmon {

struct PlannedFile {
    std::int64_t order = 0;  // the step range's start (or a log's age): reading order within its folder
    std::string name;
    bool csv_data = false;  // an msprobe statistics CSV, `kind` its kind
    std::string kind;
    std::int64_t last_step = -1;  // a CSV's step range end (-1: not known)
    bool settings_first = false;  // its format says the job's settings: among the other files, read first
};

// How far a backlog's reading has come, for the screen.
struct BackfillProgress {
    bool active = false;           // history is still being read
    std::size_t files = 0;         // files listed at start
    std::size_t files_fed = 0;     // handed to reading
    std::int64_t first_step = -1;  // the backlog's CSV step range (-1: none)
    std::int64_t last_step = -1;
    std::int64_t history_through = -1;  // every older CSV up to this step is read (-1: none yet)
    std::int64_t unread_last = -1;      // the last step of a CSV not read yet: history_through+1 .. this is unread
    std::size_t folders = 0;            // folders with CSVs (ranks)
};

class BackfillPlan {
public:
    using Entry = std::pair<std::string, std::string>;  // (folder, file name)

    // A folder's files as listed (any order).
    void add_folder(const std::string& dir, std::vector<PlannedFile> files);

    // 1: each folder's newest CSV of each kind.
    std::vector<Entry> take_window();
    // 2: every file that is not an msprobe CSV: those that say the job's settings first, then the rest, folder by
    // folder in reading order.
    std::vector<Entry> take_others();
    // 3: up to `n` of the remaining CSVs: by block of 64 steps, then folder, then step range, never past the end of
    // one folder's block (a part). `part_done`: the part's last file is among them (or nothing is left). A batch
    // cut only between parts holds each tensor's steps of a block together: one chunk, no merge (engine_backfill).
    static constexpr int kBlockShift = 6;
    std::vector<Entry> take_history(std::size_t n, bool* part_done = nullptr);

    bool done() const { return fed_ == total_; }
    // Where reading stands; moves the folders' cursors past what is taken (O(folders)).
    BackfillProgress progress();

private:
    // A listed file as kept until it is taken: 32 bytes, and its name in the folder's arena unless it is an msprobe
    // CSV's usual one (204,672 files of a 64-rank backlog: ~7 MB, where PlannedFiles took ~30 MB).
    static constexpr std::uint16_t kNotCsv = 0xFFFF;
    struct Slot {
        std::int64_t order = 0;
        std::int64_t last_step = -1;
        std::uint32_t name_at = 0;
        std::uint16_t name_len = 0;
        std::uint16_t kind = kNotCsv;  // index in kinds_, or kNotCsv
        bool settings_first = false;
        bool taken = false;
        bool named_by_range = false;  // "<kind>_<order>-<last_step>.csv": the name is not kept, it is made again
        bool csv() const { return kind != kNotCsv; }
    };
    static_assert(sizeof(Slot) == 32);
    struct Folder {
        std::string dir;
        std::string names;        // every file's name, one after another
        std::vector<Slot> files;  // by (order, name)
        std::size_t next = 0;     // the first CSV not yet taken by the history
        std::size_t top = 0;      // one past the last CSV not taken (by any phase)
        bool has_csv = false;
    };
    static void skip_taken(Folder& f);
    Entry take(Folder& f, std::size_t i);
    std::string range_name(const Slot& s) const;
    std::uint16_t kind_index(const std::string& kind);

    std::vector<Folder> folders_;
    std::vector<std::string> kinds_;
    std::size_t total_ = 0, fed_ = 0;
    std::int64_t first_step_ = -1, last_step_ = -1;
};

}  // namespace msmon
