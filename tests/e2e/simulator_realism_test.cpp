// `msmon simulate` as a labelled corpus for detectors: its healthy runs spread across ranks and steps as the real
// 4-rank msprobe runs of ../shared/fixtures/msprobe-faults do, and never beyond them; each planted fault shows
// where and as the real nan and baddata runs show theirs; --truth says where that is, in the CSVs' own names.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/support/e2e_support.hpp"
#include "tests/support/msprobe_tree.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

CommandResult simulate(const std::string& out, std::vector<std::string> args) {
    std::vector<std::string> argv = {program("msmon"), "simulate", out};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
}

// rank|kind|name|micro|step → row, for one run folder per rank (the first, unless a restart made more).
std::map<std::string, const TreeRow*> index_rows(const MsprobeTree& tree) {
    std::map<std::string, const TreeRow*> out;
    for (const auto& r : tree.rows)
        out.emplace(std::to_string(r.rank) + "|" + r.kind + "|" + r.name + "|" + std::to_string(r.micro) + "|" +
                        std::to_string(r.step),
                    &r);
    return out;
}

const TreeRow& row_at(const std::map<std::string, const TreeRow*>& index, int rank, const std::string& kind,
                      const std::string& name, long long step, int micro = -1) {
    static const TreeRow missing;
    auto it = index.find(std::to_string(rank) + "|" + kind + "|" + name + "|" + std::to_string(micro) + "|" +
                         std::to_string(step));
    EXPECT_TRUE(it != index.end()) << "no row " << rank << " " << kind << " " << name << " micro " << micro << " step "
                                   << step;
    return it == index.end() ? missing : *it->second;
}

double ratio(const TreeRow& a, const TreeRow& b, const std::string& op = "norm") {
    return a.number(op) / b.number(op);
}

// The measured classes: weight gradients by tensor rank, the optimizer's first moment, activations.
const std::vector<std::string> kCompared = {"grad_unreduced/1-D",
                                            "grad_unreduced/2-D",
                                            "grad_reduced/1-D",
                                            "grad_reduced/2-D",
                                            "exp_avg/1-D",
                                            "exp_avg/2-D",
                                            "actv",
                                            "actv_grad"};

TEST(SimulatorRealism, healthy_runs_spread_across_ranks_and_steps_as_the_real_four_rank_run) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real runs are not available");
    const auto real = spread_by_class(read_msprobe_tree(shared + "/fixtures/msprobe-faults/healthy"));
    TempDir tmp;
    // The real run's shape (4 ranks, 50 steps, activations), three seeds pooled.
    MsprobeTree pooled;
    for (int seed : {1, 2, 3}) {
        const std::string out = tmp / ("seed" + std::to_string(seed));
        auto sim =
            simulate(out, {"--ranks", "4", "--steps", "50", "--params", "16", "--xy", "--seed", std::to_string(seed)});
        ASSERT_EQ(sim.exit_code, 0) << sim.err;
        MsprobeTree t = read_msprobe_tree(out);
        for (auto& r : t.rows) r.name += "#seed" + std::to_string(seed);  // three runs, not one
        for (auto& r : t.rows) pooled.rows.push_back(std::move(r));
        pooled.folders.insert(pooled.folders.end(), t.folders.begin(), t.folders.end());
    }
    const auto sim = spread_by_class(pooled);
    std::printf(
        "[ spread ] |log(x_rank/median over ranks)| and |log(x_t/x_t-1)| of the norm, real healthy run vs "
        "simulated (3 seeds):\n%s",
        spread_table(real, sim).c_str());
    for (const auto& cls : kCompared) {
        SCOPED_TRACE(cls);
        ASSERT_TRUE(real.count(cls) && sim.count(cls));
        const Spread& r = real.at(cls);
        const Spread& s = sim.at(cls);
        if (r.cross.max > 0) {
            EXPECT_GT(s.cross.median, 0.6 * r.cross.median);
            EXPECT_LT(s.cross.median, 1.6 * r.cross.median);
            EXPECT_GT(s.cross.p95, 0.6 * r.cross.p95);
            EXPECT_LT(s.cross.p95, 1.6 * r.cross.p95);
        } else {
            EXPECT_EQ(s.cross.max, 0.0) << "the same on every rank, as after the all-reduce";
        }
        EXPECT_GT(s.step.median, 0.6 * r.step.median);
        EXPECT_LT(s.step.median, 1.6 * r.step.median);
        EXPECT_GT(s.step.p95, 0.6 * r.step.p95);
        EXPECT_LT(s.step.p95, 1.6 * r.step.p95);
    }
    for (const char* same : {"grad_reduced/1-D", "grad_reduced/2-D", "exp_avg/2-D", "exp_avg_sq/1-D", "exp_avg_sq/2-D"})
        if (sim.count(same)) {
            EXPECT_EQ(sim.at(same).cross.max, 0.0) << same;
        }
}

