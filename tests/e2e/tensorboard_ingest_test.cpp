// TensorBoard event files through the real `msmon ingest` and `query`: the real files of
// ../shared/fixtures/tensorboard-real value for value, and bytes built here for what they lack (TF 2.x tensor
// scalars, text summaries, repeats, a large graph_def, CRC errors, a record cut mid-write); a simulated
// MindFormers job writing both logs and event files shows one series per metric; text summaries are the run's
// config (`msmon health --run-config`); rank_<R> folders of event files are no msprobe runs.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/parse/tfrecord_framing.hpp"
#include "core/sim/tensorboard_writer.hpp"
#include "core/text/number_text.hpp"
#include "store/reader.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

struct Ingest {
    int exit_code = -1;
    long long rows = -1, errors = -1, repeats = -1;
    std::string out, err;
};

Ingest ingest(const TempDir& tmp, const std::string& dir, const std::string& db) {
    auto r = run({program("msmon"), "ingest", dir, "--db", db, "--json"}, isolated_env(tmp));
    return {r.exit_code, json_count(r.out, "rows"), json_count(r.out, "errors"), json_count(r.out, "repeats"), r.out,
            r.err};
}

// tag (the query's name for kind tensorboard) | step → value
std::map<std::string, std::string> tensorboard_values(const TempDir& tmp, const std::string& db) {
    std::string error;
    auto rows = query_rows(db, {}, isolated_env(tmp), error);
    EXPECT_EQ(error, "");
    std::map<std::string, std::string> out;
    for (const auto& r : rows) out[r.kind + "|" + r.name + "|" + r.step] = r.value;
    return out;
}

std::string scalar_record(std::int64_t step, const std::string& tag, double v, double wall = 1.0) {
    return frame_record(encode_summary_event(wall, step, {{tag, TfValueSpec::Form::simple, v, "", false}}));
}

class TensorboardIngest : public ::testing::Test {
protected:
    TempDir tmp_;
    std::string db_ = tmp_ / "store.db";
};

TEST_F(TensorboardIngest, real_event_files_land_value_for_value) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: no real TensorBoard event files");
    for (const std::string folder : {"tf1-lingvo-bleu", "keras-tf112-wandb"}) {
        const std::string src = shared + "/fixtures/tensorboard-real/" + folder;
        const std::string dir = tmp_ / folder;
        fs::create_directories(dir);
        for (const auto& e : fs::directory_iterator(src))
            if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0)
                fs::copy_file(e.path(), dir + "/" + e.path().filename().string());
        const std::string db = tmp_ / (folder + ".db");
        const Ingest in = ingest(tmp_, dir, db);
        ASSERT_EQ(in.exit_code, 0) << in.err;
        EXPECT_EQ(in.errors, 0) << in.out;
        EXPECT_EQ(in.repeats, 0) << in.out;
        const auto got = tensorboard_values(tmp_, db);
        std::istringstream tsv(read_file(src + "/expected.tsv"));
        std::size_t rows = 0;
        for (std::string line; std::getline(tsv, line);) {
            if (line.empty() || line[0] == '#') continue;
            std::vector<std::string> f;
            std::istringstream ls(line);
            for (std::string c; std::getline(ls, c, '\t');) f.push_back(c);
            ASSERT_EQ(f.size(), 4u);
            ++rows;
            auto it = got.find("tensorboard|" + f[2] + "|" + f[0]);
            ASSERT_NE(it, got.end()) << folder << ": missing " << line;
            EXPECT_EQ(*parse_double(it->second), *parse_double(f[3])) << folder << ": " << line;
        }
        EXPECT_EQ(got.size(), rows) << folder;
        EXPECT_EQ(in.rows, static_cast<long long>(rows)) << folder;
        EXPECT_GT(rows, 100u);
    }
}

