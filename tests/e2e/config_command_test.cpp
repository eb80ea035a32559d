// `msmon config` writes the monitor config atomically: new inode, newer mtime, mode kept, symlink kept, other
// keys and their order unchanged; a config msprobe would reject is never written.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

using json = nlohmann::ordered_json;

const char* kConfig = R"({
    "targets": {},
    "dynamic_on": false,
    "collect_times": 1,
    "wg_distribution": true,
    "format": "csv",
    "ops": ["norm", "min", "max", "nans"],
    "eps": 1e-8,
    "ndigits": 6,
    "my_own_key": {"kept": [1, 2]},
    "alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": 0.5}}], "dump": true}
}
)";

TEST(ConfigCommand, enable_with_collect_times_replaces_the_file_atomically_and_keeps_everything_else) {
    TempDir tmp;
    const std::string real = tmp / "config.json", link = tmp / "link.json";
    write_file(real, kConfig);
    ASSERT_EQ(::chmod(real.c_str(), 0640), 0);
    std::filesystem::create_symlink("config.json", link);
    struct stat before {};
    ASSERT_EQ(::stat(real.c_str(), &before), 0);
    auto r = run({program("msmon"), "config", "enable", link, "--collect-times", "5"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    struct stat after {};
    ASSERT_EQ(::stat(real.c_str(), &after), 0);
    EXPECT_NE(after.st_ino, before.st_ino) << "not replaced by rename";
    EXPECT_TRUE(after.st_mtim.tv_sec > before.st_mtim.tv_sec ||
                (after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec > before.st_mtim.tv_nsec));
    EXPECT_EQ(after.st_mode & 07777, 0640u);
    EXPECT_TRUE(std::filesystem::is_symlink(link)) << "the link was replaced instead of its target";
    const json now = json::parse(read_file(real));
    json expected = json::parse(kConfig);
    expected["dynamic_on"] = true;
    expected["collect_times"] = 5;
    EXPECT_EQ(now, expected);
    std::vector<std::string> keys_now, keys_before;
    for (auto it = now.begin(); it != now.end(); ++it) keys_now.push_back(it.key());
    for (auto it = expected.begin(); it != expected.end(); ++it) keys_before.push_back(it.key());
    EXPECT_EQ(keys_now, keys_before) << "key order changed";
    EXPECT_TRUE(now["eps"].is_number_float());
    EXPECT_NE(read_file(real).find("1e-08"), std::string::npos);
    EXPECT_FALSE(std::filesystem::exists(tmp / ".config.json.msmon-XXXXXX"));
    int leftovers = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp.path())) leftovers += e.path().filename().string()[0] == '.';
    EXPECT_EQ(leftovers, 0) << "a temporary file was left behind";
}

TEST(ConfigCommand, stop_and_disable_say_what_msprobe_will_do) {
    TempDir tmp;
    const std::string cfg = tmp / "config.json";
    write_file(cfg, kConfig);
    auto stop = run({program("msmon"), "config", "stop", cfg});
    ASSERT_EQ(stop.exit_code, 0) << stop.err;
    EXPECT_EQ(json::parse(read_file(cfg))["collect_times"], 0);
    EXPECT_EQ(json::parse(read_file(cfg))["dynamic_on"], true);
    EXPECT_NE(stop.out.find("one more step"), std::string::npos) << stop.out;
    auto disable = run({program("msmon"), "config", "disable", cfg});
    ASSERT_EQ(disable.exit_code, 0);
    EXPECT_EQ(json::parse(read_file(cfg))["dynamic_on"], false);
    EXPECT_NE(disable.out.find("continues"), std::string::npos) << disable.out;
}

TEST(ConfigCommand, a_config_msprobe_would_reject_or_that_aborts_training_is_not_written) {
    TempDir tmp;
    const std::string cfg = tmp / "config.json";
    write_file(cfg, kConfig);
    struct stat before {};
    ASSERT_EQ(::stat(cfg.c_str(), &before), 0);
    for (const std::vector<std::string>& bad : {std::vector<std::string>{"eps=0"}, {"ndigits=25"}, {"alert.dump=7"},
                                               {"ops=\"norm\""}, {"print_struct=true"}}) {
        std::vector<std::string> argv = {program("msmon"), "config", "set", cfg};
        argv.insert(argv.end(), bad.begin(), bad.end());
        auto r = run(argv);
        EXPECT_EQ(r.exit_code, 1) << bad[0];
        EXPECT_NE(r.err.find("not written"), std::string::npos) << r.err;
    }
    struct stat after {};
    ASSERT_EQ(::stat(cfg.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(read_file(cfg), kConfig);
    auto forced = run({program("msmon"), "config", "set", cfg, "print_struct=true", "--yes"});
    EXPECT_EQ(forced.exit_code, 0) << forced.err;
    EXPECT_NE(forced.out.find("ABORTS training"), std::string::npos) << forced.out;
    auto nested = run({program("msmon"), "config", "set", cfg, "alert.dump=false", "ops=[\"norm\",\"max\"]"});
    ASSERT_EQ(nested.exit_code, 0) << nested.err;
    const json now = json::parse(read_file(cfg));
    EXPECT_EQ(now["alert"]["dump"], false);
    EXPECT_EQ(now["ops"], json::parse(R"(["norm","max"])"));
}

TEST(ConfigCommand, a_file_caught_while_the_trainer_rewrites_it_is_read_once_it_is_whole) {
    TempDir tmp;
    const std::string cfg = tmp / "config.json";
    write_file(cfg, "");  // the trainer truncated it and has not written yet
    std::thread trainer([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        write_file(cfg, kConfig);
    });
    auto r = run({program("msmon"), "config", "enable", cfg, "--collect-times", "3"});
    trainer.join();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(json::parse(read_file(cfg))["collect_times"], 3);
    EXPECT_EQ(json::parse(read_file(cfg))["my_own_key"], json::parse(R"({"kept": [1, 2]})"));
}

}  // namespace
}  // namespace msmon::test
