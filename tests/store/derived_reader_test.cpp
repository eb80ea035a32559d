// Derived kinds: computed when read from what the store holds, equal to what a person computes by hand
// from `msmon query`'s stored values, listed only where their inputs exist.
#include "store/derived_reader.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

class DerivedKinds : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(run({program("msmon"), "simulate", tmp_ / "job", "--ranks", "2", "--steps", "20"}).exit_code, 0);
        ASSERT_EQ(run({program("msmon"), "ingest", tmp_ / "job", "--db", tmp_ / "store.db"}).exit_code, 0);
        reader_ = with_derived_kinds(open_sqlite_reader(tmp_ / "store.db"));
    }
    // (rank, name, step) -> value of one kind and op, as stored.
    std::map<std::tuple<int, std::string, std::int64_t>, double> values(const std::string& kind,
                                                                        const std::string& op) {
        std::map<std::tuple<int, std::string, std::int64_t>, double> out;
        PointFilter f;
        f.kind = kind;
        f.op = op;
        reader_->points(f, [&](const Point& p) { out[{p.rank, std::string(p.name), p.step}] = p.value; });
        return out;
    }
    TempDir tmp_;
    std::unique_ptr<Reader> reader_;
};

TEST_F(DerivedKinds, the_catalog_lists_them_after_the_stored_kinds_with_their_op) {
    const auto c = reader_->catalog();
    ASSERT_GE(c.kinds.size(), 2u);
    EXPECT_EQ(c.kinds[c.kinds.size() - 2],
              (std::pair<std::string, std::vector<std::string>>{"derived.update_ratio", {"ratio"}}));
    EXPECT_EQ(c.kinds.back(), (std::pair<std::string, std::vector<std::string>>{"derived.layer_grad", {"norm"}}));
    // The store itself does not list them.
    for (const auto& [kind, ops] : open_sqlite_reader(tmp_ / "store.db")->catalog().kinds)
        EXPECT_FALSE(is_derived_kind(kind)) << kind;
}

TEST_F(DerivedKinds, update_ratio_is_the_norms_difference_over_the_origin_norm_for_every_parameter_and_step) {
    const auto origin = values("param_origin", "norm"), updated = values("param_updated", "norm");
    const auto ratio = values("derived.update_ratio", "ratio");
    ASSERT_FALSE(ratio.empty());
    EXPECT_EQ(ratio.size(), origin.size());  // every parameter at every step has both here
    for (const auto& [key, r] : ratio) {
        ASSERT_TRUE(origin.count(key) && updated.count(key));
        EXPECT_DOUBLE_EQ(r, std::abs(updated.at(key) - origin.at(key)) / std::abs(origin.at(key)));
    }
}

TEST_F(DerivedKinds, layer_grad_is_the_root_sum_of_squares_of_the_layer_s_gradient_norms) {
    const auto grads = values("grad_reduced", "norm");
    const auto layers = values("derived.layer_grad", "norm");
    ASSERT_FALSE(layers.empty());
    std::map<std::tuple<int, std::string, std::int64_t>, double> sums;
    for (const auto& [key, g] : grads) {
        const std::string& name = std::get<1>(key);
        const auto at = name.find("layers.");
        if (at == std::string::npos) continue;
        const auto end = name.find('.', at + 7);
        sums[{std::get<0>(key), name.substr(0, end), std::get<2>(key)}] += g * g;
    }
    ASSERT_EQ(layers.size(), sums.size());
    for (const auto& [key, v] : layers) EXPECT_DOUBLE_EQ(v, std::sqrt(sums.at(key))) << std::get<1>(key);
    // In layer order on each rank, named after the layer.
    const auto rows = reader_->module_rows("derived.layer_grad", 1);
    ASSERT_GE(rows.size(), 2u);
    EXPECT_EQ(rows[0].name, "module.module.decoder.layers.0");
    EXPECT_EQ(rows[1].name, "module.module.decoder.layers.1");
    // The name filter is the layer's name.
    PointFilter f;
    f.kind = "derived.layer_grad";
    f.name_regex = "layers\\.1$";
    std::size_t n = 0;
    reader_->points(f, [&](const Point& p) {
        EXPECT_EQ(p.name, "module.module.decoder.layers.1");
        ++n;
    });
    EXPECT_EQ(n, 2u * 20u);  // 2 ranks x 20 steps
}

