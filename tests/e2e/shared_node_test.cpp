// A shared training node (docs/reliability.md, "Threat model"): root runs msmon on a job folder that another user,
// the trainer, owns. Whatever the trainer plants there (links, a racing rename, a lock file, a settings file), msmon
// never changes a file the trainer could not change, and never trusts a file the trainer can write. Every test
// plays the trainer as a real second user (tests/support/second_user.hpp) and checks a root-only victim file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "core/config/guarded_save.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/second_user.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

constexpr const char* kConfig = "{\n  \"targets\": {},\n  \"dynamic_on\": false,\n  \"collect_times\": 3\n}\n";
constexpr const char* kSecret = "root's own file: msmon must never write here\n";

// The scene: a root-only victim file, and the trainer's job folder holding a regular config.
struct SharedNode {
    TempDir tmp;
    std::string victim, job, config;
    explicit SharedNode(const SecondUser& trainer) {
        ::chmod(tmp.path().c_str(), 0755);  // the trainer must reach the job folder
        fs::create_directories(tmp / "root-only");
        ::chmod((tmp / "root-only").c_str(), 0700);
        victim = tmp / "root-only/secret";
        write_file(victim, kSecret);
        ::chmod(victim.c_str(), 0600);
        job = tmp / "job";
        config = job + "/config.json";
        fs::create_directories(job);
        write_file(config, kConfig);
        give_to(trainer, job);
    }
    bool victim_untouched() const { return read_file(victim) == kSecret; }
};

bool is_link(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

// As the trainer: `link` becomes a symbolic link to `target`, atomically (a rename over whatever was there).
bool plant_link(const SecondUser& trainer, const std::string& target, const std::string& link) {
    return as_user(trainer, [&] {
        const std::string tmp = link + ".planting";
        ::unlink(tmp.c_str());
        return ::symlink(target.c_str(), tmp.c_str()) == 0 && ::rename(tmp.c_str(), link.c_str()) == 0;
    });
}

TEST(SharedNode, a_link_the_trainer_plants_as_the_config_is_refused_by_every_command_and_the_config_tab) {
    MSMON_SECOND_USER_OR_SKIP(trainer);
    SharedNode node(trainer);
    const auto env = isolated_env(node.tmp);
    ASSERT_TRUE(plant_link(trainer, node.victim, node.config));
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"enable", node.config, "--collect-times", "2"},
          {"show", node.config},
          {"set", node.config, "collect_times=9"}}) {
        std::vector<std::string> argv = {program("msmon"), "config"};
        argv.insert(argv.end(), args.begin(), args.end());
        const auto r = run(argv, env);
        EXPECT_EQ(r.exit_code, 1) << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find(node.config + " is a symbolic link (to " + node.victim + ")"), std::string::npos)
            << args[0] << ": " << r.err;
        EXPECT_NE(r.err.find("--follow-config-link"), std::string::npos) << r.err;
    }
    EXPECT_TRUE(node.victim_untouched());
    EXPECT_TRUE(is_link(node.config));

    // The Config tab reads through the same code and says why it shows nothing.
    ASSERT_EQ(run({program("msmon"), "simulate", node.tmp / "run", "--ranks", "1", "--steps", "3"}).exit_code, 0);
    const auto snap = run({program("msmon-tui"), node.tmp / "run", "--db", node.tmp / "store/s.db", "--config",
                           node.config, "--snapshot", "config", "--size", "200x30"},
                          env);
    EXPECT_EQ(snap.exit_code, 0) << snap.err;
    EXPECT_NE(snap.out.find("is a symbolic link"), std::string::npos) << snap.out;
    EXPECT_NE(snap.out.find("--follow-config-link"), std::string::npos) << "the way around it is on screen too";
    EXPECT_TRUE(node.victim_untouched());

    // ingest's --monitor-config reads it the same way.
    const auto ingest = run({program("msmon"), "ingest", node.tmp / "run", "--db", node.tmp / "store/s.db",
                             "--monitor-config", node.config},
                            env);
    EXPECT_EQ(ingest.exit_code, 1) << ingest.err;
    EXPECT_NE(ingest.err.find("is a symbolic link"), std::string::npos) << ingest.err;
}

