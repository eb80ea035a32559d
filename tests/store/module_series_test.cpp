// The module dimension from the store: a rank's tensors of a kind in forward order, and one series per
// tensor over a window. The SQLite reader reads only the rows and chunks asked for; it must answer exactly what
// Reader's default (every point streamed) answers, restarts, micro-steps and windows included.
#include "store/module_series.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "store/reader.hpp"
#include "store/sqlite_ingest_store.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

// Rank 0 writes tensors in a model's order (not alphabetical) in run 1, restarts (run 2) and rewrites steps 8-9
// with other values, adding a tensor; rank 1 has the same names. Activations have micro-steps 0 and 1.
class ModuleSeries : public ::testing::Test {
protected:
    void SetUp() override {
        SqliteIngestStore store(db_);
        RecordBatch keys;
        keys.new_runs = {{1, 0, "/job/Nov01_00-00-00-rank0-aaaaaaaa", "Nov01_00-00-00", "aaaaaaaa", "msprobe"},
                         {2, 1, "/job/Nov01_00-00-00-rank1-bbbbbbbb", "Nov01_00-00-00", "bbbbbbbb", "msprobe"},
                         {3, 0, "/job/Nov01_01-00-00-rank0-cccccccc", "Nov01_01-00-00", "cccccccc", "msprobe"}};
        keys.new_layouts = {{1, "min,max,norm"}};
        std::int64_t id = 1;
        for (std::int64_t run : {1, 2, 3}) {
            for (const char* name : {"embed.weight", "layers.1.fc.weight", "layers.0.fc.weight", "head.weight"})
                keys.new_tensors.push_back({id++, run, "grad_reduced", "0", name, std::nullopt, 1});
            if (run == 3) keys.new_tensors.push_back({id++, run, "grad_reduced", "0", "extra.weight", std::nullopt, 1});
            for (std::int64_t micro : {0, 1})
                keys.new_tensors.push_back({id++, run, "actv", "0", "layers.0.fc.output", micro, 1});
        }
        store.commit(keys);
        RecordBatch rows;
        for (const auto& t : keys.new_tensors) {
            const bool restarted = t.run_id == 3;
            for (std::int64_t step = restarted ? 8 : 0; step < (restarted ? 20 : 10); ++step) {
                SampleRow r;
                r.tensor_id = t.id;
                r.step = step;
                r.layout_id = 1;
                r.value_count = 3;
                r.values[0] = -1;
                r.values[1] = static_cast<double>(t.id);
                r.values[2] = static_cast<double>(t.id * 1000 + step) + (restarted ? 0.5 : 0);
                if (t.id == 2 && step == 5) r.values[2] = std::nan("");
                rows.rows.push_back(r);
            }
        }
        store.commit(rows);
    }
    TempDir tmp_;
    std::string db_ = tmp_ / "store.db";
};

TEST_F(ModuleSeries, rows_come_in_forward_order_once_each_with_a_restart_s_new_tensor_last) {
    auto reader = open_sqlite_reader(db_);
    std::vector<std::string> names;
    for (const auto& r : reader->module_rows("grad_reduced", 0)) names.push_back(r.name);
    EXPECT_EQ(names, (std::vector<std::string>{"embed.weight", "layers.1.fc.weight", "layers.0.fc.weight",
                                               "head.weight", "extra.weight"}));
    const auto actv = reader->module_rows("actv", 0);
    ASSERT_EQ(actv.size(), 2u);
    EXPECT_EQ(actv[0].micro_step, 0);
    EXPECT_EQ(actv[1].micro_step, 1);
    EXPECT_EQ(reader->module_rows("grad_reduced", 0), reader->Reader::module_rows("grad_reduced", 0));
    EXPECT_EQ(reader->module_rows("actv", 1), reader->Reader::module_rows("actv", 1));
    EXPECT_TRUE(reader->module_rows("grad_reduced", 7).empty());
}