TEST_F(TensorboardIngest, tf2_tensor_scalars_text_config_and_repeats) {
    const std::string dir = tmp_ / "tb/rank_2";
    fs::create_directories(dir);
    std::string bytes = frame_record(encode_file_version_event(1.0));
    // TF 2.x: the plugin is named in the metadata of a tag's first value only.
    bytes += frame_record(
        encode_summary_event(2.0, 1,
                             {{"loss", TfValueSpec::Form::tensor_float, 4.5, "", true},
                              {"config/text_summary", TfValueSpec::Form::text, 0, "seq_length: 4096", true}}));
    bytes += frame_record(encode_summary_event(3.0, 2,
                                               {{"loss", TfValueSpec::Form::tensor_float, 4.25, "", false},
                                                {"eval/acc", TfValueSpec::Form::tensor_double, 0.75, "", true}}));
    // An image-like tensor without the scalars plugin is not a scalar.
    bytes += frame_record(encode_summary_event(3.5, 2, {{"img", TfValueSpec::Form::tensor_float, 9, "", false}}));
    // The same (step, tag) again: the later value wins, and the repeat is counted.
    bytes += frame_record(encode_summary_event(4.0, 2, {{"loss", TfValueSpec::Form::tensor_float, 4.0, "", false}}));
    write_file(dir + "/events.out.tfevents.1700000000.host", bytes);
    const Ingest in = ingest(tmp_, tmp_ / "tb", db_);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(in.errors, 0);
    EXPECT_EQ(in.repeats, 1);
    std::string error;
    const auto rows = query_rows(db_, {}, isolated_env(tmp_), error);
    ASSERT_EQ(error, "");
    std::map<std::string, std::string> v;
    for (const auto& r : rows) v[r.rank + "|" + r.kind + "|" + r.name + "|" + r.step] = r.value;
    const std::map<std::string, std::string> want = {
        {"2|loss||1", "4.5"}, {"2|loss||2", "4"}, {"2|tensorboard|eval/acc|2", "0.75"}};
    EXPECT_EQ(v, want);
    auto events = sqlite_rows(db_, "SELECT rank, kind, step, message FROM event", error);
    ASSERT_EQ(error, "");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0], (std::vector<std::string>{"2", "config", "1", "config: seq_length: 4096"}));
}

// One record, then a record header with a valid CRC and `length`, then 200 records; ingested once. Where the
// header is, the file's size, and the issues' reasons.
struct BogusLengthRead {
    std::size_t at = 0, size = 0;
    std::vector<std::string> issues;
};

BogusLengthRead ingest_after_a_bogus_length(const TempDir& tmp, const std::string& db, std::uint64_t length) {
    const std::string dir = tmp / "tensorboard";
    fs::create_directories(dir);
    BogusLengthRead r;
    std::string bytes = frame_record(encode_file_version_event(1.0)) + scalar_record(1, "a", 1.0);
    r.at = bytes.size();
    std::string header(12, '\0');
    std::memcpy(header.data(), &length, 8);
    const std::uint32_t crc = mask_crc(crc32c(header.data(), 8));
    std::memcpy(header.data() + 8, &crc, 4);
    bytes += header;
    for (int step = 2; step <= 201; ++step) bytes += scalar_record(step, "a", step);
    r.size = bytes.size();
    write_file(dir + "/events.out.tfevents.1700000000.host", bytes);
    const Ingest in = ingest(tmp, dir, db);
    EXPECT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(in.rows, 201) << in.out;
    EXPECT_EQ(in.errors, 1) << in.out;
    std::string error;
    for (const auto& row : sqlite_rows(db, "SELECT reason FROM parse_issue", error)) r.issues.push_back(row[0]);
    EXPECT_EQ(error, "");
    EXPECT_EQ(tensorboard_values(tmp, db).size(), 201u);
    return r;
}

// A record header with a valid CRC and a length of 2^40: the reader streamed past "the record" and the rest of the
// file went with it (202 values lost, 0 issues). A length past the bound on a record (256 MiB) is named and the next
// record header looked for: the values after it are read.
TEST_F(TensorboardIngest, a_crc_valid_length_of_2_to_the_40_is_named_and_the_records_after_it_are_read) {
    const BogusLengthRead r = ingest_after_a_bogus_length(tmp_, db_, std::uint64_t{1} << 40);
    EXPECT_EQ(r.issues, std::vector<std::string>{"record length 1099511627776 at byte " + std::to_string(r.at) +
                                                 " is past the bound on a record (256 MiB, the limit "
                                                 "limits.event_record_mib in msmon's settings): skipped 12 bytes to "
                                                 "the next record header"});
}