// --follow-config-link: the user means the link. The write lands on the file it names (the trainer's real config),
// which keeps its owner; the link stays a link.
TEST(SharedNode, follow_config_link_writes_the_file_the_link_names_and_keeps_its_owner) {
    MSMON_SECOND_USER_OR_SKIP(trainer);
    SharedNode node(trainer);
    const std::string real = node.job + "/monitor_v2.json";
    ASSERT_TRUE(as_user(trainer, [&] { return ::rename(node.config.c_str(), real.c_str()) == 0; }));
    ASSERT_TRUE(plant_link(trainer, "monitor_v2.json", node.config));
    const auto refused = run({program("msmon"), "config", "enable", node.config, "--collect-times", "2"});
    EXPECT_EQ(refused.exit_code, 1) << refused.err;
    EXPECT_NE(refused.err.find("Give the file itself (" + real + ")"), std::string::npos) << refused.err;
    const auto r = run({program("msmon"), "config", "enable", node.config, "--collect-times", "2",
                        "--follow-config-link", "--settle-ms", "0"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(is_link(node.config));
    EXPECT_EQ(json::parse(read_file(real))["collect_times"], 2);
    struct stat st {};
    ASSERT_EQ(::stat(real.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, trainer.uid);
}

// The race of the attack: the trainer renames a link over config.json between msmon's read and its write, and at
// the last moment before its rename. Made deterministic by the save's test hooks, which do the swap as the trainer.
TEST(SharedNode, a_link_renamed_over_the_config_between_read_and_write_never_redirects_the_write) {
    MSMON_SECOND_USER_OR_SKIP(trainer);
    SharedNode node(trainer);
    SaveTiming timing;
    timing.quiet_ms = 0;
    timing.settle_ms = 50;
    int swaps = 0;
    timing.before_write = [&] { swaps += plant_link(trainer, node.victim, node.config); };
    const SaveReport after_read = guarded_save(node.config, {{{"dynamic_on"}, json(true)}}, nullptr, timing);
    EXPECT_EQ(swaps, 1);
    EXPECT_FALSE(after_read.in_effect);
    EXPECT_NE(after_read.error.find("became a symbolic link since msmon read it"), std::string::npos)
        << after_read.error;
    EXPECT_TRUE(after_read.writes.empty());
    EXPECT_TRUE(node.victim_untouched());
    EXPECT_TRUE(is_link(node.config)) << "nothing was written";

    // At the rename: the link is the name msmon replaces, with the config; the victim is never opened.
    ASSERT_TRUE(as_user(trainer, [&] { return ::unlink(node.config.c_str()) == 0; }));
    write_file(node.config, kConfig);
    give_to(trainer, node.config);
    timing.before_write = nullptr;
    timing.before_rename = [&] { swaps += plant_link(trainer, node.victim, node.config); };
    const SaveReport at_rename = guarded_save(node.config, {{{"dynamic_on"}, json(true)}}, nullptr, timing);
    EXPECT_EQ(swaps, 2);
    EXPECT_TRUE(node.victim_untouched());
    EXPECT_FALSE(is_link(node.config));
    EXPECT_EQ(json::parse(read_file(node.config))["dynamic_on"], true);
    struct stat st {};
    ASSERT_EQ(::lstat(node.config.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, trainer.uid) << "the replaced config keeps the owner the trainer's file had";
    EXPECT_TRUE(at_rename.in_effect) << at_rename.error;
}

TEST(SharedNode, another_users_link_on_the_way_to_the_config_is_refused_and_roots_own_link_is_followed) {
    MSMON_SECOND_USER_OR_SKIP(trainer);
    SharedNode node(trainer);
    fs::create_directories(node.tmp / "jobs");
    ::chmod((node.tmp / "jobs").c_str(), 0777);  // a shared folder of job links
    ASSERT_TRUE(plant_link(trainer, node.job, node.tmp / "jobs/J43"));
    const auto refused = run({program("msmon"), "config", "show", node.tmp / "jobs/J43/config.json"});
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find(node.tmp / "jobs/J43 is a symbolic link owned by msmon-trainer"), std::string::npos)
        << refused.err;
    fs::create_directory_symlink(node.job, node.tmp / "jobs/J44");  // root's own link
    const auto followed = run({program("msmon"), "config", "show", node.tmp / "jobs/J44/config.json"});
    EXPECT_EQ(followed.exit_code, 0) << followed.err;
}

// Root editing the trainer's config keeps its owner and mode, and the trainer can write it back afterwards (the
// write-back that ends a collection).
TEST(SharedNode, root_edits_the_trainers_config_keeping_owner_and_mode_and_the_trainer_writes_it_back) {
    MSMON_SECOND_USER_OR_SKIP(trainer);
    SharedNode node(trainer);
    ::chmod(node.config.c_str(), 0640);
    const auto r = run({program("msmon"), "config", "enable", node.config, "--collect-times", "4"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(::lstat(node.config.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, trainer.uid);
    EXPECT_EQ(st.st_gid, trainer.gid);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    EXPECT_EQ(json::parse(read_file(node.config))["collect_times"], 4);
    EXPECT_TRUE(as_user(trainer, [&] {
        const int fd = ::open(node.config.c_str(), O_WRONLY | O_TRUNC);
        const std::string back = "{\"targets\": {}, \"dynamic_on\": false, \"collect_times\": 4}\n";
        const bool ok = fd >= 0 && ::write(fd, back.data(), back.size()) == static_cast<ssize_t>(back.size());
        if (fd >= 0) ::close(fd);
        return ok;
    }));
    EXPECT_EQ(json::parse(read_file(node.config))["dynamic_on"], false);
}

// The store's companion files: a lock planted as a link in a folder the trainer can write, and in a default cache
// folder the trainer made first.
TEST(SharedNode, a_store_folder_the_trainer_can_write_is_refused_and_a_planted_lock_link_never_written_through) {
    MSMON_SECOND_USER_OR_SKIP(trainer);
    SharedNode node(trainer);
    ASSERT_EQ(run({program("msmon"), "simulate", node.tmp / "run", "--ranks", "1", "--steps", "3"}).exit_code, 0);
    auto env = isolated_env(node.tmp);
    const std::string project = node.tmp / "project";
    fs::create_directories(project);
    give_to(trainer, project);
    ::chmod(project.c_str(), 0775);
    ASSERT_TRUE(plant_link(trainer, node.victim, project + "/J43.db.lock"));
    const auto refused = run({program("msmon"), "ingest", node.tmp / "run", "--db", project + "/J43.db"}, env);
    EXPECT_EQ(refused.exit_code, 1);
    EXPECT_NE(refused.err.find("refusing the store " + project + "/J43.db: " + project + " is owned by msmon-trainer"),
              std::string::npos)
        << refused.err;
    EXPECT_NE(refused.err.find("--trust-db-folder"), std::string::npos) << refused.err;
    EXPECT_FALSE(fs::exists(project + "/J43.db"));
    // Trusting the folder does not make msmon write through a link.
    const auto trusted =
        run({program("msmon"), "ingest", node.tmp / "run", "--db", project + "/J43.db", "--trust-db-folder"}, env);
    EXPECT_EQ(trusted.exit_code, 1);
    EXPECT_NE(trusted.err.find(project + "/J43.db.lock is a symbolic link"), std::string::npos) << trusted.err;
    EXPECT_TRUE(node.victim_untouched());
    // Readers refuse the folder too (SQLite would create and write -shm there): the trainer's own store in it.
    write_file(project + "/theirs.db", "");
    give_to(trainer, project + "/theirs.db");
    const auto reader = run({program("msmon"), "query", "--db", project + "/theirs.db"}, env);
    EXPECT_EQ(reader.exit_code, 1);
    EXPECT_NE(reader.err.find("refusing the store"), std::string::npos) << reader.err;

    // The default store folder, made first by the trainer in a shared cache folder.
    const std::string probe_cache = node.tmp / "probe-cache";
    env["XDG_CACHE_HOME"] = probe_cache;
    ASSERT_EQ(run({program("msmon"), "ingest", node.tmp / "run"}, env).exit_code, 0);
    const auto stores = find_files(probe_cache + "/msmon", ".db");
    ASSERT_EQ(stores.size(), 1u);
    const std::string store_name = fs::path(stores[0]).filename().string();
    const std::string shared_cache = node.tmp / "shared-cache";
    fs::create_directories(shared_cache);
    ::chmod(shared_cache.c_str(), 01777);
    ASSERT_TRUE(as_user(trainer, [&] {
        const std::string dir = shared_cache + "/msmon";
        return ::mkdir(dir.c_str(), 0777) == 0 && ::chmod(dir.c_str(), 0777) == 0;
    }));
    ASSERT_TRUE(plant_link(trainer, node.victim, shared_cache + "/msmon/" + store_name + ".lock"));
    env["XDG_CACHE_HOME"] = shared_cache;
    const auto default_store = run({program("msmon"), "ingest", node.tmp / "run"}, env);
    EXPECT_EQ(default_store.exit_code, 1);
    EXPECT_NE(default_store.err.find(shared_cache + "/msmon is owned by msmon-trainer"), std::string::npos)
        << default_store.err;
    EXPECT_TRUE(node.victim_untouched());
}

// msmon's own settings can run a command (on_incident): a file the trainer can change, or a link to one, is refused
// with the reason, and `msmon settings` exits 1 saying so.
TEST(SharedNode, a_settings_file_someone_else_can_change_is_refused_and_its_command_never_applies) {
    MSMON_SECOND_USER_OR_SKIP(trainer);
    SharedNode node(trainer);
    const std::string home = node.tmp / "home";
    const std::string dir = home + "/.config/msmon";
    fs::create_directories(dir);
    const std::map<std::string, std::string> env = {
        {"HOME", home}, {"XDG_CONFIG_HOME", home + "/.config"}, {"XDG_STATE_HOME", node.tmp / "state"}};
    const std::string evil = "[on_incident]\ncommand = \"touch " + (node.tmp / "pwned") + "\"\n";
    const std::string settings = dir + "/config.toml";
    auto settings_run = [&] { return run({program("msmon"), "settings"}, env); };

    // A link to the trainer's file.
    const std::string theirs = node.job + "/evil.toml";
    write_file(theirs, evil);
    give_to(trainer, theirs);
    fs::create_symlink(theirs, settings);
    auto r = settings_run();
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("refused"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("msmon-trainer"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("on_incident.command = (none)"), std::string::npos) << r.out;

    // Root's own file, writable by everyone.
    fs::remove(settings);
    write_file(settings, evil);
    ::chmod(settings.c_str(), 0666);
    r = settings_run();
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find("is writable by everyone (mode 0666)"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("on_incident.command = (none)"), std::string::npos) << r.out;

    // Root's own file in a folder the trainer owns.
    ::chmod(settings.c_str(), 0644);
    ::chown(dir.c_str(), trainer.uid, trainer.gid);
    r = settings_run();
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_NE(r.err.find(dir + " is owned by msmon-trainer"), std::string::npos) << r.err;

    // The same file where only root can change it applies.
    ::chown(dir.c_str(), 0, 0);
    r = settings_run();
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("on_incident.command = touch"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(node.tmp / "pwned"));
}

// A settings file that is a FIFO, or a link to /dev/zero: refused at once for what it is, through the one way msmon
// opens an input (never blocking, regular files only); the defaults apply. Needs no second user.
TEST(SharedNode, a_settings_file_that_is_a_fifo_or_a_device_is_refused_at_once_by_what_it_is) {
    TempDir tmp;
    const std::string dir = tmp / "home/.config/msmon";
    fs::create_directories(dir);
    const std::map<std::string, std::string> env = {
        {"HOME", tmp / "home"}, {"XDG_CONFIG_HOME", tmp / "home/.config"}, {"XDG_STATE_HOME", tmp / "state"}};
    ASSERT_EQ(::mkfifo((dir + "/config.toml").c_str(), 0600), 0);
    auto r = run({program("msmon"), "settings"}, env);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("refused: it is a FIFO, not a regular file"), std::string::npos) << r.err;
    EXPECT_NE(r.out.find("on_incident.command = (none)"), std::string::npos) << r.out;
    fs::remove(dir + "/config.toml");
    fs::create_symlink("/dev/zero", dir + "/config.toml");
    r = run({program("msmon"), "settings"}, env);
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("refused: its target /dev/zero"), std::string::npos) << r.err;
}

// One store, two names (a link to it): one writer. The lock is on the store's real path.
TEST(SharedNode, two_names_of_one_store_are_one_writer_and_readers_probe_the_same_lock) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    ASSERT_EQ(run({program("msmon"), "simulate", tmp / "run", "--ranks", "1", "--steps", "3"}).exit_code, 0);
    fs::create_directories(tmp / "s");
    const std::string db = tmp / "s/two.db", alias = tmp / "s/alias.db";
    Background follow({program("msmon"), "ingest", tmp / "run", "--follow", "--db", db}, tmp.path(), env);
    ASSERT_GE(wait_until([&] { return fs::exists(db + "-wal"); }, std::chrono::seconds(20)).count(), 0);
    fs::create_symlink("two.db", alias);
    const auto second = run({program("msmon"), "ingest", tmp / "run", "--db", alias}, env);
    EXPECT_EQ(second.exit_code, 1);
    EXPECT_NE(second.err.find("another msmon (pid " + std::to_string(follow.pid()) + ") is ingesting into " + alias +
                              " (" + db + ")"),
              std::string::npos)
        << second.err;
    EXPECT_FALSE(fs::exists(alias + ".lock"));
    // A reader through the other name reads the store (once the follower's first rows are committed: the WAL file
    // exists before them, and under a sanitizer's pace the first commit can come later).
    CommandResult through_alias;
    wait_until(
        [&] {
            through_alias = run({program("msmon"), "query", "--db", alias, "--steps", "0"}, env);
            return through_alias.exit_code != 0 || through_alias.out.find("grad") != std::string::npos;
        },
        std::chrono::seconds(20));
    EXPECT_EQ(through_alias.exit_code, 0) << through_alias.err;
    EXPECT_NE(through_alias.out.find("grad"), std::string::npos) << through_alias.out << through_alias.err;
    follow.signal(SIGTERM);
    EXPECT_EQ(follow.wait(std::chrono::seconds(10)), 0);
}

TEST(SharedNode, msmon_docs_replaces_a_planted_link_instead_of_writing_through_it) {
    MSMON_SECOND_USER_OR_SKIP(trainer);
    SharedNode node(trainer);
    const std::string docs = node.job + "/docs";
    ASSERT_TRUE(as_user(trainer, [&] { return ::mkdir(docs.c_str(), 0755) == 0; }));
    ASSERT_TRUE(plant_link(trainer, node.victim, docs + "/msmon.1"));
    const auto r = run({program("msmon"), "docs", docs});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(node.victim_untouched());
    EXPECT_FALSE(is_link(docs + "/msmon.1"));
    EXPECT_NE(read_file(docs + "/msmon.1").find(".TH"), std::string::npos);
}

// What a writer that cannot lock says: never "another msmon is ingesting" when none is.
TEST(SharedNode, a_store_msmon_cannot_lock_or_that_names_a_folder_is_said_as_it_is_and_leaves_nothing) {
    MSMON_SECOND_USER_OR_SKIP(trainer);
    SharedNode node(trainer);
    ASSERT_EQ(run({program("msmon"), "simulate", node.tmp / "run", "--ranks", "1", "--steps", "3"}).exit_code, 0);
    give_to(trainer, node.tmp / "run");
    const auto env = isolated_env(node.tmp);
    fs::create_directories(node.tmp / "folder.db");
    const auto folder = run({program("msmon"), "ingest", node.tmp / "run", "--db", node.tmp / "folder.db"}, env);
    EXPECT_EQ(folder.exit_code, 1);
    EXPECT_NE(folder.err.find("is a folder; --db names the store's file"), std::string::npos) << folder.err;
    EXPECT_FALSE(fs::exists(node.tmp / "folder.db.lock"));

    // A read-only filesystem.
    const std::string ro = node.tmp / "ro";
    fs::create_directories(ro);
    if (::mount("tmpfs", ro.c_str(), "tmpfs", MS_RDONLY, "size=1m,mode=0755") != 0)
        MSMON_SKIP_UNLESS_REQUIRED(std::string("cannot mount a read-only tmpfs: ") + std::strerror(errno));
    const auto read_only = run({program("msmon"), "ingest", node.tmp / "run", "--db", ro + "/s.db"}, env);
    ::umount2(ro.c_str(), MNT_DETACH);
    EXPECT_EQ(read_only.exit_code, 1);
    EXPECT_NE(
        read_only.err.find("cannot open or create the store's lock file " + ro + "/s.db.lock: Read-only file system"),
        std::string::npos)
        << read_only.err;
    EXPECT_EQ(read_only.err.find("is ingesting"), std::string::npos) << read_only.err;

    // The trainer writing a store into root's folder (0755): it cannot create the lock there.
    fs::create_directories(node.tmp / "roots");
    const std::string argv_db = node.tmp / "roots/s.db";
    EXPECT_TRUE(as_user(trainer, [&] {
        const auto r = run({"/usr/bin/env", "HOME=" + node.job, "XDG_STATE_HOME=" + node.job + "/state",
                            program("msmon"), "ingest", node.tmp / "run", "--db", argv_db});
        return r.exit_code == 1 && r.err.find("cannot open or create the store's lock file") != std::string::npos &&
               r.err.find("Permission denied") != std::string::npos && r.err.find("is ingesting") == std::string::npos;
    }));
}

}  // namespace
}  // namespace msmon::test
