// `msmon simulate` writes what msprobe writes: run folder names, file names by step range, exact headers,
// whole lines, exp_avg from step 1, and the faults it is asked for, where it is asked for them.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "tests/support/e2e_support.hpp"
#include "tests/support/reference_csv.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

const std::string kSimHeader = "vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype";

struct SimRow {
    int rank;
    std::string kind;
    std::string file;
    std::map<std::string, std::string> cells;
};

struct SimTree {
    std::vector<std::string> run_dirs;
    std::vector<SimRow> rows;
    std::size_t files = 0;
};

// Reads every CSV under <out>/monitor_output with the reference reader, checking the format on the way.
SimTree read_sim_tree(const std::string& out) {
    SimTree tree;
    const std::regex dir_re(
        R"(^(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\d{2}_\d{2}-\d{2}-\d{2}-rank(\d+)-[0-9a-f]{8}$)");
    const std::regex file_re(
        R"(^(grad_unreduced|grad_reduced|exp_avg|exp_avg_sq|param_origin|param_updated)_(\d+)-(\d+)\.csv$)");
    for (const auto& d : fs::directory_iterator(out + "/monitor_output")) {
        const std::string dname = d.path().filename().string();
        std::smatch dm;
        EXPECT_TRUE(d.is_directory() && std::regex_match(dname, dm, dir_re)) << "not a msprobe run folder: " << dname;
        if (dm.empty()) continue;
        tree.run_dirs.push_back(dname);
        const int rank = std::stoi(dm[2]);
        for (const auto& f : fs::directory_iterator(d.path())) {
            const std::string fname = f.path().filename().string();
            std::smatch fm;
            if (!std::regex_match(fname, fm, file_re)) {
                ADD_FAILURE() << "unexpected file " << fname;
                continue;
            }
            ++tree.files;
            const std::string text = read_file(f.path().string());
            EXPECT_TRUE(!text.empty() && text.back() == '\n') << fname << " does not end with a newline";
            EXPECT_EQ(text.find('\r'), std::string::npos) << fname << " has CR (pandas writes \\n on Linux)";
            EXPECT_EQ(text.substr(0, text.find('\n')), kSimHeader) << dname << "/" << fname;
            const auto records = parse_csv_reference(text);
            const long long first = std::stoll(fm[2]), last = std::stoll(fm[3]);
            for (std::size_t i = 1; i < records.size(); ++i) {
                if (records[i].size() != records[0].size()) {
                    ADD_FAILURE() << fname << " line " << i + 1 << " has " << records[i].size() << " fields";
                    continue;
                }
                SimRow r{rank, fm[1], dname + "/" + fname, {}};
                for (std::size_t c = 0; c < records[0].size(); ++c) r.cells[records[0][c]] = records[i][c];
                const long long step = std::stoll(r.cells["step"]);
                EXPECT_TRUE(step >= first && step <= last) << fname << " holds step " << step;
                tree.rows.push_back(std::move(r));
            }
        }
    }
    std::sort(tree.run_dirs.begin(), tree.run_dirs.end());
    return tree;
}

// "wrote S steps x R ranks: F files, N rows, ..." -> {F, N}
std::pair<long long, long long> summary_counts(const std::string& out) {
    std::smatch m;
    if (!std::regex_search(out, m, std::regex(R"(wrote \d+ steps x \d+ ranks: (\d+) files, (\d+) rows)")))
        return {-1, -1};
    return {std::stoll(m[1]), std::stoll(m[2])};
}

TEST(SimulatorFormat, writes_msprobe_run_folders_step_range_files_exact_headers_and_whole_lines) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string out = tmp / "sim";
    auto sim =
        run({program("msmon"), "simulate", out, "--ranks", "3", "--steps", "7", "--params", "5", "--record-steps", "3"},
            env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const SimTree tree = read_sim_tree(out);

    std::set<int> ranks;
    for (const auto& d : tree.run_dirs) ranks.insert(std::stoi(d.substr(d.find("-rank") + 5)));
    EXPECT_EQ(ranks, (std::set<int>{0, 1, 2}));
    EXPECT_EQ(tree.run_dirs.size(), 3u);

    const auto [files, rows] = summary_counts(sim.out);
    EXPECT_EQ(rows, static_cast<long long>(tree.rows.size())) << "summary: " << sim.out;
    EXPECT_EQ(files, static_cast<long long>(tree.files)) << "summary: " << sim.out;

    // Per kind, the steps present; every (rank, kind, step) has one row per parameter.
    std::map<std::string, std::set<long long>> steps;
    std::map<std::string, int> per_rank_kind_step;
    for (const auto& r : tree.rows) {
        steps[r.kind].insert(std::stoll(r.cells.at("step")));
        ++per_rank_kind_step[std::to_string(r.rank) + "|" + r.kind + "|" + r.cells.at("step")];
    }
    const std::set<long long> all = {0, 1, 2, 3, 4, 5, 6}, from1 = {1, 2, 3, 4, 5, 6};
    EXPECT_EQ(steps["grad_reduced"], all);
    EXPECT_EQ(steps["grad_unreduced"], all);
    EXPECT_EQ(steps["param_origin"], all);
    EXPECT_EQ(steps["param_updated"], all);
    EXPECT_EQ(steps["exp_avg"], from1) << "Adam state is empty before the first step: exp_avg starts at step 1";
    EXPECT_EQ(steps["exp_avg_sq"], from1);
    for (const auto& [key, n] : per_rank_kind_step) EXPECT_EQ(n, 5) << key;
    EXPECT_FALSE(fs::exists(out + "/monitor_output/" + tree.run_dirs[0] + "/exp_avg_0-0.csv"));
    EXPECT_TRUE(fs::exists(out + "/monitor_output/" + tree.run_dirs[0] + "/grad_reduced_6-8.csv"));
}