TEST(SimulatorRealism, healthy_runs_of_several_seeds_and_sizes_stay_within_the_real_runs_extremes) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: the real runs are not available");
    const auto real = spread_by_class(read_msprobe_tree(shared + "/fixtures/msprobe-faults/healthy"));
    TempDir tmp;
    struct Size {
        int ranks, steps, params;
        bool xy;
        int seed;
    };
    for (const Size& z : {Size{4, 50, 16, true, 11}, Size{16, 150, 30, false, 12}, Size{64, 40, 8, false, 13},
                          Size{8, 300, 12, true, 14}}) {
        SCOPED_TRACE(std::to_string(z.ranks) + " ranks, " + std::to_string(z.steps) + " steps, seed " +
                     std::to_string(z.seed));
        const std::string out = tmp / ("run" + std::to_string(z.seed));
#ifdef MSMON_SANITIZED
        // A third of the steps (at least 40): the sanitizers look for memory errors and races in the simulator on
        // every size; the normal build judges the full runs' spread (3 min of CI's 2 cores instrumented, not 1).
        const int steps = std::max(40, z.steps / 3);
#else
        const int steps = z.steps;
#endif
        std::vector<std::string> args = {"--ranks",  std::to_string(z.ranks),  "--steps", std::to_string(steps),
                                         "--params", std::to_string(z.params), "--seed",  std::to_string(z.seed)};
        if (z.xy) args.push_back("--xy");
        auto run = simulate(out, args);
        ASSERT_EQ(run.exit_code, 0) << run.err;
        const auto sim = spread_by_class(read_msprobe_tree(out));
        for (const auto& cls : kCompared) {
            if (!sim.count(cls) || !real.count(cls)) continue;
            // No jump from one step to the next, and no rank off the others, beyond the real healthy run's largest.
            EXPECT_LE(sim.at(cls).step.max, 1.05 * real.at(cls).step.max) << cls;
            EXPECT_LE(sim.at(cls).cross.max, 1.05 * real.at(cls).cross.max) << cls;
        }
        fs::remove_all(out);
    }
}

