// A monitored tree that points elsewhere: symbolic links out of the job folder (to /etc/passwd, to another user's
// files) are not followed; links that stay inside it, and a job folder that is itself a link, are.
#include <gtest/gtest.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

const char* kHeader = "vpp_stage,name,step,norm,shape,dtype\n";

std::string rows(const std::string& name, int steps) {
    std::string out = kHeader;
    for (int s = 0; s < steps; ++s) out += "0," + name + "," + std::to_string(s) + ",1.5,[4],torch.float32\n";
    return out;
}

TEST(HostileTree, links_out_of_the_job_folder_are_skipped_with_a_notice_and_links_inside_are_read) {
    TempDir tmp;
    // Outside the job: a secret (passwd-like lines, which would be parse issues quoting them) and a whole run.
    const std::string secret = tmp / "secret/passwd";
    std::filesystem::create_directories(tmp / "secret/run");
    write_file(secret, "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n");
    write_file(tmp / "secret/run/grad_reduced_0-1.csv", rows("outside.weight", 2));
    // The real job folder, reached through a link (a symlinked root is fine).
    const std::string real = tmp / "real-job/monitor_output";
    const std::string rank0 = real + "/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    write_file(rank0 + "/grad_reduced_0-1.csv", rows("inside.weight", 2));
    std::filesystem::create_symlink(secret, rank0 + "/grad_unreduced_0-1.csv");  // a file out of the tree
    std::filesystem::create_symlink(tmp / "secret/run", real + "/Nov22_10-00-01-rank1-0000abce");       // a folder out
    std::filesystem::create_symlink(rank0 + "/grad_reduced_0-1.csv", rank0 + "/param_origin_0-1.csv");  // inside
    std::filesystem::create_symlink(tmp / "real-job", tmp / "job");

    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    std::string error;
    const auto names = sqlite_rows(db, "SELECT DISTINCT kind || ' ' || name FROM tensor ORDER BY 1", error);
    ASSERT_TRUE(error.empty()) << error;
    std::vector<std::string> got;
    for (const auto& r : names) got.push_back(r.at(0));
    EXPECT_EQ(got, (std::vector<std::string>{"grad_reduced inside.weight", "param_origin inside.weight"}));
    const auto issues = sqlite_rows(db, "SELECT count(*) FROM parse_issue", error);
    EXPECT_EQ(issues.at(0).at(0), "0");
    const std::string log = read_file(log_path(tmp));
    EXPECT_EQ(log.find("root:x:0"), std::string::npos) << log;
    EXPECT_NE(log.find("grad_unreduced_0-1.csv': a symbolic link to '" + secret + "', outside the monitored folder"),
              std::string::npos)
        << log;
    EXPECT_NE(log.find("rank1-0000abce': a symbolic link to"), std::string::npos) << log;
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// The gauges file for node_exporter goes to a folder other users can write (the textfile collector's). A link
// planted under the temp name msmon used (it ran as root in the agent unit) made it overwrite any file.
TEST(HostileTree, a_link_planted_in_the_prom_textfile_folder_is_never_written_through) {
    TempDir tmp;
    const std::string rank0 = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    write_file(rank0 + "/grad_reduced_0-1.csv", rows("w", 2));
    std::filesystem::create_directories(tmp / "prom");
    write_file(tmp / "victim", "precious\n");
    for (const char* planted : {".msmon.prom.tmp", ".msmon.prom.XXXXXX"})
        std::filesystem::create_symlink(tmp / "victim", tmp / ("prom/" + std::string(planted)));
    auto env = isolated_env(tmp);
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", tmp / "store.db", "--prom-textfile",
                       tmp / "prom", "--job", "j1", "--node", "n1"},
                      env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    EXPECT_EQ(read_file(tmp / "victim"), "precious\n");
    EXPECT_NE(read_file(tmp / "prom/msmon.prom").find("msmon_"), std::string::npos);
    EXPECT_EQ(std::filesystem::status(tmp / "prom/msmon.prom").permissions() & std::filesystem::perms::others_read,
              std::filesystem::perms::others_read);
    // Nothing left behind but what was planted.
    std::vector<std::string> left;
    for (const auto& e : std::filesystem::directory_iterator(tmp / "prom")) left.push_back(e.path().filename());
    std::sort(left.begin(), left.end());
    EXPECT_EQ(left, (std::vector<std::string>{".msmon.prom.XXXXXX", ".msmon.prom.tmp", "msmon.prom"}));
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// A systemd system service has neither HOME nor XDG_*: msmon's log and store went under /tmp/.local and /tmp/.cache,
// where another user could plant a link. They go under the passwd entry's home instead (never a shared folder).
TEST(HostileTree, without_home_or_xdg_the_log_goes_to_the_passwd_home_never_to_tmp) {
    TempDir tmp;
    const std::string rank0 = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    write_file(rank0 + "/grad_reduced_0-1.csv", rows("w", 2));
    const std::string passwd_home = [] {
        const passwd* pw = ::getpwuid(::geteuid());
        return pw && pw->pw_dir ? std::string(pw->pw_dir) : std::string();
    }();
    if (passwd_home.empty() || ::access(passwd_home.c_str(), W_OK) != 0)
        MSMON_SKIP_UNLESS_REQUIRED("this user's passwd home is not writable here");
    const std::string log = passwd_home + "/.local/state/msmon/msmon.log";
    const auto before = std::filesystem::exists(log) ? std::filesystem::file_size(log) : 0;
    const bool tmp_local = std::filesystem::exists("/tmp/.local/state/msmon"),
               tmp_cache = std::filesystem::exists("/tmp/.cache/msmon");
    const std::string marker = tmp.path();  // the job's folder is named in the log's first line
    auto r = run({"/usr/bin/env", "-u", "HOME", "-u", "XDG_STATE_HOME", "-u", "XDG_CACHE_HOME", program("msmon"),
                  "ingest", tmp / "job", "--db", tmp / "store.db"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_TRUE(std::filesystem::exists(log));
    EXPECT_GT(std::filesystem::file_size(log), before);
    const std::string text = read_file(log);
    EXPECT_NE(text.find(marker, before), std::string::npos);
    EXPECT_EQ(std::filesystem::exists("/tmp/.local/state/msmon"), tmp_local);
    EXPECT_EQ(std::filesystem::exists("/tmp/.cache/msmon"), tmp_cache);
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// A 30 kB parameter name: `--name '.*weight'` crashed msmon query (std::regex recursion, SIGSEGV) and `/.*weight`
// killed the TUI. Patterns run on RE2 now: linear, no recursion.
TEST(HostileTree, a_pattern_over_a_30_kb_name_neither_crashes_the_cli_nor_the_tui) {
    TempDir tmp;
    const std::string rank0 = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    const std::string huge = "layers." + std::string(30000, 'a') + ".weight";
    write_file(rank0 + "/grad_reduced_0-1.csv", rows(huge, 2) + "0,small.weight,0,2.5,[4],torch.float32\n");
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "ingest", tmp / "job", "--db", db}, env).exit_code, 0);
    auto q = run({program("msmon"), "query", "--db", db, "--name", ".*weight", "--op", "norm"}, env);
    ASSERT_EQ(q.exit_code, 0) << q.err;
    EXPECT_NE(q.out.find(huge + ",0,,norm,1.5"), std::string::npos);
    EXPECT_NE(q.out.find("small.weight,0,,norm,2.5"), std::string::npos);
    auto bad = run({program("msmon"), "query", "--db", db, "--name", "(unclosed"}, env);
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("--name: not a valid pattern"), std::string::npos) << bad.err;
    // The TUI: the filter typed on the chart, then on the anomalies table.
    auto snap = run({program("msmon-tui"), "--db", db, "--snapshot", "chart", "--size", "120x30"}, env);
    ASSERT_EQ(snap.exit_code, 0) << snap.err;
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TmuxSession t(program("msmon-tui") + " --db " + db, 120, 30,
                  {{"LANG", "C.UTF-8"},
                   {"LC_ALL", "C.UTF-8"},
                   {"TERM", "xterm-256color"},
                   {"XDG_STATE_HOME", tmp / "xdg-state"}});
    ASSERT_FALSE(t.wait_for("Overview", std::chrono::milliseconds(8000)).empty()) << t.capture();
    for (const char* tab : {"2", "3"}) {
        t.send_keys(tab, true);
        t.send_keys("/", true);
        t.send_keys(".*weight", true);
        t.send_keys("Enter");
        ASSERT_TRUE(t.settle()) << t.last_wait_error();  // the filter applied before the next tab
    }
    t.send_keys("2", true);
    ASSERT_FALSE(t.wait_for("/.*weight/", std::chrono::milliseconds(3000)).empty()) << t.capture();
    EXPECT_TRUE(t.alive()) << "msmon-tui died";
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// Following with inotify, the job folder removed and made again (a relaunch script's rm -rf; mkdir): what is
// written in the new folder is read (nothing more ever was: inotify's watches died with the old folder).
TEST(HostileTree, a_job_folder_removed_and_made_again_while_followed_is_read_again) {
    TempDir tmp;
    const std::string job = tmp / "job";
    const std::string rank0 = job + "/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    write_file(rank0 + "/grad_reduced_0-1.csv", rows("before.weight", 2));
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    Background follow({program("msmon"), "ingest", job, "--follow", "--db", db}, tmp.path(), env);
    auto has = [&](const std::string& name) {
        std::string error;
        const auto r = sqlite_rows(db, "SELECT count(*) FROM tensor WHERE name = '" + name + "'", error);
        return error.empty() && !r.empty() && r[0][0] != "0";
    };
    ASSERT_GE(wait_until([&] { return has("before.weight"); }, std::chrono::milliseconds(10000)).count(), 0);
    std::filesystem::remove_all(job);
    // The follower saw the folder go before it comes back (a relaunch script's rm -rf, then mkdir).
    ASSERT_GE(wait_until([&] { return follow.err().find("was removed") != std::string::npos; },
                         std::chrono::milliseconds(10000))
                  .count(),
              0)
        << follow.err();
    const std::string again = job + "/monitor_output/Nov22_11-00-00-rank0-0000abce";
    std::filesystem::create_directories(again);
    write_file(again + "/grad_reduced_0-1.csv", rows("after.weight", 2));
    EXPECT_GE(wait_until([&] { return has("after.weight"); }, std::chrono::milliseconds(10000)).count(), 0)
        << "nothing of the new job folder was read; msmon's stderr: " << follow.err();
    EXPECT_TRUE(has("before.weight"));  // what was stored stays
    follow.signal(SIGTERM);
    EXPECT_EQ(follow.wait(std::chrono::milliseconds(5000)), 0);
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// The TUI's status counts the malformed lines the store holds, not only those this session read: opened on a
// job ingested before, it said "0 malformed" while the store held 2 (and the log named them).
TEST(HostileTree, the_tui_counts_the_malformed_lines_the_store_holds_from_earlier_sessions) {
    TempDir tmp;
    const std::string rank0 = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    write_file(rank0 + "/grad_reduced_0-1.csv", rows("w", 2) + "0,w,not-a-step,1.5,[4],torch.float32\nragged\n");
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    ASSERT_NE(ingest.out.find("2 malformed lines"), std::string::npos) << ingest.out;
    for (const std::vector<std::string>& where :
         {std::vector<std::string>{tmp / "job", "--db", db}, std::vector<std::string>{"--db", db}}) {
        std::vector<std::string> argv = {program("msmon-tui")};
        argv.insert(argv.end(), where.begin(), where.end());
        for (const char* a : {"--snapshot", "overview", "--size", "140x30"}) argv.push_back(a);
        auto snap = run(argv, env);
        ASSERT_EQ(snap.exit_code, 0) << snap.err;
        EXPECT_NE(snap.out.find("| 2 malformed |"), std::string::npos) << snap.out;
    }
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// `norm,norm` in a header: the last column used to win silently. The file's rows are malformed now, with the reason.
TEST(HostileTree, rows_under_a_header_naming_a_column_twice_are_malformed_not_guessed) {
    TempDir tmp;
    const std::string rank0 = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    write_file(rank0 + "/grad_reduced_0-1.csv", "vpp_stage,name,step,norm,norm\n0,w,0,1.5,99\n0,w,1,2.5,98\n");
    write_file(rank0 + "/param_origin_0-1.csv", rows("w", 2));
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    EXPECT_NE(ingest.out.find("3 malformed lines"), std::string::npos) << ingest.out;  // the header and its 2 rows
    std::string error;
    EXPECT_EQ(sqlite_rows(db, "SELECT group_concat(DISTINCT kind) FROM tensor", error).at(0).at(0), "param_origin");
    EXPECT_NE(read_file(log_path(tmp)).find("column 'norm' appears twice in the header"), std::string::npos);
}

// A header again mid-file with the columns in another order (norm,max,min appended under min,max,norm): the row
// under it was stored with min and norm swapped, and the header was logged only as "step is not an integer". The
// lines after a header are read by it; the header is no malformed line; the same when the second header comes in
// a later read of the followed file, and when the ingest resumes after it.
TEST(HostileTree, a_header_again_mid_file_re_maps_the_columns_of_the_lines_after_it) {
    TempDir tmp;
    const std::string rank0 = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    const std::string file = rank0 + "/grad_reduced_0-3.csv";
    write_file(file, "vpp_stage,name,step,min,max,norm\n0,w,0,-1.5,2.5,7.5\n0,w,1,-1.25,2.25,7.25\n");
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    append_file(file, "vpp_stage,name,step,norm,max,min\n0,w,2,9.5,3.5,-3.5\n");
    ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    EXPECT_NE(ingest.out.find(" 0 malformed lines"), std::string::npos)
        << "the header is no malformed line: " << ingest.out;
    append_file(file, "0,w,3,9.75,3.75,-3.75\n");  // read after a resume: by the header before it
    ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    std::string error;
    std::map<std::string, std::string> got;
    for (const auto& r : query_rows(db, {"--kind", "grad_reduced"}, env, error)) got[r.step + " " + r.op] = r.value;
    ASSERT_EQ(error, "");
    EXPECT_EQ(got, (std::map<std::string, std::string>{{"0 min", "-1.5"},
                                                       {"0 max", "2.5"},
                                                       {"0 norm", "7.5"},
                                                       {"1 min", "-1.25"},
                                                       {"1 max", "2.25"},
                                                       {"1 norm", "7.25"},
                                                       {"2 min", "-3.5"},
                                                       {"2 max", "3.5"},
                                                       {"2 norm", "9.5"},
                                                       {"3 min", "-3.75"},
                                                       {"3 max", "3.75"},
                                                       {"3 norm", "9.75"}}));
    EXPECT_EQ(sqlite_rows(db, "SELECT count(*) FROM parse_issue", error).at(0).at(0), "0");
    EXPECT_NE(read_file(log_path(tmp)).find("line 4: a header again; the lines after it are read by its columns"),
              std::string::npos);
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// Steps at the ends of int64 (a file may carry any): the Overview's window and the chart's zoom, pan and cursor
// overflowed (undefined behaviour; UBSan, which CI runs the suite under, aborts on it). Every key is pressed.
TEST(HostileTree, steps_at_the_ends_of_int64_survive_every_chart_key) {
    TempDir tmp;
    const std::string rank0 = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    std::string csv = kHeader;
    for (const char* step :
         {"-9223372036854775808", "-9223372036854775807", "-5", "0", "7", "9223372036854775806", "9223372036854775807"})
        csv += std::string("0,w,") + step + ",1.5,[4],torch.float32\n";
    write_file(rank0 + "/grad_reduced_0-1.csv", csv);
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    ASSERT_NE(ingest.out.find("0 malformed"), std::string::npos) << ingest.out;
    for (const char* view : {"overview", "chart"}) {
        auto snap = run({program("msmon-tui"), "--db", db, "--snapshot", view, "--size", "120x30"}, env);
        ASSERT_EQ(snap.exit_code, 0) << view << ": " << snap.err;
    }
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TmuxSession t(program("msmon-tui") + " --db " + db, 120, 30,
                  {{"LANG", "C.UTF-8"},
                   {"LC_ALL", "C.UTF-8"},
                   {"TERM", "xterm-256color"},
                   {"XDG_STATE_HOME", tmp / "xdg-state"}});
    ASSERT_FALSE(t.wait_for("Overview", std::chrono::milliseconds(8000)).empty()) << t.capture();
    t.send_keys("2", true);
    for (const char* key :
         {"+", "+", "+", "h", "h", "l", ",", ",", ".", ".", "-", "-", "-", "-", "0", "l", "h", "+", ".", "."})
        t.send_keys(key, true);
    const std::string screen = t.settled();  // every key handled and drawn
    EXPECT_TRUE(t.alive()) << "msmon-tui died";
    EXPECT_NE(screen.find("grad_reduced"), std::string::npos) << screen;
    t.send_keys("q", true);
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// A file of garbage (24 MB of malformed lines took 748 MB and its log lines rotated every earlier
// log away). Every malformed line is counted, across sessions too; the first 100 of a file are stored with their
// excerpt and logged, the rest only counted; the TUI's count is every one of them; good rows around them are read.
TEST(HostileTree, a_file_of_malformed_lines_is_counted_whole_but_stored_and_logged_up_to_a_cap) {
    TempDir tmp;
    const std::string rank0 = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    std::string garbage;
    for (int i = 0; i < 20000; ++i) garbage += "0,w,not-a-step-" + std::to_string(i) + ",1.5,[4],torch.float32\n";
    const std::string big = rank0 + "/grad_reduced_0-1.csv";
    write_file(big, std::string(kHeader) + "0,w,0,1.5,[4],torch.float32\n" + garbage + "0,w,1,2.5,[4],torch.float32\n");
    write_file(rank0 + "/param_origin_0-1.csv", rows("w", 2) + "ragged\nragged\nragged\n");
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    auto ingest = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
    EXPECT_NE(ingest.out.find("20003 malformed lines"), std::string::npos) << ingest.out;
    std::string error;
    auto per_file = [&] {
        return sqlite_rows(db,
                           "SELECT f.path, f.issues, (SELECT count(*) FROM parse_issue p WHERE p.file_id = f.id) FROM "
                           "file f WHERE f.issues > 0 ORDER BY f.path",
                           error);
    };
    EXPECT_EQ(per_file(), (std::vector<std::vector<std::string>>{{big, "20000", "100"},
                                                                 {rank0 + "/param_origin_0-1.csv", "3", "3"}}))
        << error;
    const std::string log = read_file(log_path(tmp));
    std::size_t logged = 0;
    for (std::size_t at = log.find("not-a-step-"); at != std::string::npos; at = log.find("not-a-step-", at + 1))
        ++logged;
    EXPECT_EQ(logged, 100u) << "malformed lines quoted in msmon.log";
    EXPECT_NE(log.find("100 malformed lines; more in this file are counted, not stored or logged"), std::string::npos);
    EXPECT_LT(log.size(), 64u * 1024) << "the log grows with the cap, not with the file";
    auto values = query_rows(db, {"--kind", "grad_reduced", "--op", "norm"}, env, error);
    ASSERT_EQ(values.size(), 2u) << error;
    EXPECT_EQ(values[1].value, "2.5") << "the good row after the garbage is read";

    // A later session: 50 more malformed lines in the same file are counted against the same cap.
    append_file(big, garbage.substr(0, garbage.find("0,w,not-a-step-50,")));
    auto again = run({program("msmon"), "ingest", tmp / "job", "--db", db}, env);
    ASSERT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.out.find("50 malformed lines"), std::string::npos) << again.out;
    EXPECT_EQ(per_file().at(0), (std::vector<std::string>{big, "20050", "100"})) << error;
    auto snap = run({program("msmon-tui"), "--db", db, "--snapshot", "overview", "--size", "140x30"}, env);
    ASSERT_EQ(snap.exit_code, 0) << snap.err;
    EXPECT_NE(snap.out.find("| 20053 malformed |"), std::string::npos) << snap.out;
}

}  // namespace
}  // namespace msmon::test

namespace msmon::test {
namespace {

// A FIFO planted among the CSVs under a CSV's name: opened as every input is (never blocking, regular files only),
// it is named once and skipped; every file beside it is read, and a later ingest (a FIFO still there) adds nothing.
TEST(HostileTree, a_fifo_among_the_csvs_is_named_and_skipped_and_the_files_beside_it_are_read) {
    TempDir tmp;
    const std::string rank0 = tmp / "job/monitor_output/Nov22_10-00-00-rank0-0000abcd";
    std::filesystem::create_directories(rank0);
    write_file(rank0 + "/grad_reduced_0-2.csv", rows("w", 3));
    ASSERT_EQ(::mkfifo((rank0 + "/grad_reduced_3-3.csv").c_str(), 0644), 0);
    write_file(rank0 + "/grad_reduced_4-4.csv", kHeader + std::string("0,w,4,2.5,[4],torch.float32\n"));
    const auto env = isolated_env(tmp);
    const std::string db = tmp / "store.db";
    Background ingest({program("msmon"), "ingest", tmp / "job", "--db", db, "--json"}, tmp.path(), env);
    ASSERT_EQ(ingest.wait(std::chrono::seconds(30)), 0) << "the ingest waited on the FIFO: " << ingest.err();
    EXPECT_EQ(json_count(ingest.out(), "rows"), 4) << ingest.out();
    EXPECT_EQ(json_count(ingest.out(), "errors"), 0) << ingest.out();
    EXPECT_NE(ingest.err().find("cannot read '" + rank0 + "/grad_reduced_3-3.csv': is a FIFO, not a regular file"),
              std::string::npos)
        << ingest.err();
    std::string error;
    const auto values = query_rows(db, {"--kind", "grad_reduced"}, env, error);
    ASSERT_EQ(error, "");
    std::set<std::string> steps;
    for (const auto& v : values) steps.insert(v.step);
    EXPECT_EQ(steps, (std::set<std::string>{"0", "1", "2", "4"}));
}

}  // namespace
}  // namespace msmon::test
