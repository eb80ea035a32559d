// `--version`: which msmon this is, for a bug report or to match a store to the msmon that reads it.
#include <gtest/gtest.h>

#include <regex>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

TEST(Version, both_programs_print_the_version_commit_and_build_date) {
    std::string first;
    for (const std::string name : {"msmon", "msmon-tui"}) {
        const auto r = run({program(name), "--version"});
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::smatch m;
        ASSERT_TRUE(std::regex_match(
            r.out, m,
            std::regex(name +
                       R"( (\d+\.\d+\.\d+) \(commit ([0-9a-f]{7,40}(-dirty)?|unknown), built \d{4}-\d\d-\d\d\)\n)")))
            << r.out;
        if (first.empty()) first = r.out.substr(name.size());
        else EXPECT_EQ(r.out.substr(name.size()), first) << "one build: the same version, commit and date";
    }
}

}  // namespace
}  // namespace msmon::test
