// TensorBoard event files through the real `msmon ingest` and `query`: the real files of
// ../shared/fixtures/tensorboard-real value for value, and bytes built here for what they lack (TF 2.x tensor
// scalars, text summaries, repeats, a large graph_def, CRC errors, a record cut mid-write); a simulated
// MindFormers job writing both logs and event files shows one series per metric.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "core/parse/tfrecord_framing.hpp"
#include "core/sim/tensorboard_writer.hpp"
#include "core/text/number_text.hpp"
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
    return {r.exit_code, json_count(r.out, "rows"), json_count(r.out, "errors"), json_count(r.out, "repeats"), r.out, r.err};
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
    if (shared.empty()) GTEST_SKIP() << "../shared is absent: no real TensorBoard event files";
    for (const std::string folder : {"tf1-lingvo-bleu", "keras-tf112-wandb"}) {
        const std::string src = shared + "/fixtures/tensorboard-real/" + folder;
        const std::string dir = tmp_ / folder;
        fs::create_directories(dir);
        for (const auto& e : fs::directory_iterator(src))
            if (e.path().filename().string().rfind("events.out.tfevents.", 0) == 0) fs::copy_file(e.path(), dir + "/" + e.path().filename().string());
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
    bytes += frame_record(encode_summary_event(2.0, 1, {{"loss", TfValueSpec::Form::tensor_float, 4.5, "", true},
                                                       {"config/text_summary", TfValueSpec::Form::text, 0, "seq_length: 4096", true}}));
    bytes += frame_record(encode_summary_event(3.0, 2, {{"loss", TfValueSpec::Form::tensor_float, 4.25, "", false},
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
    auto dup = sqlite_rows(db_,
                           "SELECT r.rank, t.kind, t.name, count(*) FROM tensor t JOIN run r ON r.id = t.run_id "
                           "WHERE r.format = 'mindformers' GROUP BY r.rank, t.kind, t.name, t.micro_step HAVING count(*) > 1",
                           error);
    ASSERT_EQ(error, "");
    EXPECT_TRUE(dup.empty()) << dup.size() << " duplicated series, first " << (dup.empty() ? "" : dup[0][1]);
    auto kinds = sqlite_rows(db_, "SELECT DISTINCT t.kind, t.name FROM tensor t WHERE t.kind IN ('tensorboard') ORDER BY 2", error);
    std::set<std::string> other;
    for (const auto& k : kinds) other.insert(k[1]);
    EXPECT_EQ(other, (std::set<std::string>{"B-samples-per-day", "batch-size"}));
    const auto rows = query_rows(db_, {"--rank", "3", "--steps", "5"}, isolated_env(tmp_), error);
    std::map<std::string, int> per_kind;
    for (const auto& r : rows) per_kind[r.kind + "|" + r.name] += 1;
    for (const char* k : {"loss|", "lr|", "global_norm|", "per_step_time|", "samples_per_second|", "throughput|",
                          "loss_scale|", "weight_norm|", "throughput_linearity|"})
        EXPECT_EQ(per_kind[k], 1) << k;
    EXPECT_EQ(per_kind["loss_vs_samples|"], 0) << "vs-samples twins keep their own x-axis (step x batch)";
    EXPECT_EQ(per_kind["expert_load|layer_1/ep_3"], 1);
    const auto twins = query_rows(db_, {"--rank", "3", "--kind", "loss_vs_samples"}, isolated_env(tmp_), error);
    ASSERT_FALSE(twins.empty());
    EXPECT_EQ(twins.front().step, "4");  // step 1 × global batch size 4
}

}  // namespace
}  // namespace msmon::test