// A CRC-valid length within the bound (100 MiB) in a file of a few KiB: the reader streamed past "the record", so
// the 200 records after it were lost without a word, and so would everything appended later. A record that runs past
// the file's end while a whole record follows its header is no record: named, and read on from that record.
TEST_F(TensorboardIngest, a_crc_valid_length_past_the_files_end_is_named_and_the_records_after_it_are_read) {
    const BogusLengthRead r = ingest_after_a_bogus_length(tmp_, db_, std::uint64_t{100} << 20);
    EXPECT_EQ(r.issues, std::vector<std::string>{"record length 104857600 at byte " + std::to_string(r.at) +
                                                 " runs past the file's end (" + std::to_string(r.size) +
                                                 " bytes) and a whole record starts at byte " +
                                                 std::to_string(r.at + 12) + ": skipped 12 bytes to it"});
}

// The other side of that bound: a record larger than a read (a 6 MiB graph_def) that the writer is still writing
// runs past the file's end with nothing whole after it. It waits at its start, no issue; once whole it is streamed
// past and the records after it are read.
TEST_F(TensorboardIngest, a_large_record_still_being_written_waits_without_an_issue) {
    const std::string dir = tmp_ / "tensorboard";
    fs::create_directories(dir);
    const std::string path = dir + "/events.out.tfevents.1700000000.host";
    const std::string head = frame_record(encode_file_version_event(1.0)) + scalar_record(1, "a", 1.0);
    const std::string graph = frame_record(encode_graph_event(1.0, std::string(6u << 20, 'g')));
    const std::size_t cut = 5u << 20;  // more than a read (4 MiB) of it is there
    write_file(path, head + graph.substr(0, cut));
    Ingest in = ingest(tmp_, dir, db_);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(in.rows, 1) << in.out;
    EXPECT_EQ(in.errors, 0) << in.out;
    std::string error;
    auto offsets = sqlite_rows(db_, "SELECT offset FROM file", error);
    ASSERT_EQ(offsets.size(), 1u) << error;
    EXPECT_EQ(offsets[0][0], std::to_string(head.size())) << "reading stands at the record's start";
    append_file(path, graph.substr(cut) + scalar_record(2, "a", 2.0));
    in = ingest(tmp_, dir, db_);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(in.rows, 1) << in.out;
    EXPECT_EQ(in.errors, 0) << in.out;
    EXPECT_EQ(tensorboard_values(tmp_, db_).size(), 2u);
}

TEST_F(TensorboardIngest, large_graph_def_crc_error_and_cut_record) {
    const std::string dir = tmp_ / "tensorboard";
    fs::create_directories(dir);
    const std::string path = dir + "/events.out.tfevents.1700000000.host";
    // A 5 MiB graph_def: larger than one read (4 MiB), streamed past with its CRC checked.
    std::string graph(5u << 20, 'g');
    std::string bytes = frame_record(encode_file_version_event(1.0)) + frame_record(encode_graph_event(1.0, graph));
    bytes += scalar_record(1, "a", 1.0);
    std::string corrupt = scalar_record(2, "a", 2.0);
    corrupt[corrupt.size() - 6] ^= 0x40;  // inside the data: the data CRC fails
    const std::size_t corrupt_at = bytes.size();
    bytes += corrupt;
    bytes += scalar_record(3, "a", 3.0);
    const std::string cut = scalar_record(4, "a", 4.0);
    write_file(path, bytes + cut.substr(0, cut.size() / 2));  // the writer is mid-record
    Ingest in = ingest(tmp_, dir, db_);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(in.rows, 2) << in.out;
    EXPECT_EQ(in.errors, 1) << in.out;
    std::string error;
    auto issues = sqlite_rows(db_, "SELECT reason FROM parse_issue", error);
    ASSERT_EQ(issues.size(), 1u) << error;
    EXPECT_NE(issues[0][0].find("data CRC mismatch"), std::string::npos) << issues[0][0];
    EXPECT_NE(issues[0][0].find("at byte " + std::to_string(corrupt_at)), std::string::npos) << issues[0][0];
    auto offsets = sqlite_rows(db_, "SELECT offset FROM file", error);
    ASSERT_EQ(offsets.size(), 1u);
    EXPECT_EQ(offsets[0][0], std::to_string(bytes.size())) << "the cut record's start is where reading stands";

    // The writer finishes the record and writes one more; a new session resumes there without duplicates.
    append_file(path, cut.substr(cut.size() / 2) + scalar_record(5, "a", 5.0));
    in = ingest(tmp_, dir, db_);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(in.rows, 2) << in.out;
    EXPECT_EQ(in.repeats, 0) << in.out;
    const auto v = tensorboard_values(tmp_, db_);
    const std::map<std::string, std::string> want = {
        {"tensorboard|a|1", "1"}, {"tensorboard|a|3", "3"}, {"tensorboard|a|4", "4"}, {"tensorboard|a|5", "5"}};
    EXPECT_EQ(v, want);
}