TEST_F(ModuleSeries, series_equal_the_points_with_the_restart_s_values_winning_in_any_window) {
    auto reader = open_sqlite_reader(db_);
    for (const int rank : {0, 1})
        for (const char* kind : {"grad_reduced", "actv"}) {
            ModuleSeriesRequest req{kind, "norm", rank, reader->module_rows(kind, rank), {}};
            req.rows.push_back({"not.there", "0", std::nullopt});  // asked for, never written: an empty series
            for (const SeriesWindow& window :
                 {SeriesWindow{}, SeriesWindow{3, 12, 0, std::nullopt},
                  SeriesWindow{std::nullopt, std::nullopt, 4, std::nullopt}, SeriesWindow{2, 18, 3, std::nullopt}}) {
                req.window = window;
                const auto fast = reader->module_series(req);
                const auto slow = reader->Reader::module_series(req);
                ASSERT_EQ(fast.size(), req.rows.size());
                ASSERT_EQ(slow.size(), req.rows.size());
                for (std::size_t i = 0; i < fast.size(); ++i) {
                    ASSERT_EQ(fast[i].size(), slow[i].size()) << kind << " rank " << rank << " row " << i;
                    for (std::size_t k = 0; k < fast[i].size(); ++k) {
                        EXPECT_EQ(fast[i][k].step, slow[i][k].step);
                        EXPECT_TRUE(fast[i][k].value == slow[i][k].value ||
                                    (std::isnan(fast[i][k].value) && std::isnan(slow[i][k].value)));
                    }
                }
                EXPECT_TRUE(fast.back().empty());
            }
        }
    // Rank 0's layers.1.fc.weight: steps 0-7 from run 1, 8-19 from the restart (its values, x.5), step 5 NaN.
    ModuleSeriesRequest one{"grad_reduced", "norm", 0, {{"layers.1.fc.weight", "0", std::nullopt}}, {}};
    const auto s = reader->module_series(one)[0];
    ASSERT_EQ(s.size(), 20u);
    EXPECT_EQ(s[7].value, 2007);
    EXPECT_EQ(s[8].value, 14008.5);  // run 3's tensor 14 rewrote step 8
    EXPECT_TRUE(std::isnan(s[5].value)) << s[5].value;
    one.window = SeriesWindow{10, 14, 0, std::nullopt};
    const auto cut = reader->module_series(one)[0];
    ASSERT_EQ(cut.size(), 5u);
    EXPECT_EQ(cut.front().step, 10);
    EXPECT_EQ(cut.back().step, 14);
}

// On a simulated job read as a person would: the activation rows of a rank come in the order the CSV lists them.
TEST(ModuleSeriesIngested, a_rank_s_activations_come_in_the_order_its_csv_lists_them) {
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "job", "--ranks", "2", "--steps", "3", "--xy"}).exit_code, 0);
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db"}).exit_code, 0);
    std::string csv;
    for (const auto& e : std::filesystem::recursive_directory_iterator(tmp / "job"))
        if (e.path().filename() == "actv_0-0.csv" &&
            e.path().parent_path().string().find("-rank1-") != std::string::npos)
            csv = e.path().string();
    ASSERT_FALSE(csv.empty());
    std::ifstream in(csv);
    std::string line;
    std::getline(in, line);  // the header
    std::vector<std::string> listed;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string vpp, name, step, micro;
        std::getline(fields, vpp, ',');
        std::getline(fields, name, ',');
        std::getline(fields, step, ',');
        std::getline(fields, micro, ',');
        listed.push_back(name + ":" + micro);
    }
    auto reader = open_sqlite_reader(tmp / "store.db");
    std::vector<std::string> rows;
    for (const auto& r : reader->module_rows("actv", 1)) rows.push_back(r.name + ":" + std::to_string(*r.micro_step));
    EXPECT_EQ(rows, listed);
}

}  // namespace
}  // namespace msmon::test