TEST(SimulatorRealism, a_nan_flows_forward_back_through_the_all_reduce_to_every_rank_and_stays) {
    TempDir tmp;
    const std::string out = tmp / "job";
    const std::string module = "module.module.decoder.layers.0.mlp.linear_fc2";
    auto sim = simulate(out, {"--ranks", "4", "--steps", "14", "--params", "16", "--xy", "--faults",
                              "nan@11:r3:mlayers.0.mlp.linear_fc2", "--truth", tmp / "truth.json"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const MsprobeTree tree = read_msprobe_tree(out);
    const auto index = index_rows(tree);
    auto nan_row = [](const TreeRow& r) { return r.cells.at("norm") == "nan"; };
    // Step 11, rank 3, micro-step 0: clean in forward order until the module, whose output's nans go 0 -> 1.
    std::vector<const TreeRow*> forward;
    for (const auto& r : tree.rows)
        if (r.rank == 3 && r.kind == "actv" && r.step == 11 && r.micro == 0) forward.push_back(&r);
    ASSERT_FALSE(forward.empty());
    std::size_t origin = forward.size();
    for (std::size_t i = 0; i < forward.size(); ++i)
        if (nan_row(*forward[i])) {
            origin = i;
            break;
        }
    ASSERT_LT(origin, forward.size()) << "no NaN in rank 3's activations at step 11";
    EXPECT_EQ(forward[origin]->name, module + ".output");
    EXPECT_EQ(forward[origin]->cells.at("nans"), "1");
    EXPECT_EQ(row_at(index, 3, "actv", module + ".output", 10, 0).cells.at("nans"), "0");
    // After it: what is computed from it (the next layer, the logits), not the batch or what came before.
    EXPECT_TRUE(nan_row(row_at(index, 3, "actv", "module.module.decoder.layers.0.output", 11, 0)));
    EXPECT_TRUE(nan_row(row_at(index, 3, "actv", "module.module.decoder.layers.1.input_layernorm.output", 11, 0)));
    EXPECT_EQ(row_at(index, 3, "actv", "module.module.decoder.layers.1.input_layernorm.output", 11, 0).cells.at("nans"),
              "1024")
        << "a norm spreads the NaN across its row";
    EXPECT_TRUE(nan_row(row_at(index, 3, "actv", ".output", 11, 0)));
    EXPECT_FALSE(nan_row(row_at(index, 3, "actv", "module.module.decoder.layers.0.input", 11, 0)));
    EXPECT_FALSE(nan_row(row_at(index, 3, "actv", ".input", 11, 0)));
    EXPECT_FALSE(nan_row(row_at(index, 3, "actv", ".output", 11, 1))) << "micro-step 1 ran on clean weights";
    for (int r : {0, 1, 2}) EXPECT_FALSE(nan_row(row_at(index, r, "actv", ".output", 11, 0))) << "rank " << r;
    // Back through every activation gradient and weight gradient of rank 3; the all-reduce takes it to every rank.
    EXPECT_TRUE(nan_row(row_at(index, 3, "actv_grad", ".output", 11, 0)));
    EXPECT_FALSE(nan_row(row_at(index, 3, "actv_grad", ".output", 11, 1)));
    for (const auto& r : tree.rows) {
        if (r.step < 11) {
            EXPECT_FALSE(nan_row(r) && r.cells.at("shape") != "nan") << r.kind << " " << r.name << " " << r.step;
        }
        if (r.step != 11 && r.step != 12) continue;
        const bool data = r.name.size() >= 6 && r.name.compare(r.name.size() - 6, 6, ".input") == 0 &&
                          (r.name == ".input" || r.name == "module.input" ||
                           r.name.find("embedding") != std::string::npos || r.name == "module.module.input");
        if (r.kind == "grad_unreduced" && r.step == 11) {
            EXPECT_EQ(nan_row(r), r.rank == 3) << r.rank << " " << r.name;
        }
        if (r.kind == "grad_reduced") {
            EXPECT_TRUE(nan_row(r)) << "rank " << r.rank << " " << r.name << " " << r.step;
        }
        if (r.kind == "exp_avg" || r.kind == "exp_avg_sq") {
            EXPECT_EQ(nan_row(r), r.step == 12) << "Adam's state is read before the step's update: " << r.kind;
        }
        if (r.step == 12 && r.kind == "actv") {
            EXPECT_EQ(nan_row(r), !data) << "every rank from the next step on, the batch aside: " << r.rank << " "
                                         << r.name;
        }
        if (r.step == 12 && (r.kind == "grad_unreduced" || r.kind == "param_origin")) {
            EXPECT_TRUE(nan_row(r));
        }
    }
    // The truth says exactly that.
    const auto truth = nlohmann::json::parse(read_file(tmp / "truth.json"));
    ASSERT_EQ(truth["faults"].size(), 1u);
    const auto& f = truth["faults"][0];
    EXPECT_EQ(f["kind"], "nan");
    EXPECT_EQ(f["step"], 11);
    EXPECT_EQ(f["rank"], 3);
    EXPECT_EQ(f["kind_of_tensor"], "actv");
    EXPECT_EQ(f["module"], module + ".output");
    EXPECT_EQ(f["micro_step"], 0);
}

TEST(SimulatorRealism, without_activations_a_nan_shows_first_in_that_ranks_gradients) {
    TempDir tmp;
    const std::string out = tmp / "job";
    auto sim = simulate(
        out, {"--ranks", "4", "--steps", "8", "--params", "8", "--faults", "nan@5:r2", "--truth", tmp / "truth.json"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    for (const auto& r : read_msprobe_tree(out).rows) {
        const bool nan = r.cells.at("norm") == "nan";
        if (r.step < 5 ||
            (r.step == 5 && (r.kind == "exp_avg" || r.kind == "exp_avg_sq" || r.kind == "param_origin"))) {
            EXPECT_FALSE(nan) << r.kind << " " << r.step;
        } else if (r.step == 5 && r.kind == "grad_unreduced") {
            EXPECT_EQ(nan, r.rank == 2) << r.rank;
        } else {
            EXPECT_TRUE(nan) << r.kind << " rank " << r.rank << " step " << r.step;
        }
        if (nan) {
            EXPECT_EQ(r.cells.at("nans"), r.cells.at("shape") == "[1024]" ? "1024" : r.cells.at("nans"));
        }
    }
    const auto f = nlohmann::json::parse(read_file(tmp / "truth.json"))["faults"][0];
    EXPECT_EQ(f["kind_of_tensor"], "grad_unreduced");
    EXPECT_EQ(f["rank"], 2);
    EXPECT_EQ(f["module"], "") << "every gradient of the rank at once: no single tensor is the origin";
    EXPECT_EQ(f["planted_module"], "module.module.decoder.layers.0.mlp.linear_fc2") << "the default, mid-network";
}

TEST(SimulatorRealism, a_bad_batch_scales_one_ranks_input_and_residual_stream_for_one_step) {
    TempDir tmp;
    const std::vector<std::string> common = {"--ranks", "4", "--steps", "12", "--params", "16", "--xy", "--seed", "9"};
    auto args = common;
    ASSERT_EQ(simulate(tmp / "healthy", common).exit_code, 0);
    args.insert(args.end(), {"--faults", "baddata@8:r1"});
    ASSERT_EQ(simulate(tmp / "bad", args).exit_code, 0);
    const MsprobeTree healthy_tree = read_msprobe_tree(tmp / "healthy"), bad_tree = read_msprobe_tree(tmp / "bad");
    const auto healthy = index_rows(healthy_tree), bad = index_rows(bad_tree);
    auto same = [&](int rank, const std::string& kind, const std::string& name, long long step, int micro = -1) {
        return row_at(bad, rank, kind, name, step, micro).cells == row_at(healthy, rank, kind, name, step, micro).cells;
    };
    auto x = [&](int rank, const std::string& kind, const std::string& name, long long step, int micro = -1) {
        return ratio(row_at(bad, rank, kind, name, step, micro), row_at(healthy, rank, kind, name, step, micro));
    };
    const std::string layer0 = "module.module.decoder.layers.0", layer2 = "module.module.decoder.layers.2";
    for (int micro : {0, 1}) {
        // The batch x25, the residual stream a little less at each layer, the normalised activations unchanged.
        EXPECT_NEAR(x(1, "actv", "module.module.embedding.word_embeddings.input", 8, micro), 25.0, 0.01);
        const double emb = x(1, "actv", "module.module.embedding.word_embeddings.output", 8, micro);
        const double mid = x(1, "actv", layer0 + ".output", 8, micro),
                     last = x(1, "actv", layer2 + ".output", 8, micro);
        EXPECT_GT(emb, 15.0);
        EXPECT_GT(emb, mid);
        EXPECT_GT(mid, last);
        EXPECT_GT(last, 5.0);
        EXPECT_TRUE(same(1, "actv", layer0 + ".input_layernorm.output", 8, micro));
        // Behind the norms the rank's gradients shrink, a norm's own input path most.
        EXPECT_NEAR(x(1, "actv_grad", layer0 + ".output", 8, micro), 0.08, 0.002);
        EXPECT_LT(x(1, "actv_grad", layer0 + ".input_layernorm.input", 8, micro), 0.01);
        EXPECT_TRUE(same(1, "actv_grad", ".output", 8, micro)) << "the logits' gradient does not change";
    }
    EXPECT_NEAR(x(1, "grad_unreduced", layer0 + ".mlp.linear_fc1.weight", 8), 0.08, 0.002);
    EXPECT_TRUE(same(1, "grad_unreduced", "module.module.embedding.word_embeddings.weight", 8));
    for (int r : {0, 2, 3}) {
        EXPECT_TRUE(same(r, "actv", "module.module.embedding.word_embeddings.input", 8, 0)) << "rank " << r;
        EXPECT_TRUE(same(r, "grad_unreduced", layer0 + ".mlp.linear_fc1.weight", 8)) << "rank " << r;
        // The all-reduce moves every rank's reduced gradient, by the same amount.
        EXPECT_FALSE(same(r, "grad_reduced", layer0 + ".mlp.linear_fc1.weight", 8));
        EXPECT_EQ(row_at(bad, r, "grad_reduced", layer0 + ".mlp.linear_fc1.weight", 8).cells,
                  row_at(bad, 1, "grad_reduced", layer0 + ".mlp.linear_fc1.weight", 8).cells);
    }
    // Before it nothing differs; the step after, the batch is normal again (Adam's moments remember it).
    for (const auto& r : bad_tree.rows) {
        if (r.step < 8 ||
            (r.step > 8 && r.kind != "exp_avg" && r.kind != "exp_avg_sq" && r.kind.rfind("param_", 0) != 0)) {
            EXPECT_TRUE(same(r.rank, r.kind, r.name, r.step, r.micro)) << r.kind << " " << r.name << " step " << r.step;
        }
    }
    EXPECT_FALSE(same(0, "exp_avg", layer0 + ".mlp.linear_fc1.weight", 9));
}

TEST(SimulatorRealism, spikes_scale_gradients_on_every_rank_or_on_one_and_the_mean_follows) {
    TempDir tmp;
    const std::vector<std::string> common = {"--ranks", "4", "--steps", "8", "--params", "6", "--xy", "--seed", "4"};
    auto all = common, one = common;
    all.insert(all.end(), {"--faults", "spike@5x30"});
    one.insert(one.end(), {"--faults", "spike@5:r2x30"});
    ASSERT_EQ(simulate(tmp / "healthy", common).exit_code, 0);
    ASSERT_EQ(simulate(tmp / "all", all).exit_code, 0);
    ASSERT_EQ(simulate(tmp / "one", one).exit_code, 0);
    const MsprobeTree h = read_msprobe_tree(tmp / "healthy"), a = read_msprobe_tree(tmp / "all"),
                      o = read_msprobe_tree(tmp / "one");
    const auto hi = index_rows(h), ai = index_rows(a), oi = index_rows(o);
    const std::string w = "module.module.decoder.layers.0.self_attention.linear_qkv.weight";
    for (int r = 0; r < 4; ++r) {
        EXPECT_NEAR(ratio(row_at(ai, r, "grad_unreduced", w, 5), row_at(hi, r, "grad_unreduced", w, 5)), 30, 0.05);
        EXPECT_NEAR(ratio(row_at(ai, r, "grad_reduced", w, 5), row_at(hi, r, "grad_reduced", w, 5)), 30, 0.05);
        EXPECT_NEAR(ratio(row_at(ai, r, "actv_grad", ".output", 5, 0), row_at(hi, r, "actv_grad", ".output", 5, 0)), 30,
                    0.05);
        EXPECT_EQ(row_at(ai, r, "grad_unreduced", w, 6).cells, row_at(hi, r, "grad_unreduced", w, 6).cells);
        const double own = ratio(row_at(oi, r, "grad_unreduced", w, 5), row_at(hi, r, "grad_unreduced", w, 5));
        if (r == 2) {
            EXPECT_NEAR(own, 30, 0.05);
        } else {
            EXPECT_DOUBLE_EQ(own, 1.0);
        }
        // One rank x30 among 4: the mean grows on every rank alike, far less than x30.
        const double mean = ratio(row_at(oi, r, "grad_reduced", w, 5), row_at(hi, r, "grad_reduced", w, 5));
        EXPECT_GT(mean, 2.0);
        EXPECT_LT(mean, 20.0);
    }
}

TEST(SimulatorRealism, a_drift_grows_one_module_smoothly_to_its_factor) {
    TempDir tmp;
    const std::vector<std::string> common = {"--ranks", "2", "--steps", "40", "--params", "16", "--xy"};
    auto args = common;
    args.insert(args.end(), {"--faults", "drift@20:mlayers.1.mlp.linear_fc1x5"});
    ASSERT_EQ(simulate(tmp / "healthy", common).exit_code, 0);
    ASSERT_EQ(simulate(tmp / "drift", args).exit_code, 0);
    const MsprobeTree h = read_msprobe_tree(tmp / "healthy"), d = read_msprobe_tree(tmp / "drift");
    const auto hi = index_rows(h), di = index_rows(d);
    const std::string m = "module.module.decoder.layers.1.mlp.linear_fc1";
    auto x = [&](const std::string& kind, const std::string& name, long long step, int micro = -1) {
        return ratio(row_at(di, 0, kind, name, step, micro), row_at(hi, 0, kind, name, step, micro));
    };
    EXPECT_DOUBLE_EQ(x("actv", m + ".output", 19, 0), 1.0);
    double prev = 1.0;
    for (long long s = 20; s < 40; ++s) {
        const double g = x("actv", m + ".output", s, 0);
        EXPECT_NEAR(g, std::pow(5.0, (s - 19) / 20.0), 1e-4) << "step " << s;
        EXPECT_GT(g, prev);
        prev = g;
    }
    EXPECT_NEAR(x("actv", m + ".output", 39, 1), 5.0, 1e-4);
    EXPECT_NEAR(x("grad_unreduced", m + ".weight", 39), 5.0, 1e-3);
    EXPECT_NEAR(x("grad_reduced", m + ".weight", 39), 5.0, 1e-3);
    EXPECT_DOUBLE_EQ(x("actv", "module.module.decoder.layers.1.mlp.linear_fc2.output", 39, 0), 1.0);
    EXPECT_DOUBLE_EQ(x("grad_unreduced", "module.module.decoder.layers.1.mlp.linear_fc2.weight", 39), 1.0);
}

TEST(SimulatorRealism, a_stalled_rank_stops_writing_while_the_others_go_on_live) {
    TempDir tmp;
    const std::string out = tmp / "job";
    Background sim({program("msmon"), "simulate", out, "--ranks", "4", "--steps", "40", "--step-ms", "40", "--params",
                    "4", "--faults", "stall@10:r1"},
                   tmp.path());
    auto newest = [&](int rank) {
        long long last = -1;
        for (const auto& f : find_files(out, ".csv")) {
            if (f.find("-rank" + std::to_string(rank) + "-") == std::string::npos ||
                f.find("/grad_reduced_") == std::string::npos)
                continue;
            const auto at = f.rfind("grad_reduced_") + 13;
            last = std::max(last, std::stoll(f.substr(at)));
        }
        return last;
    };
    ASSERT_GE(wait_until([&] { return newest(0) >= 25; }, std::chrono::milliseconds(20000)).count(), 0);
    EXPECT_EQ(newest(1), 10) << "rank 1 went on writing after its stall";
    ASSERT_EQ(sim.wait(std::chrono::milliseconds(20000)), 0) << sim.err();
    for (int r : {0, 2, 3}) EXPECT_EQ(newest(r), 39) << "rank " << r;
    EXPECT_EQ(newest(1), 10);
}

TEST(SimulatorRealism, a_restart_writes_new_run_folders_resuming_at_the_last_multiple_of_ten) {
    TempDir tmp;
    const std::string out = tmp / "job";
    auto sim = simulate(out, {"--ranks", "2", "--steps", "40", "--params", "4", "--faults", "nan@22:r1,restart@25",
                              "--truth", tmp / "truth.json"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const MsprobeTree tree = read_msprobe_tree(out);
    ASSERT_EQ(tree.folders.size(), 4u) << "two launches of two ranks";
    std::map<std::string, std::pair<long long, long long>> steps;  // folder → first, last step
    std::map<std::string, int> nan_rows;
    for (const auto& r : tree.rows) {
        auto [it, fresh] = steps.try_emplace(r.folder, r.step, r.step);
        it->second.first = std::min(it->second.first, r.step);
        it->second.second = std::max(it->second.second, r.step);
        nan_rows[r.folder] += r.cells.at("norm") == "nan";
    }
    std::map<int, std::vector<std::string>> by_rank;
    for (const auto& f : tree.folders) by_rank[f.find("-rank0-") != std::string::npos ? 0 : 1].push_back(f);
    for (auto& [rank, folders] : by_rank) {
        ASSERT_EQ(folders.size(), 2u);
        if (steps[folders[0]].first != 0) std::swap(folders[0], folders[1]);  // the first launch starts at step 0
        const auto& first = folders[0];
        const auto& second = folders[1];
        EXPECT_NE(first.substr(first.rfind('-')), second.substr(second.rfind('-'))) << "a new run hash";
        EXPECT_EQ(steps[first], (std::pair<long long, long long>{0, 25}));
        EXPECT_EQ(steps[second], (std::pair<long long, long long>{20, 39}));
        EXPECT_GT(nan_rows[first], 0) << "the NaN at step 22 stayed until the job died";
        EXPECT_EQ(nan_rows[second], 0) << "resumed from the checkpoint of step 20, before the NaN";
        EXPECT_TRUE(fs::exists(out + "/monitor_output/" + second + "/exp_avg_20-20.csv"))
            << "the optimizer's state comes back with the checkpoint";
    }
    const auto truth = nlohmann::json::parse(read_file(tmp / "truth.json"));
    ASSERT_EQ(truth["faults"].size(), 2u);
    EXPECT_EQ(truth["faults"][1]["kind"], "restart");
    EXPECT_EQ(truth["faults"][1]["resume_step"], 20);
}

TEST(SimulatorRealism, truth_names_every_fault_where_the_csvs_show_it) {
    TempDir tmp;
    const std::string out = tmp / "job";
    auto sim = simulate(out, {"--ranks", "4", "--steps", "60", "--params", "16", "--xy", "--faults",
                              "restart@50,stall@45:r2,drift@30:mlayers.2.mlp,spike@12:r1x40,baddata@20:r0,nan@40:r3:"
                              "mlayers.1.input_layernorm",
                              "--truth", tmp / "truth.json"});
    ASSERT_EQ(sim.exit_code, 0) << sim.err;
    const auto truth = nlohmann::json::parse(read_file(tmp / "truth.json"));
    EXPECT_EQ(truth["ranks"], 4);
    EXPECT_EQ(truth["first_step"], 0);
    EXPECT_EQ(truth["last_step"], 59);
    EXPECT_EQ(truth["activations"], true);
    const auto& f = truth["faults"];
    ASSERT_EQ(f.size(), 6u);
    std::vector<std::string> kinds;
    for (const auto& x : f) {
        kinds.push_back(x["kind"]);
        for (const char* key : {"kind", "step", "rank", "kind_of_tensor", "module", "description"})
            EXPECT_TRUE(x.contains(key)) << key << " missing in " << x.dump();
    }
    EXPECT_EQ(kinds, (std::vector<std::string>{"spike", "baddata", "drift", "nan", "stall", "restart"}))
        << "in step order";
    const MsprobeTree tree = read_msprobe_tree(out);
    const auto index = index_rows(tree);
    // Each module the truth names is a row of that kind, rank and step, showing the fault.
    const auto& bad = f[1];
    EXPECT_EQ(bad["module"], "module.module.embedding.word_embeddings.input");
    EXPECT_EQ(bad["kind_of_tensor"], "actv");
    EXPECT_EQ(bad["rank"], 0);
    EXPECT_GT(ratio(row_at(index, 0, "actv", bad["module"], 20, 0), row_at(index, 0, "actv", bad["module"], 19, 0)),
              10);
    const auto& drift = f[2];
    EXPECT_EQ(drift["module"], "module.module.decoder.layers.2.mlp.output");
    EXPECT_EQ(drift["end_step"], 59);
    const auto& nan = f[3];
    EXPECT_EQ(nan["module"], "module.module.decoder.layers.1.input_layernorm.output");
    EXPECT_EQ(row_at(index, 3, "actv", nan["module"], 40, 0).cells.at("nans"), "1");
    EXPECT_EQ(row_at(index, 3, "actv", "module.module.decoder.layers.1.input_layernorm.input", 40, 0).cells.at("nans"),
              "0");
    EXPECT_EQ(f[0]["kind_of_tensor"], "actv_grad") << "the backward pass shows a spike first, at the output";
    EXPECT_EQ(f[0]["module"], ".output");
    EXPECT_GT(ratio(row_at(index, 1, "actv_grad", ".output", 12, 0), row_at(index, 1, "actv_grad", ".output", 11, 0)),
              10);
    EXPECT_EQ(f[0]["rank"], 1);
    EXPECT_EQ(f[4]["rank"], 2);
    EXPECT_EQ(f[4]["kind_of_tensor"], "");
    EXPECT_EQ(f[5]["resume_step"], 40);
}

TEST(SimulatorRealism, the_same_seed_writes_the_same_numbers_and_an_unknown_module_writes_nothing) {
    TempDir tmp;
    const std::vector<std::string> args = {
        "--ranks", "3", "--steps", "6", "--params", "5", "--xy", "--seed", "21", "--faults", "baddata@3:r2,spike@4"};
    ASSERT_EQ(simulate(tmp / "a", args).exit_code, 0);
    ASSERT_EQ(simulate(tmp / "b", args).exit_code, 0);
    const MsprobeTree a = read_msprobe_tree(tmp / "a"), b = read_msprobe_tree(tmp / "b");
    ASSERT_EQ(a.rows.size(), b.rows.size());
    for (std::size_t i = 0; i < a.rows.size(); ++i) EXPECT_EQ(a.rows[i].cells, b.rows[i].cells) << a.rows[i].file;
    auto r = simulate(tmp / "c", {"--faults", "nan@3:mlayers.7.mlp"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("layers.7.mlp"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(tmp / "c"));
}

}  // namespace
}  // namespace msmon::test
