// Ranks in the parallel layout: a pipeline-parallel job written as msprobe writes it (4 ranks, 2 stages:
// ranks 0-1 hold the embedding and layers 0-1, ranks 2-3 layers 2-3 and the head). With one step fixed the Layers
// tab shows the whole model across the stages, each rank's tensors where they belong, and names the stages; one
// tensor fixed lists the ranks that hold it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;

std::vector<std::string> stage_modules(int stage) {
    std::vector<std::string> out;
    if (stage == 0) out = {"module.embed.input", "module.embed.output"};
    for (int l = stage * 2; l < stage * 2 + 2; ++l)
        for (const char* m : {"norm", "fc1", "fc2"})
            for (const char* side : {"input", "output"})
                out.push_back("module.layers." + std::to_string(l) + "." + m + "." + side);
    if (stage == 1) out.insert(out.end(), {"module.head.input", "module.head.output"});
    return out;
}

// Rank r's activations for steps 0-19, one CSV; a NaN from layers.2.fc1.output on rank 2 at step 12 on.
void write_pipeline_job(const std::string& job) {
    namespace fs = std::filesystem;
    for (int rank = 0; rank < 4; ++rank) {
        const fs::path dir =
            fs::path(job) / "monitor_output" / ("Nov26_00-00-00-rank" + std::to_string(rank) + "-0a1b2c3d");
        fs::create_directories(dir);
        std::ofstream out(dir / "actv_0-19.csv");
        out << "vpp_stage,name,step,micro_step,min,max,norm,mean,nans,zeros,shape,dtype\n";
        const auto modules = stage_modules(rank / 2);
        for (int step = 0; step < 20; ++step) {
            bool nan = false;
            for (std::size_t m = 0; m < modules.size(); ++m) {
                nan = nan || (rank == 2 && step >= 12 && modules[m] == "module.layers.2.fc1.output");
                const double norm = 1.0 + 0.1 * static_cast<double>(m) + 0.01 * ((step * 7 + rank * 3) % 5);
                char line[256];
                std::snprintf(line, sizeof line, "0,%s,%d,0,%g,%g,%s,0.001,%d,0,\"[8, 4]\",torch.float32\n",
                              modules[m].c_str(), step, -norm / 10, norm / 10,
                              nan ? "nan" : std::to_string(norm).c_str(), nan ? 1 : 0);
                out << line;
            }
        }
    }
}

TEST(TuiLayersPipeline, one_step_fixed_shows_the_whole_model_across_the_stages_and_names_them) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    write_pipeline_job(tmp / "job");
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db"}).exit_code, 0);
    TmuxSession t(program("msmon-tui") + " --db " + (tmp / "store.db"), 130, 40, tmux_env(tmp));
    ASSERT_FALSE(t.wait_for("| 1 incident |", milliseconds(20000)).empty()) << t.capture();
    // The Overview names the stages and keeps each stage's ranks together, whatever the sort: a rank deviates from
    // its own stage (the other stage holds other layers).
    ASSERT_FALSE(t.wait_for("2 pipeline stages: r0-1 layers 0-1, r2-3 layers 2-3", milliseconds(15000)).empty())
        << t.capture();
    t.send_keys("ss", true);
    std::string overview = t.wait_for("sort deviation", milliseconds(15000));
    ASSERT_FALSE(overview.empty()) << t.capture();
    std::vector<int> ranks;
    const std::regex rank_row(R"(^[ !](\d+) )");
    std::smatch m;
    bool listed = false;  // the rows under the list's header
    for (const auto& line : lines_of(overview)) {
        if (line.rfind("rank ", 0) == 0) listed = true;
        else if (listed && std::regex_search(line, m, rank_row)) ranks.push_back(std::stoi(m[1]));
        else if (listed) break;
    }
    ASSERT_EQ(ranks.size(), 4u) << overview;
    EXPECT_LT(std::max(ranks[0], ranks[1]), 2) << overview;
    EXPECT_GE(std::min(ranks[2], ranks[3]), 2) << overview;
    t.send_keys("7", true);
    // One rank: rank 2, its own slice (layers 2-3 and the head), the cursor on the NaN's first cell.
    std::string screen = t.wait_for("step 12, rank 2, module.layers.2.fc1.output: nan", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("rank 2  kind actv  op norm  14 tensors"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("module.embed.output"), std::string::npos) << screen;

    // One step: the whole model, in model order, every rank across, the stages named.
    t.send_keys("d", true);
    screen = t.wait_for("2 pipeline stages: r0-1 layers 0-1, r2-3 layers 2-3", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("step 12  kind actv  op norm  28 tensors on 4 ranks"), std::string::npos) << screen;
    std::vector<std::string> order;
    for (const auto& line : lines_of(screen))
        if (line.rfind("module.", 0) == 0) order.push_back(line.substr(0, line.find(' ')));
    ASSERT_EQ(order.size(), 28u) << screen;
    EXPECT_EQ(order.front(), "module.embed.input") << screen;
    EXPECT_EQ(order[2], "module.layers.0.norm.input") << screen;
    EXPECT_EQ(order[14], "module.layers.2.norm.input") << screen;
    EXPECT_EQ(order.back(), "module.head.output") << screen;
    EXPECT_NE(screen.find("step 12, rank 2, module.layers.2.fc1.output: nan  (the top incident began here)"),
              std::string::npos)
        << screen;

    // One tensor: only the ranks that hold it.
    t.send_keys("d", true);
    screen = t.wait_for("module.layers.2.fc1.output  kind actv  op norm  2 ranks", milliseconds(15000));
    ASSERT_FALSE(screen.empty()) << t.capture();
    EXPECT_NE(screen.find("rank 2"), std::string::npos) << screen;
    EXPECT_NE(screen.find("rank 3"), std::string::npos) << screen;
    EXPECT_EQ(screen.find("rank 0 "), std::string::npos) << screen;
    // r goes through the ranks listed, those holding the tensor: 2, 3, and round to 2.
    for (const char* rank : {"step 12, rank 3, ", "step 12, rank 2, "}) {
        t.send_keys("r", true);
        ASSERT_FALSE(t.wait_for(rank, milliseconds(15000)).empty()) << rank << "\n" << t.capture();
    }
}

}  // namespace
}  // namespace msmon::test
