// `msmon config` writes the monitor config atomically: new inode, newer mtime, mode kept, symlink kept, other
// keys, their order and the user's text of them unchanged; a config msprobe would reject is never written.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/e2e_support.hpp"
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
    // Through a link the user means (--follow-config-link; without it a link is refused: SharedNode.*).
    auto r = run({program("msmon"), "config", "enable", link, "--collect-times", "5", "--follow-config-link"});
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
    // The user's text, byte for byte, but for the two values' lines (4-space indent, one-line lists, 1e-8 kept).
    std::string expected_text = kConfig;
    expected_text.replace(expected_text.find("\"dynamic_on\": false"), 19, "\"dynamic_on\": true");
    expected_text.replace(expected_text.find("\"collect_times\": 1"), 18, "\"collect_times\": 5");
    EXPECT_EQ(read_file(real), expected_text);
    EXPECT_FALSE(std::filesystem::exists(tmp / ".config.json.msmon-XXXXXX"));
    int leftovers = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp.path()))
        leftovers += e.path().filename().string()[0] == '.';
    EXPECT_EQ(leftovers, 0) << "a temporary file was left behind";
}

// The trainer runs as another user than the one editing (often root): the replaced file keeps its owner, group and
// mode, or the trainer's write-back fails and leaves dynamic_on true. Where the owner cannot be kept (a third user
// editing a world-writable file in a shared folder), nothing is replaced and msmon says why.
TEST(ConfigCommand, the_replaced_config_keeps_its_owner_group_and_mode_or_is_not_replaced) {
    if (::geteuid() != 0) MSMON_SKIP_UNLESS_REQUIRED("needs root (files owned by other users)");
    TempDir tmp;
    const std::string path = tmp / "config.json";
    write_file(path, kConfig);
    ASSERT_EQ(::chown(path.c_str(), 12345, 23456), 0);
    ASSERT_EQ(::chmod(path.c_str(), 0664), 0);
    auto r = run({program("msmon"), "config", "enable", path, "--collect-times", "5"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    struct stat after {};
    ASSERT_EQ(::stat(path.c_str(), &after), 0);
    EXPECT_EQ(after.st_uid, 12345u);
    EXPECT_EQ(after.st_gid, 23456u);
    EXPECT_EQ(after.st_mode & 07777, 0664u);
    EXPECT_EQ(json::parse(read_file(path))["collect_times"], 5);

    // As a third user (nobody) on a world-writable file in a world-writable folder: it could write the file, but
    // not give the new one the owner back.
    ASSERT_EQ(::chmod(tmp.path().c_str(), 01777), 0);
    ASSERT_EQ(::chmod(path.c_str(), 0666), 0);
    const std::string text_before = read_file(path);
    struct stat before {};
    ASSERT_EQ(::stat(path.c_str(), &before), 0);
    auto as_nobody = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", program("msmon"),
                          "config", "enable", path, "--collect-times", "7"},
                         {{"HOME", tmp / "nobody-home"}});
    EXPECT_EQ(as_nobody.exit_code, 1) << as_nobody.out << as_nobody.err;
    EXPECT_NE(as_nobody.err.find("cannot keep " + path + "'s owner 12345:23456"), std::string::npos) << as_nobody.err;
    EXPECT_NE(as_nobody.err.find("nothing was changed"), std::string::npos) << as_nobody.err;
    ASSERT_EQ(::stat(path.c_str(), &after), 0);
    EXPECT_EQ(after.st_ino, before.st_ino);
    EXPECT_EQ(read_file(path), text_before);
    int leftovers = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp.path()))
        leftovers += e.path().filename().string()[0] == '.';
    EXPECT_EQ(leftovers, 0) << "a temporary file was left behind";
}

// A monitor config nested 70,000 objects deep: `config show` and `config enable` recursed to SIGSEGV (enable also
// left its temp file behind). Refused with the reason, nothing written; ingest's --monitor-config too.
TEST(ConfigCommand, a_config_nested_70000_levels_deep_is_refused_without_crashing) {
    TempDir tmp;
    const std::string path = tmp / "config.json";
    std::string deep = "{\"targets\": ";
    for (int i = 0; i < 70000; ++i) deep += "{\"a\":";
    deep += "{}";
    deep += std::string(70000, '}');
    deep += "}";
    write_file(path, deep);
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"show", path}, {"enable", path, "--collect-times", "3"}}) {
        std::vector<std::string> argv = {program("msmon"), "config"};
        argv.insert(argv.end(), args.begin(), args.end());
        auto r = run(argv, {{"XDG_STATE_HOME", tmp / "state"}});
        EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("nested deeper than 256 levels"), std::string::npos) << args[0] << ": " << r.err;
    }
    EXPECT_EQ(read_file(path), deep);
    int leftovers = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp.path()))
        leftovers += e.path().filename().string()[0] == '.';
    EXPECT_EQ(leftovers, 0);
    std::filesystem::create_directories(tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd");
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db", "--monitor-config", path},
                      {{"XDG_STATE_HOME", tmp / "state"}, {"XDG_CACHE_HOME", tmp / "cache"}});
    EXPECT_NE(ingest.exit_code, 0);
    EXPECT_GE(ingest.exit_code, 1);
    EXPECT_LE(ingest.exit_code, 2) << ingest.err;
    EXPECT_NE(ingest.err.find("nested deeper than 256 levels"), std::string::npos) << ingest.err;
}

