// MSMON_SKIP_UNLESS_REQUIRED: a skip naming what is missing, or with MSMON_TEST_REQUIRE_ALL=1 a fatal failure naming
// it; either way the function that reached it returns there.
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

constexpr const char* kMissing = "the widget is not installed (apt-get install widget)";

// MSMON_TEST_REQUIRE_ALL set to `value` (unset for nullptr) for the scope; the run's own setting comes back after.
class RequireAllSetting {
public:
    explicit RequireAllSetting(const char* value) {
        if (const char* v = std::getenv(kName)) before_ = v;
        if (value) ::setenv(kName, value, 1);
        else ::unsetenv(kName);
    }
    ~RequireAllSetting() {
        if (before_) ::setenv(kName, before_->c_str(), 1);
        else ::unsetenv(kName);
    }
    RequireAllSetting(const RequireAllSetting&) = delete;
    RequireAllSetting& operator=(const RequireAllSetting&) = delete;

private:
    static constexpr const char* kName = "MSMON_TEST_REQUIRE_ALL";
    std::optional<std::string> before_;
};

void needs_the_widget(bool& went_on) {
    MSMON_SKIP_UNLESS_REQUIRED(kMissing);
    went_on = true;
}

// What reaching the macro reports, taken from gtest before it reaches this test's own result.
struct Outcome {
    std::vector<testing::TestPartResult> results;
    bool went_on = false;
};

Outcome reach_the_macro() {
    Outcome o;
    testing::TestPartResultArray results;
    {
        testing::ScopedFakeTestPartResultReporter intercept(
            testing::ScopedFakeTestPartResultReporter::INTERCEPT_ONLY_CURRENT_THREAD, &results);
        needs_the_widget(o.went_on);
    }
    for (int i = 0; i < results.size(); ++i) o.results.push_back(results.GetTestPartResult(i));
    return o;
}

TEST(SkipUnlessRequired, skips_with_what_is_missing_unless_the_run_requires_all) {
    for (const char* value : {static_cast<const char*>(nullptr), "", "0", "yes"}) {
        const std::string shown = value ? std::string("'") + value + "'" : "unset";
        RequireAllSetting setting(value);
        const Outcome o = reach_the_macro();
        EXPECT_FALSE(o.went_on) << shown;
        ASSERT_EQ(o.results.size(), 1u) << shown;
        EXPECT_EQ(o.results[0].type(), testing::TestPartResult::kSkip) << shown;
        EXPECT_NE(std::string(o.results[0].message()).find(kMissing), std::string::npos)
            << shown << ": " << o.results[0].message();
        EXPECT_EQ(std::string(o.results[0].message()).find("MSMON_TEST_REQUIRE_ALL"), std::string::npos)
            << shown << ": " << o.results[0].message();
    }
}

// Fatal, so that in a fixture's SetUp the test body does not run, as after a skip.
TEST(SkipUnlessRequired, fails_fatally_naming_what_is_missing_when_the_run_requires_all) {
    RequireAllSetting setting("1");
    const Outcome o = reach_the_macro();
    EXPECT_FALSE(o.went_on);
    ASSERT_EQ(o.results.size(), 1u);
    EXPECT_EQ(o.results[0].type(), testing::TestPartResult::kFatalFailure);
    const std::string message = o.results[0].message();
    EXPECT_NE(message.find(std::string("required in this run (MSMON_TEST_REQUIRE_ALL=1) but missing: ") + kMissing),
              std::string::npos)
        << message;
}

}  // namespace
}  // namespace msmon::test
