// What views and the CLI may ask of a store. Backends (SQLite now; a column store later) implement it.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/layout/run_segments.hpp"
#include "core/model/anomaly_record.hpp"
#include "core/model/record_batch.hpp"
#include "core/model/threshold_use.hpp"
#include "core/steps_list.hpp"
#include "store/series_reduction.hpp"
#include "store/store_location.hpp"

namespace msmon {

struct PointFilter {
    std::optional<int> rank;
    std::optional<std::string> kind;
    std::optional<std::string> name_regex;  // ECMAScript, searched anywhere in the name
    std::optional<std::string> op;
    std::optional<StepList> steps;
};

// One value of one op of one row. Text ops (shape, dtype) carry `text` instead of `value`.
struct Point {
    int rank = 0;
    std::int64_t run_id = 0;
    std::string_view kind;
    std::string_view vpp_stage;
    std::string_view name;
    std::optional<std::int64_t> micro_step;
    std::int64_t step = 0;
    std::string_view op;
    bool is_text = false;
    double value = 0;
    std::string_view text;
};

struct StoreSummary {
    std::int64_t runs = 0;
    std::int64_t ranks = 0;
    std::int64_t tensors = 0;
    std::int64_t series = 0;  // (tensor, op) pairs
    std::int64_t files = 0;
    std::int64_t issues = 0;
    std::int64_t repeats = 0;  // rows that repeated a stored (tensor, step): the later value replaced the earlier
};

struct IssueRecord {
    std::string path;
    std::int64_t line = 0;
    std::string reason;
    std::string excerpt;
};

struct AnomalyFilter {
    std::optional<std::string> source;  // msprobe | detected; none: both
    std::optional<int> rank;
    std::optional<StepList> steps;
};

// The Anomalies table's default view, paged: one group per (source, rule, rank, kind, name, op), highest rank
// score first, ties in the order the groups first appeared (see store/anomaly_groups.hpp).
struct AnomalyGroupRequest {
    std::optional<std::string> source, rule, kind;
    std::optional<int> rank;
    std::optional<std::string> name_regex;  // ECMAScript, searched anywhere in the name
    std::size_t offset = 0, limit = 100;
};

struct AnomalyGroup {
    AnomalyRecord face;  // the member ranked highest
    int count = 1;
    std::int64_t first_step = 0, last_step = 0;
    double rank_score = 0;
};

struct AnomalyGroupPage {
    std::vector<AnomalyGroup> groups;
    std::int64_t total_groups = 0;     // matching the request, on every page
    std::int64_t total_anomalies = 0;  // in the store
};

// Where anomalies worth a mark are: (rank, step) pairs with an anomaly scored at least min_score, from step
// `from_step` on; and how many anomalies the store holds.
struct AnomalyMarks {
    std::int64_t total = 0;
    std::vector<std::pair<int, std::int64_t>> marks;
};

struct StepValue {
    std::int64_t step = 0;
    double value = 0;
};

// One statistic per rank: the (kind, op) combined over the parameters whose names match (norm → L2 of norms,
// max → max, min → min, nans → sum, anything else → mean). NaN anywhere in a step makes that step NaN.
struct RankSeriesRequest {
    std::string kind;
    std::string op;
    std::optional<std::string> name_regex;
    std::int64_t last_steps = 0;  // 0: every step; else only the latest N steps of the data
    SeriesWindow window;          // columns > 0: only the points that draw the same on that many columns
};

struct RankSeries {
    int rank = 0;
    std::vector<StepValue> points;  // step-sorted
};

// What there is to look at: kinds with their ops, ranks, the step range.
struct StoreCatalog {
    std::vector<std::pair<std::string, std::vector<std::string>>> kinds;  // kind → ops (numeric)
    std::vector<int> ranks;
    std::int64_t min_step = 0, max_step = -1;
};

// One text summary of a run: what MindFormers writes on TensorBoard's TEXT page at start-up (its config, one
// key per tag), stored as a "config" event "<key>: <text>". Text is as written: escape it before showing it.
struct RunConfigEntry {
    std::int64_t run_id = 0;
    int rank = 0;
    std::string source;  // the folder of the run: a rank folder, or the MindFormers output folder of event files
    std::optional<std::int64_t> step;
    std::string key;  // the tag without "/text_summary"
    std::string text;
};

// A stored config event's message, "<key>: <text>" (core/ingest/event_file_consumer.cpp), into key and text.
inline void split_config_message(const std::string& message, RunConfigEntry& into) {
    const auto colon = message.find(": ");  // MindFormers' keys hold no ": "
    into.key = colon == std::string::npos ? message : message.substr(0, colon);
    into.text = colon == std::string::npos ? std::string() : message.substr(colon + 2);
}

// The module names a tensor's module may be stored under, to try in this order: the name with and without
// msprobe's "0:" prefix, then again with its last dotted part trimmed (".weight", ".input", ...), and so on
// ("fc1.weight" → "0:fc1.weight", "fc1.weight", "0:fc1", "fc1"). Reader::module_info takes the first known
// one.
inline std::vector<std::string> module_candidates(const std::string& tensor_name) {
    std::vector<std::string> out;
    for (std::string name = tensor_name; !name.empty();) {
        out.push_back("0:" + name);
        out.push_back(name);
        const auto dot = name.rfind('.');
        if (dot == std::string::npos) break;
        name.resize(dot);
    }
    return out;
}

// One row of the Layers view: one tensor of one kind on one rank (each micro-step its own row).
struct ModuleRow {
    std::string name;
    std::string vpp_stage;
    std::optional<std::int64_t> micro_step;
    bool operator==(const ModuleRow&) const = default;
};

// `op` of each of `rows` (all of `kind`, on `rank`): the steps of the window [lo, hi] only (either bound absent: the
// data's), reduced to `window.columns` as rank_series is (series_reduction.hpp); no columns: every step of it.
struct ModuleSeriesRequest {
    std::string kind;
    std::string op;
    int rank = 0;
    std::vector<ModuleRow> rows;
    SeriesWindow window;
};

struct StepWallTime {
    std::int64_t step = 0;
    std::int64_t wall_ms = 0;
};

// The whole job's layout and its job-level judge (msmon judge), where a store knows them (ClickHouse).
struct JobPlacement {
    std::vector<std::pair<int, std::string>> rank_nodes;  // rank → the node whose agent shipped it, by rank
    std::int64_t judged_steps = 0;                        // steps a judge has judged (0: no judge yet)
    std::int64_t judged_through = 0;                      // the highest of them
    std::string last_judge, last_judged;                  // which judge, and when (the server's time)
};

class Reader {
public:
    virtual ~Reader() = default;
    // Streams matching points: by rank, run, kind, then tensors in the order the files first listed them
    // (the model's order), each tensor's steps ascending, ops in the file's column order.
    virtual void points(const PointFilter& filter, const std::function<void(const Point&)>& sink) = 0;
    virtual StoreSummary summary() = 0;
    virtual std::vector<IssueRecord> issues(std::size_t limit) = 0;
    // How many malformed lines the store holds (every session's, not only the running one's).
    virtual std::uint64_t issue_count() { return issues(std::numeric_limits<std::size_t>::max()).size(); }
    // Anomalies in the order they were stored (a dump's entries in file order).
    virtual std::vector<AnomalyRecord> anomalies(const AnomalyFilter& filter) = 0;
    virtual AnomalyGroupPage anomaly_groups(const AnomalyGroupRequest& request) = 0;
    virtual AnomalyMarks anomaly_marks(double min_score, std::int64_t from_step) = 0;
    // Events from the logs, by step then rank (events without a step last, in the order read).
    virtual std::vector<EventRecord> events() = 0;
    // The runs' config from text summaries, by rank, run, then in the order written; `rank`: one rank only.
    virtual std::vector<RunConfigEntry> run_config(std::optional<int> rank) = 0;
    // The thresholds MindFormers' checks were judged with, and whose they are (core/detect/job_thresholds.hpp);
    // none where the store does not keep them.
    virtual std::vector<ThresholdUse> thresholds_used() { return {}; }
    // Checkpoints from every health_ckpts.json, in file order.
    virtual std::vector<CheckpointRecord> checkpoints() = 0;
    virtual StoreCatalog catalog() = 0;
    // The latest step each rank has written anything for.
    virtual std::vector<std::pair<int, std::int64_t>> rank_last_steps() = 0;
    // Where a tensor's module sits: its module_struct.json entry and its stack_info.csv call stack (either
    // may be empty). The module is the first of module_candidates(tensor_name) with either.
    struct ModuleInfo {
        std::string module;
        std::string structure;  // JSON text
        std::string stack;
    };
    virtual ModuleInfo module_info(int rank, const std::string& tensor_name) = 0;
    virtual std::vector<RankSeries> rank_series(const RankSeriesRequest& request) = 0;
    // The tensors of `kind` on `rank` in forward order: the order the rank's runs first listed them (msprobe
    // writes a step's activations in the order the model runs), a later run's new tensors after.
    virtual std::vector<ModuleRow> module_rows(const std::string& kind, int rank);
    // One step-sorted series per requested row, in the request's order (empty where a row has no values); a step
    // two runs wrote (a restart) keeps the later run's value. This default streams points(); stores override it
    // to read only the rows asked for.
    virtual std::vector<std::vector<StepValue>> module_series(const ModuleSeriesRequest& request);
    // The latest steps msprobe collected (any rank, any CSV kind), newest first, at most `limit` of them: what a
    // dynamic collection wrote, for the config view's "collecting since step N, k of N".
    virtual std::vector<std::int64_t> collected_steps(std::size_t limit) = 0;
    // Every rank's runs as segments of its training (core/layout/run_segments.hpp), ordered by order_segments,
    // each with the stretch a restart abandoned; a backend that keeps no runs: none.
    virtual std::vector<RunSegment> run_segments() = 0;
    // When each step was written, step-sorted: the earliest time any rank wrote it (ms since the epoch), each
    // rank's time taken from the run that counts for the step (a restart's later one). Steps with no known time
    // (a store older than the times, a source without them) are left out.
    virtual std::vector<StepWallTime> step_times() = 0;
    // Which node holds each rank and how far the job-level judge got: a store of one node's ranks knows neither.
    virtual std::optional<JobPlacement> job_placement() { return std::nullopt; }
};

// Opens an existing store read-only, its path resolved and checked first (resolve_store_path). Throws SqliteError
// if it cannot, with the reason.
std::unique_ptr<Reader> open_sqlite_reader(const std::string& path, const StoreAccess& access = {});

}  // namespace msmon