TEST(SimulatorFormat, nan_fault_makes_that_ranks_gradients_nan_then_every_rank_through_the_all_reduce) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    const std::string out = tmp / "sim";
    auto sim = run(
        {program("msmon"), "simulate", out, "--ranks", "3", "--steps", "4", "--params", "8", "--faults", "nan@2:r1"},
        env);
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const SimTree tree = read_sim_tree(out);
    // Step 2: rank 1's own gradients, and the reduced ones on every rank (the mean of a NaN); the optimizer's
    // state is read before the update, so it and the weights turn NaN at step 3, everywhere.
    auto nan_expected = [](const SimRow& r) {
        const long long step = std::stoll(r.cells.at("step"));
        if (step < 2) return false;
        if (step > 2) return true;
        return (r.kind == "grad_unreduced" && r.rank == 1) || r.kind == "grad_reduced" || r.kind == "param_updated";
    };
    int nan_norms = 0;
    for (const auto& r : tree.rows) {
        const bool nan = r.cells.at("norm") == "nan";
        nan_norms += nan;
        EXPECT_EQ(nan, nan_expected(r)) << r.file << " " << r.cells.at("name");
        if (nan) {
            EXPECT_NE(r.cells.at("nans"), "0") << r.file;
        }
    }
    EXPECT_GT(nan_norms, 0);

    // Through the engine: the same places.
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", out, "--db", db}, env).exit_code, 0);
    std::string error;
    auto rows = query_rows(db, {"--op", "norm"}, env, error);
    ASSERT_TRUE(error.empty()) << error;
    int stored_nans = 0;
    for (const auto& r : rows) stored_nans += r.value == "nan";
    EXPECT_EQ(stored_nans, nan_norms);
}

TEST(SimulatorFormat, spike_fault_multiplies_that_steps_gradients_a_hundredfold_and_nothing_else) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    // The same seed with and without the spike: every draw is the same, so the spike is all that differs.
    std::map<std::string, std::map<std::string, std::map<int, double>>> norm;  // run → rank|kind|name → step → norm
    for (const std::string faults : {"", "spike@3"}) {
        const std::string out = tmp / (faults.empty() ? "healthy" : "spike");
        std::vector<std::string> argv = {program("msmon"), "simulate", out,        "--ranks", "2",
                                         "--steps",        "5",        "--params", "6"};
        if (!faults.empty()) argv.insert(argv.end(), {"--faults", faults});
        auto sim = run(argv, env);
        ASSERT_EQ(sim.exit_code, 0) << sim.err;
        for (const auto& r : read_sim_tree(out).rows) {
            if (r.kind != "grad_reduced" && r.kind != "grad_unreduced") continue;
            double v = 0;
            ASSERT_TRUE(reference_double(r.cells.at("norm"), v)) << r.cells.at("norm");
            norm[faults.empty() ? "healthy" : "spike"][std::to_string(r.rank) + "|" + r.kind + "|" + r.cells.at("name")]
                [std::stoi(r.cells.at("step"))] = v;
        }
    }
    ASSERT_EQ(norm["spike"].size(), 24u);
    for (const auto& [series, by_step] : norm["spike"]) {
        ASSERT_EQ(by_step.size(), 5u) << series;
        const auto& healthy = norm["healthy"][series];
        EXPECT_NEAR(by_step.at(3) / healthy.at(3), 100.0, 0.5) << series;
        for (int s : {0, 1, 2, 4}) EXPECT_EQ(by_step.at(s), healthy.at(s)) << series << " step " << s;
    }
}

}  // namespace
}  // namespace msmon::test