TEST_F(DerivedKinds, rank_series_and_module_series_answer_for_derived_kinds_as_for_stored_ones) {
    const auto series = reader_->rank_series({"derived.layer_grad", "norm", "layers\\.0$", 0, {}});
    ASSERT_EQ(series.size(), 2u);
    const auto layers = values("derived.layer_grad", "norm");
    for (const auto& s : series) {
        ASSERT_EQ(s.points.size(), 20u);
        for (const auto& p : s.points)
            EXPECT_DOUBLE_EQ(p.value, layers.at({s.rank, "module.module.decoder.layers.0", p.step}));
    }
    const auto rows = reader_->module_rows("derived.layer_grad", 0);
    const auto ms = reader_->module_series({"derived.layer_grad", "norm", 0, {rows[0]}, {}});
    ASSERT_EQ(ms.size(), 1u);
    ASSERT_EQ(ms[0].size(), 20u);
    EXPECT_DOUBLE_EQ(ms[0][5].value, layers.at({0, rows[0].name, 5}));
}

TEST_F(DerivedKinds, the_cli_marks_them_and_says_when_there_are_none) {
    auto all = run({program("msmon"), "query", "--db", tmp_ / "store.db", "--derived", "--format", "json"});
    ASSERT_EQ(all.exit_code, 0) << all.err;
    EXPECT_NE(all.out.find("\"kind\":\"derived.update_ratio\""), std::string::npos);
    EXPECT_NE(all.out.find("\"kind\":\"derived.layer_grad\""), std::string::npos);
    EXPECT_EQ(all.out.find("\"kind\":\"grad_reduced\""), std::string::npos);  // derived values only
    auto one = run({program("msmon"), "query", "--db", tmp_ / "store.db", "--kind", "derived.layer_grad", "--rank", "0",
                    "--steps", "3"});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    const auto layers = reader_->module_rows("derived.layer_grad", 0).size();
    EXPECT_GE(layers, 2u);
    EXPECT_EQ(static_cast<std::size_t>(std::count(one.out.begin(), one.out.end(), '\n')), 1 + layers) << one.out;
    auto bad = run({program("msmon"), "query", "--db", tmp_ / "store.db", "--derived", "--kind", "actv"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("stored one"), std::string::npos) << bad.err;
}

// A job whose reduced gradients carry no norm (min and max only) but whose unreduced ones do: the layer norms come
// from the unreduced ones (the catalog lists the kind because of them), and a window reads only its steps.
TEST(DerivedKindsInputs, layer_grad_reads_the_gradient_kind_that_has_norms_and_a_window_its_steps) {
    TempDir tmp;
    const std::string dir = tmp / "job/monitor_output/Nov26_00-00-00-rank0-0a1b2c3d";
    std::filesystem::create_directories(dir);
    std::ofstream reduced(dir + "/grad_reduced_0-9.csv"), unreduced(dir + "/grad_unreduced_0-9.csv");
    reduced << "vpp_stage,name,step,min,max\n";
    unreduced << "vpp_stage,name,step,norm\n";
    const char* names[] = {"module.layers.0.fc1.weight", "module.layers.0.fc2.weight", "module.layers.1.fc1.weight"};
    for (int step = 0; step < 10; ++step)
        for (int n = 0; n < 3; ++n) {
            reduced << "0," << names[n] << "," << step << ",-1,1\n";
            unreduced << "0," << names[n] << "," << step << "," << (n + 1) * (step + 1) << "\n";
        }
    reduced.close(), unreduced.close();
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "s.db"}).exit_code, 0);
    auto reader = with_derived_kinds(open_sqlite_reader(tmp / "s.db"));
    const auto rows = reader->module_rows("derived.layer_grad", 0);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].name, "module.layers.0");
    EXPECT_EQ(rows[1].name, "module.layers.1");
    const auto series = reader->module_series({"derived.layer_grad", "norm", 0, rows, {5, 7, 0, std::nullopt}});
    ASSERT_EQ(series.size(), 2u);
    ASSERT_EQ(series[0].size(), 3u);  // steps 5, 6, 7 only
    EXPECT_EQ(series[0][0].step, 5);
    EXPECT_DOUBLE_EQ(series[0][0].value, std::sqrt(6.0 * 6 + 12.0 * 12));  // layer 0: norms 6 and 12 at step 5
    EXPECT_DOUBLE_EQ(series[1][2].value, 24);                              // layer 1: one tensor, norm 3 x 8 at step 7
}

// msprobe's own xy run (activations only, ../shared): no derived kind is listed, and --derived says why.
TEST(DerivedKindsAbsent, a_store_without_their_inputs_lists_none_and_the_cli_says_why) {
    const std::string shared = shared_dir();
    if (shared.empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared is absent: msprobe's xy run is not available");
    TempDir tmp;
    ASSERT_EQ(run({program("msmon"), "ingest", shared + "/fixtures/msprobe-real/xy", "--db", tmp / "s.db"}).exit_code,
              0);
    for (const auto& [kind, ops] : with_derived_kinds(open_sqlite_reader(tmp / "s.db"))->catalog().kinds)
        EXPECT_FALSE(is_derived_kind(kind)) << kind;
    auto r = run({program("msmon"), "query", "--db", tmp / "s.db", "--derived"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_NE(r.err.find("no derived kind"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace msmon::test
