// A 50 MB line (no newline for 50 MB, then one) in a CSV: reported as one malformed line with its file and line
// number, skipped, the rows around it kept, and msmon's memory stays bounded (it never holds the line).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

TEST(HugeLine, a_50_mb_line_is_reported_and_skipped_in_bounded_memory) {
    TempDir tmp;
    const std::string run_dir = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(run_dir);
    auto row = [](int step) {
        return "0,layer.weight," + std::to_string(step) + ",-1,1,0.5,0,0,0,\"[4, 4]\",torch.float32\n";
    };
    std::string csv = "vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype\n" + row(0) + "0,";
    csv.append(50u << 20, 'x');
    csv += ",1,-1,1,0.5,0,0,0,\"[4, 4]\",torch.float32\n" + row(2);
    write_file(run_dir + "/grad_reduced_0-2.csv", csv);
    csv.clear();
    csv.shrink_to_fit();
    const std::map<std::string, std::string> env = {{"XDG_STATE_HOME", tmp / "state"}};
    auto r = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db"}, env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("2 rows"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("1 malformed lines"), std::string::npos) << r.out;
    rusage usage{};
    ASSERT_EQ(::getrusage(RUSAGE_CHILDREN, &usage), 0);
    const std::string log = read_file(tmp / "state/msmon/msmon.log");
    EXPECT_NE(log.find("grad_reduced_0-2.csv:3"), std::string::npos) << log.substr(0, 2000);
    auto q = run({program("msmon"), "query", "--db", tmp / "store.db", "--op", "norm"}, env);
    EXPECT_NE(q.out.find("layer.weight,0,,norm,0.5"), std::string::npos) << q.out;
    EXPECT_NE(q.out.find("layer.weight,2,,norm,0.5"), std::string::npos) << q.out;
    std::printf("[HugeLine] peak RSS of msmon ingest (largest child): %ld KB\n", usage.ru_maxrss);
#ifdef MSMON_SANITIZED
    // The bound is not asserted here; the checks above are. The largest child's peak counts its pages before exec,
    // i.e. this test process's: under ASan that holds the 50 MB string in the free quarantine plus shadow memory, so
    // the figure says nothing about msmon.
    std::printf("[HugeLine] peak RSS bound not checked under sanitizers\n");
    RecordProperty("peak_rss_bound", "not checked under sanitizers");
#else
    EXPECT_LT(usage.ru_maxrss, 40 * 1024) << "peak RSS " << usage.ru_maxrss << " KB: the 50 MB line was held in memory";
#endif
}

}  // namespace
}  // namespace msmon::test