// `config enable` killed (SIGKILL, the OOM killer) while it writes the new config leaves
// nothing in the trainer's folder: the new file has no name until it is complete (O_TMPFILE). Before, a
// `.config.json.msmon-XXXXXX` stayed behind for every kill. The kill lands while the file is open for writing,
// seen in /proc/PID/fd; the config stays whole, old or new.
// A FIFO, a folder or /dev/zero given as the monitor config: `config show` and `config enable` blocked on the FIFO
// until killed, read a folder as "the file is empty", and died of std::bad_alloc on /dev/zero. Each is refused at
// once, named for what it is, exit 1, and nothing is written.
TEST(ConfigCommand, a_fifo_a_folder_or_dev_zero_as_the_config_is_refused_at_once_by_what_it_is) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    ASSERT_EQ(::mkfifo((tmp / "fifo.json").c_str(), 0644), 0);
    std::filesystem::create_directories(tmp / "folder.json");
    for (const auto& [path, what] : {std::pair<std::string, std::string>{tmp / "fifo.json", "a FIFO"},
                                     {tmp / "folder.json", "a folder"},
                                     {"/dev/zero", "a device"}}) {
        for (const std::string verb : {"show", "enable"}) {
            Background config({program("msmon"), "config", verb, path}, tmp.path(), env);
            EXPECT_EQ(config.wait(std::chrono::seconds(20)), 1) << verb << " " << path << ": " << config.err();
            EXPECT_NE(config.err().find(path + " is " + what + ", not a regular file"), std::string::npos)
                << verb << " " << path << ": " << config.err();
        }
    }
    EXPECT_TRUE(std::filesystem::is_fifo(tmp / "fifo.json"));
    EXPECT_TRUE(std::filesystem::is_empty(tmp / "folder.json"));
}

// A monitor config past the bound on a JSON document (64 MiB unless set; 1 MiB here): refused by the bound's name
// (it was a fixed 16 MiB, named nowhere), and read once the bound is raised.
TEST(ConfigCommand, a_config_past_the_json_document_bound_is_refused_by_the_settings_name) {
    TempDir tmp;
    auto env = isolated_env(tmp);
    std::string big = R"({"targets": {}, "dynamic_on": false, "collect_times": 1, "format": "csv", "ops": ["norm"],)";
    big += R"( "pad": ")" + std::string(2u << 20, 'x') + "\"}\n";
    write_file(tmp / "config.json", big);
    write_file(tmp / "settings.toml", "[limits]\njson_document_mib = 1\n");
    env["MSMON_CONFIG"] = tmp / "settings.toml";
    auto show = run({program("msmon"), "config", "show", tmp / "config.json"}, env);
    EXPECT_EQ(show.exit_code, 1) << show.err;
    EXPECT_NE(show.err.find(tmp / "config.json" +
                            " is larger than 1 MiB (the limit limits.json_document_mib in msmon's settings)"),
              std::string::npos)
        << show.err;
    write_file(tmp / "settings.toml", "[limits]\njson_document_mib = 4\n");
    show = run({program("msmon"), "config", "show", tmp / "config.json"}, env);
    EXPECT_EQ(show.exit_code, 0) << show.err;
}

TEST(ConfigCommand, killed_while_writing_the_new_config_it_leaves_no_file_behind) {
    TempDir tmp;
    const std::string dir = tmp / "cfg", path = dir + "/config.json";
    std::filesystem::create_directories(dir);
    // 300,000 targets (10 MB written): built as text, since ordered_json inserts in linear time per key.
    std::string original = "{\n  \"targets\": {";
    for (int i = 0; i < 300000; ++i)
        original += std::string(i ? "," : "") + "\n    \"module.layers." + std::to_string(i) + ".mlp\": {}";
    original +=
        "\n  },\n  \"dynamic_on\": false,\n  \"collect_times\": 1,\n  \"format\": \"csv\",\n  \"ops\": [\"norm\"]\n}\n";
    int caught = 0;
    for (int attempt = 0; attempt < 6 && caught < 2; ++attempt) {
        write_file(path, original);
        Background enable({program("msmon"), "config", "enable", path, "--collect-times", "3"}, tmp.path(),
                          {{"XDG_STATE_HOME", tmp / "state"}});
        const std::string fds = "/proc/" + std::to_string(enable.pid()) + "/fd";
        bool writing = false;
        for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
             !writing && std::chrono::steady_clock::now() < end;) {
            std::error_code ec;
            for (std::filesystem::directory_iterator it(fds, ec), last; !ec && it != last; it.increment(ec)) {
                const std::string target = std::filesystem::read_symlink(it->path(), ec).string();
                if (!ec && target.rfind(dir + "/", 0) == 0 && target != path) writing = true;
            }
            if (ec && !std::filesystem::exists(fds)) break;  // it finished before we saw it write
        }
        if (!writing) continue;
        enable.signal(SIGKILL);
        EXPECT_EQ(enable.wait(std::chrono::milliseconds(5000)), -SIGKILL);
        ++caught;
        std::vector<std::string> names;
        for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
        EXPECT_EQ(names, std::vector<std::string>{"config.json"}) << "attempt " << attempt;
        const std::string now = read_file(path);
        if (now != original) {
            EXPECT_EQ(json::parse(now)["dynamic_on"], true) << "a config neither old nor new";
        }
    }
    EXPECT_GE(caught, 1) << "msmon was never seen writing the new config (it finished before a kill could land)";
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
    for (const std::vector<std::string>& bad : {std::vector<std::string>{"eps=0"},
                                                {"ndigits=25"},
                                                {"alert.dump=7"},
                                                {"ops=\"norm\""},
                                                {"print_struct=true"}}) {
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
        // paces the input: the trainer's write lands 200 ms on, while msmon config reads the empty file again and
        // again (it gives up after 1 s)
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