TEST_F(TensorboardIngest, simulated_mindformers_logs_and_event_files_give_one_series_per_metric) {
    const std::string job = tmp_ / "job";
    auto sim = run({program("msmon"), "simulate", job, "--ranks", "4", "--steps", "12", "--params", "2", "--logs",
                    "--tensorboard", "--expert-collapse", "6"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    ASSERT_FALSE(find_files(job + "/output/tensorboard", "").empty());
    const Ingest in = ingest(tmp_, job, db_);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(in.errors, 0) << in.out;
    EXPECT_GT(in.repeats, 0) << "logs and event files both carry loss, lr, global_norm, ...";
    std::string error;
    // One tensor per (rank, kind, name): the log's and the event file's loss are the same series.
    auto dup =
        sqlite_rows(db_,
                    "SELECT r.rank, t.kind, t.name, count(*) FROM tensor t JOIN run r ON r.id = t.run_id "
                    "WHERE r.format = 'mindformers' GROUP BY r.rank, t.kind, t.name, t.micro_step HAVING count(*) > 1",
                    error);
    ASSERT_EQ(error, "");
    EXPECT_TRUE(dup.empty()) << dup.size() << " duplicated series, first " << (dup.empty() ? "" : dup[0][1]);
    auto kinds = sqlite_rows(
        db_, "SELECT DISTINCT t.kind, t.name FROM tensor t WHERE t.kind IN ('tensorboard') ORDER BY 2", error);
    std::set<std::string> other;
    for (const auto& k : kinds) other.insert(k[1]);
    EXPECT_EQ(other, std::set<std::string>{}) << "every tag MindFormers writes is named as its metric";
    const auto rows = query_rows(db_, {"--rank", "3", "--steps", "5"}, isolated_env(tmp_), error);
    std::map<std::string, int> per_kind;
    for (const auto& r : rows) per_kind[r.kind + "|" + r.name] += 1;
    for (const char* k :
         {"loss|", "lr|", "global_norm|", "per_step_time|", "samples_per_second|", "throughput|", "loss_scale|",
          "weight_norm|", "throughput_linearity|", "global_batch_size|", "billion_samples_per_day|"})
        EXPECT_EQ(per_kind[k], 1) << k;
    EXPECT_EQ(per_kind["loss_vs_samples|"], 0) << "vs-samples twins keep their own x-axis (step x batch)";
    EXPECT_EQ(per_kind["expert_load|layer_1/ep_3"], 1);
    const auto twins = query_rows(db_, {"--rank", "3", "--kind", "loss_vs_samples"}, isolated_env(tmp_), error);
    ASSERT_FALSE(twins.empty());
    EXPECT_EQ(twins.front().step, "4");  // step 1 × global batch size 4
}

// MindFormers writes loss, lr, global_norm, ... both to its log (rounded to 6 digits) and to its
// event files (the float itself). Whichever is read first, the store holds the event file's value where both speak:
// a job whose event files are read before its logs (a later session sees the logs) and one read the other way round
// and one read at once hold the same values. Before, the later read won: the two orders differed on every such
// value (global_norm 2.092265 from the log, 2.0922648906707764 from the event file).
TEST_F(TensorboardIngest, the_store_holds_the_same_values_whichever_of_log_and_event_file_is_read_first) {
    const std::string sim_dir = tmp_ / "sim";
    auto sim = run({program("msmon"), "simulate", sim_dir, "--ranks", "2", "--steps", "30", "--params", "2", "--logs",
                    "--tensorboard"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    fs::remove_all(sim_dir + "/monitor_output");  // msprobe's CSVs have no second source
    const std::vector<std::string> logs = {"output/log", "output/msrun_log"}, events = {"output/tensorboard"};
    // The job read in sessions, each adding `parts` of the simulated output to the job folder first.
    auto read_in_sessions = [&](const std::string& name, const std::vector<std::vector<std::string>>& sessions) {
        const std::string job = tmp_ / (name + "/job"), db = tmp_ / (name + ".db");
        for (const auto& parts : sessions) {
            for (const auto& part : parts) {
                fs::create_directories(fs::path(job + "/" + part).parent_path());
                fs::copy(sim_dir + "/" + part, job + "/" + part, fs::copy_options::recursive);
            }
            const Ingest in = ingest(tmp_, job, db);
            EXPECT_EQ(in.exit_code, 0) << name << ": " << in.err;
            EXPECT_EQ(in.errors, 0) << name << ": " << in.out;
        }
        std::string error;
        std::map<std::string, std::string> values;
        for (const auto& r : query_rows(db, {}, isolated_env(tmp_), error)) values[r.key()] = r.value;
        EXPECT_EQ(error, "") << name;
        return values;
    };
    const auto events_then_logs = read_in_sessions("events-then-logs", {events, logs});
    const auto logs_then_events = read_in_sessions("logs-then-events", {logs, events});
    const auto at_once = read_in_sessions("at-once", {{logs[0], logs[1], events[0]}});
    const auto events_only = read_in_sessions("events-only", {events});
    const auto logs_only = read_in_sessions("logs-only", {logs});
    ASSERT_GT(events_then_logs.size(), 200u);
    EXPECT_EQ(events_then_logs, logs_then_events);
    EXPECT_EQ(events_then_logs, at_once);
    // Where the event file speaks, its value stands; where only the log does, the log's.
    std::size_t both = 0, rounded_differently = 0;
    for (const auto& [key, value] : events_then_logs) {
        const auto e = events_only.find(key);
        const auto l = logs_only.find(key);
        if (e != events_only.end()) {
            EXPECT_EQ(value, e->second) << key;
            if (l != logs_only.end()) {
                ++both;
                if (l->second != e->second) ++rounded_differently;
            }
        } else {
            ASSERT_NE(l, logs_only.end()) << key;
            EXPECT_EQ(value, l->second) << key;
        }
    }
    EXPECT_GT(both, 100u) << "loss, lr, global_norm, ... of every step come from both sources";
    EXPECT_GT(rounded_differently, 50u) << "the log's 6 digits differ from the event file's float";
}

// MindFormers writes its config as text summaries: `msmon health --run-config` prints it per rank, ranks with the
// same config once, every line escaped for the terminal; the health table points to it instead of listing it.
TEST_F(TensorboardIngest, text_summaries_are_the_run_config_per_rank_escaped) {
    const std::string root = tmp_ / "job/output/tensorboard";
    auto config_file = [&](int rank, const std::string& lr, const std::string& extra) {
        const std::string dir = root + "/rank_" + std::to_string(rank);
        fs::create_directories(dir);
        std::string bytes = frame_record(encode_file_version_event(1.0));
        std::vector<TfValueSpec> values = {
            {"run_mode/text_summary", TfValueSpec::Form::text, 0, "train", true},
            {"optimizer.learning_rate/text_summary", TfValueSpec::Form::text, 0, lr, true},
        };
        if (!extra.empty()) values.push_back({"model_config/text_summary", TfValueSpec::Form::text, 0, extra, true});
        bytes += frame_record(encode_summary_event(2.0, 0, values));
        bytes += scalar_record(1, "loss", 2.5);
        write_file(dir + "/events.out.tfevents.1700000000.host" + std::to_string(rank), bytes);
    };
    config_file(0, "0.0001", "");
    config_file(1, "0.0001", "");
    // Rank 2 differs: another learning rate, and a multi-line text with a terminal escape and a bidi override.
    config_file(2, "0.0003", "hidden_size: 4096\n\x1b[2Jnum_layers: 32\xe2\x80\xae\n");
    const Ingest in = ingest(tmp_, tmp_ / "job", db_);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(in.errors, 0) << in.out;

    auto cfg = run({program("msmon"), "health", "--db", db_, "--run-config"}, isolated_env(tmp_));
    ASSERT_EQ(cfg.exit_code, 0) << cfg.err;
    const std::string& out = cfg.out;
    EXPECT_EQ(out.find('\x1b'), std::string::npos) << "a raw escape reached the terminal";
    EXPECT_EQ(out.find("\xe2\x80\xae"), std::string::npos) << "a raw bidi override reached the terminal";
    const auto ranks01 = out.find("run config of ranks 0-1 (");
    const auto rank2 = out.find("run config of rank 2 (");
    ASSERT_NE(ranks01, std::string::npos) << out;
    ASSERT_NE(rank2, std::string::npos) << out;
    EXPECT_LT(ranks01, rank2);
    EXPECT_NE(out.find("job/output):\n"), std::string::npos) << "the MindFormers output folder it came from: " << out;
    const std::string block01 = out.substr(ranks01, rank2 - ranks01);
    EXPECT_NE(block01.find("  run_mode: train\n"), std::string::npos) << out;
    EXPECT_NE(block01.find("  optimizer.learning_rate: 0.0001\n"), std::string::npos) << out;
    const std::string block2 = out.substr(rank2);
    EXPECT_NE(block2.find("  optimizer.learning_rate: 0.0003\n"), std::string::npos) << out;
    EXPECT_NE(block2.find("  model_config:\n    hidden_size: 4096\n    \\x1B[2Jnum_layers: 32\\u{202E}\n"),
              std::string::npos)
        << out;

    auto json = run({program("msmon"), "health", "--db", db_, "--run-config", "--rank", "2", "--format", "json"},
                    isolated_env(tmp_));
    ASSERT_EQ(json.exit_code, 0) << json.err;
    EXPECT_NE(json.out.find("\"key\": \"model_config\""), std::string::npos) << json.out;
    EXPECT_NE(json.out.find("\"text\": \"0.0003\""), std::string::npos) << json.out;
    EXPECT_EQ(json.out.find("\"rank\": 0"), std::string::npos) << "--rank 2 only: " << json.out;
    EXPECT_NE(json.out.find("\\u001b[2J"), std::string::npos) << "JSON keeps the text as written: " << json.out;

    auto table = run({program("msmon"), "health", "--db", db_}, isolated_env(tmp_));
    ASSERT_EQ(table.exit_code, 0) << table.err;
    EXPECT_NE(table.out.find("run config: 7 keys from text summaries (msmon health --run-config prints them)"),
              std::string::npos)
        << table.out;
    EXPECT_NE(table.out.find("events (0):"), std::string::npos)
        << "config keys are not listed as events: " << table.out;
    EXPECT_EQ(table.out.find('\x1b'), std::string::npos);

    EXPECT_EQ(run({program("msmon"), "health", "--db", db_, "--rank", "1"}, isolated_env(tmp_)).exit_code, 2)
        << "--rank belongs to --run-config";
    auto none = run({program("msmon"), "health", "--db", db_, "--run-config", "--rank", "9"}, isolated_env(tmp_));
    EXPECT_EQ(none.exit_code, 0);
    EXPECT_NE(none.out.find("no text summaries for rank 9"), std::string::npos) << none.out;
}

// rank_<R> folders right under the folder given hold only event files (a tensorboard_dir not named so): their values
// join the MindFormers run of the rank and no empty msprobe_v2 run appears; a rank_<R> with a monitor_v2 CSV is still
// an msprobe run.
TEST_F(TensorboardIngest, rank_folders_of_event_files_make_no_empty_msprobe_runs) {
    const std::string root = tmp_ / "summaries";
    for (int r = 0; r < 2; ++r) {
        fs::create_directories(root + "/rank_" + std::to_string(r));
        write_file(root + "/rank_" + std::to_string(r) + "/events.out.tfevents.1700000000.host",
                   frame_record(encode_file_version_event(1.0)) + scalar_record(1, "loss", 2.0 + r));
    }
    fs::create_directories(root + "/rank_2");
    write_file(root + "/rank_2/weight_grad_step0-0.csv",
               "vpp_stage,step,module_name,scope,micro_step,min,max,mean,norm,nans\r\n"
               "0,0,0:w,reduced,1,-0.5,0.5,0.0,0.875,0.0\r\n");
    const Ingest in = ingest(tmp_, root, db_);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(in.errors, 0) << in.out;
    std::string error;
    const auto runs = sqlite_rows(db_, "SELECT rank, format FROM run ORDER BY rank, format", error);
    ASSERT_EQ(error, "");
    std::vector<std::string> got;
    for (const auto& r : runs) got.push_back(r[0] + " " + r[1]);
    EXPECT_EQ(got, (std::vector<std::string>{"0 mindformers", "1 mindformers", "2 msprobe_v2"}));
    const auto loss = query_rows(db_, {"--kind", "loss", "--rank", "1"}, isolated_env(tmp_), error);
    ASSERT_EQ(loss.size(), 1u) << error;
    EXPECT_EQ(loss[0].value, "3");
    const auto norm = query_rows(db_, {"--op", "norm", "--rank", "2"}, isolated_env(tmp_), error);
    ASSERT_EQ(norm.size(), 1u) << "the monitor_v2 CSV is still read " << error;
    EXPECT_EQ(norm[0].kind, "grad_reduced");
    EXPECT_EQ(norm[0].value, "0.875");
    // And on a second ingest (runs restored from the store), still no empty run.
    ASSERT_EQ(ingest(tmp_, root, db_).exit_code, 0);
    EXPECT_EQ(sqlite_rows(db_, "SELECT id FROM run", error).size(), 3u);
}

// TensorBoard rank folders whose number is no rank ("rank-1", "rank99999999999999999999") were read as a run's own
// folder: their values folded into rank 0's (1,240 values instead of 1,160, 0 malformed). Not read now, and named.
TEST_F(TensorboardIngest, a_rank_folder_whose_number_is_no_rank_is_named_and_not_folded_into_rank_0) {
    const std::string root = tmp_ / "job/output/tensorboard";
    for (const std::string dir : {"rank_0", "rank-1", "rank99999999999999999999", "train"}) {
        fs::create_directories(root + "/" + dir);
        write_file(root + "/" + dir + "/events.out.tfevents.1700000000.host",
                   frame_record(encode_file_version_event(1.0)) +
                       scalar_record(1, dir == "train" ? "eval_loss" : "loss", dir == "rank_0" ? 2.0 : 9.0));
    }
    const Ingest in = ingest(tmp_, tmp_ / "job", db_);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    std::string error;
    const auto loss = query_rows(db_, {"--kind", "loss"}, isolated_env(tmp_), error);
    ASSERT_EQ(loss.size(), 1u) << "only rank_0's loss: " << error;
    EXPECT_EQ(loss[0].value, "2");
    EXPECT_EQ(query_rows(db_, {"--kind", "tensorboard", "--name", "eval_loss"}, isolated_env(tmp_), error).size(), 1u)
        << "a run's own folder (train/) is still read: " << error;
    const std::string log = read_file(log_path(tmp_));
    for (const std::string dir : {"rank-1", "rank99999999999999999999"})
        EXPECT_NE(log.find(root + "/" + dir + "' is named as a rank folder, but its number is no rank msmon reads"),
                  std::string::npos)
            << log;
}

// An event's wall time is when its step was logged (the Chart's wall-clock axis): one time a step, the earliest
// of a rank's events for it.
TEST_F(TensorboardIngest, event_wall_times_are_the_steps_times) {
    const std::string dir = tmp_ / "tb/rank_0";
    fs::create_directories(dir);
    write_file(dir + "/events.out.tfevents.1700000000.host",
               frame_record(encode_file_version_event(1700000000.0)) + scalar_record(1, "loss", 2.0, 1700000001.25) +
                   scalar_record(1, "lr", 1e-4, 1700000001.5) + scalar_record(2, "loss", 1.5, 1700000003.0));
    const Ingest in = ingest(tmp_, tmp_ / "tb", db_);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    const auto times = open_sqlite_reader(db_)->step_times();
    ASSERT_EQ(times.size(), 2u);
    EXPECT_EQ(times[0].step, 1);
    EXPECT_EQ(times[0].wall_ms, 1700000001250);
    EXPECT_EQ(times[1].step, 2);
    EXPECT_EQ(times[1].wall_ms, 1700000003000);
}

}  // namespace
}  // namespace msmon::test
