// Crash consistency: SIGKILL `msmon ingest --follow` (160+ times) and `msmon-tui` (64+ times, in a terminal) at
// random moments while a simulated run is being written. After every kill the store passes PRAGMA
// integrity_check and has lost no committed row; after the last restart it equals a clean ingest of the same
// files, value for value (msmon query) and row for row in every table (ids resolved to what they name).
#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>

#include "store/sample_chunks.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/tmux_session.hpp"

namespace msmon::test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

double seconds(Clock::duration d) {
    return std::chrono::duration<double>(d).count();
}

std::vector<std::string> sorted_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    std::sort(lines.begin(), lines.end());
    return lines;
}

// What a reader finds right after a kill: PRAGMA integrity_check's answer and how many sample rows are stored.
struct StoreState {
    bool exists = false;
    std::string integrity;
    long long rows = 0;
};

StoreState inspect(const std::string& db) {
    StoreState s;
    if (!std::filesystem::exists(db)) return s;
    s.exists = true;
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        s.integrity = std::string("cannot open: ") + (h ? sqlite3_errmsg(h) : "?");
        sqlite3_close(h);
        return s;
    }
    sqlite3_stmt* st = nullptr;
    s.integrity = "no answer";
    if (sqlite3_prepare_v2(h, "PRAGMA integrity_check", -1, &st, nullptr) == SQLITE_OK) {
        std::string all;
        while (sqlite3_step(st) == SQLITE_ROW)
            all += (all.empty() ? "" : "; ") + std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
        if (!all.empty()) s.integrity = all;
    } else {
        s.integrity = std::string("cannot check: ") + sqlite3_errmsg(h);
    }
    sqlite3_finalize(st);
    // A store killed before its schema was committed has no sample_chunk table yet: 0 rows.
    if (sqlite3_prepare_v2(h, "SELECT coalesce(sum(n), 0) FROM sample_chunk", -1, &st, nullptr) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        s.rows = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return s;
}

// The rows the store holds, without the integrity check: cheap enough to look at while ingest writes.
long long committed_rows(const std::string& db) {
    sqlite3* h = nullptr;
    long long rows = 0;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(h, "SELECT coalesce(sum(n), 0) FROM sample_chunk", -1, &st, nullptr) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW)
            rows = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return rows;
}

// Every stored sample, one line per (tensor, step). Chunks are compared decoded: two stores chunk the same rows
// differently when their commits fell elsewhere (store/sample_chunks.hpp).
void dump_samples(sqlite3* h, std::vector<std::string>& out, std::string& error) {
    std::map<std::int64_t, std::string> layouts, texts;
    auto load = [&](const char* sql, std::map<std::int64_t, std::string>& into) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(h, sql, -1, &st, nullptr) != SQLITE_OK) {
            error = std::string("cannot prepare '") + sql + "': " + sqlite3_errmsg(h);
            return;
        }
        while (sqlite3_step(st) == SQLITE_ROW)
            into[sqlite3_column_int64(st, 0)] = reinterpret_cast<const char*>(sqlite3_column_text(st, 1));
        sqlite3_finalize(st);
    };
    load("SELECT id, ops FROM layout", layouts);
    load("SELECT id, text FROM text_value", texts);
    const char* sql =
        "SELECT s.tensor_id, s.data, r.path, t.kind, t.vpp_stage, t.name, coalesce(t.micro_step, 'NULL') FROM "
        "sample_chunk s LEFT JOIN tensor t ON t.id = s.tensor_id LEFT JOIN run r ON r.id = t.run_id";
    sqlite3_stmt* st = nullptr;
    if (!error.empty() || sqlite3_prepare_v2(h, sql, -1, &st, nullptr) != SQLITE_OK) {
        if (error.empty()) error = std::string("cannot prepare '") + sql + "': " + sqlite3_errmsg(h);
        return;
    }
    auto text = [&](int col) { return std::string(reinterpret_cast<const char*>(sqlite3_column_text(st, col))); };
    auto id_text = [](const std::map<std::int64_t, std::string>& m, std::int64_t id) {
        const auto it = m.find(id);
        return it == m.end() ? std::string("NULL") : "'" + it->second + "'";
    };
    std::vector<msmon::SampleRow> rows;
    while (sqlite3_step(st) == SQLITE_ROW) {
        rows.clear();
        msmon::decode_chunk(sqlite3_column_blob(st, 1), static_cast<std::size_t>(sqlite3_column_bytes(st, 1)),
                            sqlite3_column_int64(st, 0), rows);
        const std::string tensor = text(2) + "\t" + text(3) + "\t" + text(4) + "\t" + text(5) + "\t" + text(6);
        for (const auto& r : rows) {
            std::string line = "sample\t" + tensor + "\t" + std::to_string(r.step) + "\t" +
                               id_text(layouts, r.layout_id) + "\t" + id_text(texts, r.shape_id) + "\t" +
                               id_text(texts, r.dtype_id);
            for (int k = 0; k < msmon::kMaxNumericOps; ++k) {
                char buf[64];
                std::snprintf(buf, sizeof buf, "\t%.17g", r.values[k]);
                line += buf;
            }
            out.push_back(std::move(line));
        }
    }
    sqlite3_finalize(st);
}

// Every row of every table, with ids (run, tensor, file, layout, text) replaced by what they stand for, since two
// stores number them in the order they met them. Reals in 17 significant digits, blobs in hex: exact.
// StalledRank anomalies are left out: they judge live arrival times (wall clock), so no two runs agree.
std::vector<std::string> dump_store(const std::string& db, std::string& error) {
    static const char* const kTables[] = {
        "SELECT 'run', path, rank, time_label, uid, format FROM run",
        "SELECT 'layout', ops FROM layout",
        "SELECT 'text', text FROM text_value",
        "SELECT 'tensor', r.path, t.kind, t.vpp_stage, t.name, t.micro_step, l.ops FROM tensor t "
        "LEFT JOIN run r ON r.id = t.run_id LEFT JOIN layout l ON l.id = t.layout_id",
        "SELECT 'file', f.path, r.path, f.kind, f.dev, f.ino, f.fp_len, f.fp_hash, f.offset, f.line, f.header, "
        "f.context FROM file f LEFT JOIN run r ON r.id = f.run_id",
        "SELECT 'parse_issue', f.path, p.line, p.reason, p.excerpt FROM parse_issue p LEFT JOIN file f ON f.id = "
        "p.file_id",
        "SELECT 'stack_info', r.path, s.module, s.stack FROM stack_info s LEFT JOIN run r ON r.id = s.run_id",
        "SELECT 'event', r.path, e.rank, e.step, e.kind, e.time, e.message FROM event e LEFT JOIN run r ON r.id = "
        "e.run_id",
        "SELECT 'anomaly', source, rule, rank, step, micro_step, kind, vpp_stage, name, op, value, reference, message, "
        "tag_name, dump_key, call_id, pp_stage, vpp, group_mates, score FROM anomaly WHERE rule <> 'StalledRank'",
        "SELECT 'checkpoint', source_path, position, name, rank, epoch, step, times, healthy FROM checkpoint",
        "SELECT 'module_struct', rank, module, json FROM module_struct",
        "SELECT 'detector_state', r.path, t.kind, t.vpp_stage, t.name, t.micro_step, d.last_step, d.state "
        "FROM detector_state d LEFT JOIN tensor t ON t.id = d.tensor_id LEFT JOIN run r ON r.id = t.run_id",
        "SELECT 'whole_file', path, size, mtime_ns, hash FROM whole_file",
        "SELECT 'setting', key, value FROM setting",
        // What the writer derives: the step ranges exactly; per-rank step aggregates by which steps each block
        // holds (their sums may round differently when the rows came in other batches); anomaly groups by
        // membership (faces depend on breadths, which StalledRank anomalies change).
        "SELECT 'kind_range', kind, min_step, max_step FROM kind_range",
        "SELECT 'rank_block', kind, op, block, rank, length(data) FROM rank_block",
        "SELECT 'anomaly_group', source, rule, rank, kind, name, op, count, first_step, last_step FROM anomaly_group "
        "WHERE rule <> 'StalledRank'",
    };
    std::vector<std::string> out;
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        error = "cannot open " + db;
        sqlite3_close(h);
        return out;
    }
    dump_samples(h, out, error);
    for (const char* sql : kTables) {
        sqlite3_stmt* st = nullptr;
        if (sqlite3_prepare_v2(h, sql, -1, &st, nullptr) != SQLITE_OK) {
            error = std::string("cannot prepare '") + sql + "': " + sqlite3_errmsg(h);
            break;
        }
        while (sqlite3_step(st) == SQLITE_ROW) {
            std::string line;
            for (int c = 0; c < sqlite3_column_count(st); ++c) {
                if (c) line += '\t';
                char buf[64];
                switch (sqlite3_column_type(st, c)) {
                    case SQLITE_NULL:
                        line += "NULL";
                        break;
                    case SQLITE_INTEGER:
                        line += std::to_string(sqlite3_column_int64(st, c));
                        break;
                    case SQLITE_FLOAT:
                        std::snprintf(buf, sizeof buf, "%.17g", sqlite3_column_double(st, c));
                        line += buf;
                        break;
                    case SQLITE_BLOB: {
                        const auto* p = static_cast<const unsigned char*>(sqlite3_column_blob(st, c));
                        line += "x'";
                        for (int i = 0; i < sqlite3_column_bytes(st, c); ++i) {
                            std::snprintf(buf, sizeof buf, "%02x", p[i]);
                            line += buf;
                        }
                        line += "'";
                        break;
                    }
                    default:
                        line += "'";
                        line.append(reinterpret_cast<const char*>(sqlite3_column_text(st, c)),
                                    static_cast<std::size_t>(sqlite3_column_bytes(st, c)));
                        line += "'";
                }
            }
            out.push_back(std::move(line));
        }
        sqlite3_finalize(st);
    }
    sqlite3_close(h);
    std::sort(out.begin(), out.end());
    return out;
}

// Sorted `a` (the killed store) and `b` (the clean one) hold the same lines, each as often.
void expect_same_lines(const std::vector<std::string>& a, const std::vector<std::string>& b, const std::string& what,
                       int kills) {
    EXPECT_EQ(a.size(), b.size()) << what << ": lines missing or duplicated after " << kills << " kills";
    std::vector<std::string> only_a, only_b;
    std::set_difference(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(only_a));
    std::set_difference(b.begin(), b.end(), a.begin(), a.end(), std::back_inserter(only_b));
    auto examples = [](const std::vector<std::string>& v) {
        std::string s;
        for (std::size_t i = 0; i < v.size() && i < 5; ++i) s += "\n  " + v[i];
        return s;
    };
    EXPECT_TRUE(only_a.empty()) << what << ": " << only_a.size() << " only in the killed store, e.g."
                                << examples(only_a);
    EXPECT_TRUE(only_b.empty()) << what << ": " << only_b.size() << " only in the clean store, e.g."
                                << examples(only_b);
}

// Catches the killed store up with one plain ingest, ingests the same tree into a fresh store, and compares the two:
// `msmon query` output line by line and every table row by row. Returns the number of values and rows compared.
std::pair<std::size_t, std::size_t> compare_with_clean_ingest(const TempDir& tmp, const std::string& job,
                                                              const std::string& db,
                                                              const std::vector<std::string>& extra,
                                                              const std::map<std::string, std::string>& env,
                                                              int kills) {
    std::vector<std::string> args = {program("msmon"), "ingest", job, "--db", db, "--json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto last = run(args, env);
    EXPECT_EQ(last.exit_code, 0) << last.err;
    const std::string clean_db = tmp / "clean.db";
    args[4] = clean_db;
    auto clean = run(args, env);
    EXPECT_EQ(clean.exit_code, 0) << clean.err;

    auto killed_q = run({program("msmon"), "query", "--db", db}, env);
    auto clean_q = run({program("msmon"), "query", "--db", clean_db}, env);
    EXPECT_EQ(killed_q.exit_code, 0) << killed_q.err;
    EXPECT_EQ(clean_q.exit_code, 0) << clean_q.err;
    const auto a = sorted_lines(killed_q.out), b = sorted_lines(clean_q.out);
    EXPECT_GT(b.size(), 100000u);
    expect_same_lines(a, b, "msmon query", kills);

    std::string error;
    const auto ka = dump_store(db, error);
    EXPECT_EQ(error, "");
    const auto kb = dump_store(clean_db, error);
    EXPECT_EQ(error, "");
    expect_same_lines(ka, kb, "store tables", kills);
    auto count = [&](const std::string& start) {
        return std::count_if(kb.begin(), kb.end(), [&](const std::string& l) { return l.rfind(start, 0) == 0; });
    };
    for (const char* table : {"event", "anomaly", "checkpoint", "detector_state"})
        EXPECT_GT(count("'" + std::string(table) + "'\t"), 0) << table;
    EXPECT_GT(count("'anomaly'\t'detected'\t'CrossRankOutlier'"), 0);
    EXPECT_EQ(inspect(db).integrity, "ok");
    return {b.size(), kb.size()};
}

// Keeps the run's state across kills: a store once there never goes away, and committed rows are never lost.
struct KillLedger {
    int kills = 0, after_commit = 0;
    long long rows = 0;
    bool existed = false;
    // Checks the store after a kill; returns false (with gtest failures) if it is damaged.
    bool check(const std::string& db) {
        ++kills;
        const StoreState s = inspect(db);
        if (!s.exists) {
            EXPECT_FALSE(existed) << "the store vanished after kill " << kills;
            return !existed;
        }
        existed = true;
        EXPECT_EQ(s.integrity, "ok") << "after kill " << kills;
        EXPECT_GE(s.rows, rows) << "committed rows lost after kill " << kills;
        if (s.rows > rows) ++after_commit;
        rows = std::max(rows, s.rows);
        return s.integrity == "ok" && s.rows >= rows;
    }
};

constexpr const char* kMonitorConfig =
    R"({"targets": {}, "wg_distribution": true, "mv_distribution": true, "format": "csv",
 "ops": ["min", "max", "norm", "mean", "nans", "zeros"],
 "alert": {"rules": [{"rule_name": "AnomalyTurbulence", "args": {"threshold": 0.5}}, {"rule_name": "AnomalyNan"}],
           "dump": false}})";

// A spike on every rank, then one rank at a time out of line (a corrupt batch or gradients x100): cross-rank
// outliers every 20 steps, judged once all ranks have passed the step; a NaN near the end (it reaches every rank
// and stays).
constexpr const char* kFaults =
    "spike@10,baddata@20:r3,spike@40:r2,spike@60:r1,baddata@80:r0,spike@100:r3,spike@120:r0,baddata@140:r1,"
    "spike@160:r2,spike@180:r1,baddata@200:r2,spike@220:r0,nan@230:r3";

// The modules each rank writes. The sanitizer builds write a third of them: there the point is a memory error or a
// race on the same paths, and ingesting, querying and dumping each store twice for the comparison took 3.5 of the
// test's 6 instrumented minutes (TSan, CI's 2 cores). The kills and their moments are the same.
// The TUI's live run is paced slower there (150 ms a step: ~37 s instead of 25): an instrumented msmon-tui takes
// longer to start and draw, and at 100 ms ASan fitted 31 of the 32 kills the test wants into the live run.
#ifdef MSMON_SANITIZED
constexpr int kIngestParams = 2, kTuiParams = 3;
constexpr const char* kTuiStepMs = "150";
#else
constexpr int kIngestParams = 6, kTuiParams = 8;
constexpr const char* kTuiStepMs = "100";
#endif

TEST(KillRestart, store_after_160_or_more_sigkills_of_ingest_equals_a_clean_ingest) {
    TempDir tmp;
    const std::string job = tmp / "job";
    const std::string db = tmp / "killed.db";
    const std::string config = tmp / "monitor_config.json";
    write_file(config, kMonitorConfig);
    const auto env = isolated_env(tmp);
    const auto t0 = Clock::now();
    // ~32 s of live writing: 4 ranks, kIngestParams with activations, MindFormers logs and the health file, the faults
    // above, 100 ms steps, 5 steps per CSV file (rows appended to open files). Half the kills must land in it: a
    // kill cycle (start, kill, integrity_check) took ~0.3 s on a busy machine, and 24 s once gave 78 of 80.
    Background sim(
        {program("msmon"), "simulate", job, "--ranks", "4", "--params", std::to_string(kIngestParams), "--steps", "320",
         "--step-ms", "100", "--record-steps", "5", "--xy", "--logs", "--health", "--faults", kFaults},
        tmp.path(), env);
    // `msmon ingest` refuses a job folder that does not exist yet (an instrumented simulator takes a moment).
    ASSERT_GE(wait_until([&] { return std::filesystem::exists(job + "/monitor_output"); }, milliseconds(10000)).count(),
              0);
    std::mt19937 rng(20261122);
    // A quarter of the kills land in start-up (opening, migrating, scanning), the rest while it follows and commits.
    std::uniform_int_distribution<int> early_ms(1, 60), later_ms(60, 300), after_commit_ms(0, 100);
    std::bernoulli_distribution early(0.25);
#ifdef MSMON_SANITIZED
    // An instrumented build catches up on the backlog 2-4x slower and commits its first batch after a restart seconds
    // later: blind delays of up to 3 s landed 0 to 3 of 160 kills after a commit (TSan, CI). One kill in 32 waits
    // for a commit instead, so fewer of them cost a live-run kill; one in ten waits long enough to be killed during
    // the catch-up of a backlog.
    std::uniform_int_distribution<int> long_ms(1500, 3000);
    std::bernoulli_distribution long_wait(0.1);
    constexpr int kCommitShare = 32;
    constexpr int kLiveShare = 4;  // fewer kills fit in the live run
#else
    std::uniform_int_distribution<int> long_ms(0, 0);
    std::bernoulli_distribution long_wait(0.0);
    constexpr int kCommitShare = 8;
    constexpr int kLiveShare = 2;
#endif
    KillLedger ledger;
    int live_kills = 0;
    constexpr int kKills = 160;
    // Kills go on for the whole run, and after it until there are kKills.
    int sim_rc = -1000;  // -1000: still running (Background::wait reaps once)
    for (bool sim_running = true; sim_running || ledger.kills < kKills;) {
        if (sim_rc == -1000) sim_rc = sim.wait(milliseconds(0));
        sim_running = sim_rc == -1000;
        Background ingest({program("msmon"), "ingest", job, "--follow", "--db", db, "--monitor-config", config},
                          tmp.path(), env);
        // Behind one kill in kCommitShare after a commit, while the run is written: this kill first waits for the
        // ingest to commit new rows. Blind delays left that case to the machine's load (under load 2 of 160 landed
        // there).
        if (sim_running && ledger.after_commit * kCommitShare < ledger.kills + kCommitShare) {
            const long long before = ledger.rows;
            wait_until([&] { return committed_rows(db) > before; }, milliseconds(10000));
            // Paces the input: the kill comes at a random moment after the commit.
            std::this_thread::sleep_for(milliseconds(after_commit_ms(rng)));
        } else {
            // After the run ended: kills during the catch-up of what is left, at half the delay.
            const int delay = long_wait(rng) ? long_ms(rng) : early(rng) ? early_ms(rng) : later_ms(rng);
            // Paces the input: the kill comes at a random moment of the run (the point of the test).
            std::this_thread::sleep_for(milliseconds(sim_running ? delay : delay / 2));
        }
        ingest.signal(SIGKILL);
        const int rc = ingest.wait(milliseconds(5000));
        ASSERT_EQ(rc, -SIGKILL) << "ingest ended on its own (" << rc << "): " << ingest.err();
        live_kills += sim_running;
        if (!ledger.check(db)) break;
    }
    ASSERT_EQ(sim_rc, 0) << sim.err();
    const auto t1 = Clock::now();
    const auto [values, rows] =
        compare_with_clean_ingest(tmp, job, db, {"--monitor-config", config}, env, ledger.kills);
    EXPECT_GE(ledger.kills, kKills);
    EXPECT_GE(live_kills, kKills / kLiveShare) << "the simulated run ended too early";
    // One live kill in kCommitShare waits for a commit; the blind ones land after one by chance, rarely under the
    // sanitizers.
    EXPECT_GE(ledger.after_commit, live_kills / kCommitShare) << "too few kills landed after a commit";
    std::printf(
        "[ kills    ] %d SIGKILLs of msmon ingest --follow (%d during the live run, %d after new rows were "
        "committed), integrity_check ok after each; %zu values (msmon query) and %zu store rows compared, "
        "%.1f s killing + %.1f s comparing\n",
        ledger.kills, live_kills, ledger.after_commit, values, rows, seconds(t1 - t0), seconds(Clock::now() - t1));
}

// The pid of the process whose pid `path` holds, once it is written.
pid_t read_pid(const std::string& path, milliseconds timeout) {
    pid_t pid = 0;
    wait_until(
        [&] {
            const std::string text = read_file(path);
            if (text.empty() || text.back() != '\n') return false;
            pid = static_cast<pid_t>(std::stol(text));
            return true;
        },
        timeout);
    return pid;
}

// The process has exited: no such process, or a zombie whose every thread is gone too (a killed thread-group
// leader turns zombie while its other threads may still be exiting, holding the process's files open).
bool exited(pid_t pid) {
    if (::kill(pid, 0) != 0 && errno == ESRCH) return true;
    const std::string proc = "/proc/" + std::to_string(pid);
    std::error_code ec;
    int tasks = 0;
    for (std::filesystem::directory_iterator it(proc + "/task", ec), end; !ec && it != end; it.increment(ec)) ++tasks;
    if (ec) return true;
    const std::string stat = read_file(proc + "/stat");
    const auto paren = stat.rfind(')');
    return tasks == 1 && paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
}

TEST(KillRestart, store_after_64_or_more_sigkills_of_the_tui_equals_a_clean_ingest) {
    if (!TmuxSession::available()) MSMON_SKIP_UNLESS_REQUIRED("tmux is not installed");
    TempDir tmp;
    const std::string job = tmp / "job";
    const std::string db = tmp / "tui.db";
    const std::string pid_file = tmp / "tui.pid";
    const auto env = isolated_env(tmp);
    const auto t0 = Clock::now();
    // ~25 s of live writing (~37 s instrumented), as above without activations.
    Background sim(
        {program("msmon"), "simulate", job, "--ranks", "4", "--params", std::to_string(kTuiParams), "--steps", "250",
         "--step-ms", kTuiStepMs, "--record-steps", "5", "--logs", "--health", "--faults", kFaults},
        tmp.path(), env);
    ASSERT_GE(wait_until([&] { return std::filesystem::exists(job + "/monitor_output"); }, milliseconds(10000)).count(),
              0);
    auto tui_env = env;
    tui_env.insert({{"LANG", "C.UTF-8"}, {"LC_ALL", "C.UTF-8"}, {"TERM", "xterm-256color"}});
    // The shell writes its pid and becomes msmon-tui (exec): that pid is the TUI's.
    const std::string command = "echo $$ > " + pid_file + ".tmp && mv " + pid_file + ".tmp " + pid_file + " && exec " +
                                program("msmon-tui") + " " + job + " --db " + db;
    std::mt19937 rng(20261123);
    std::bernoulli_distribution early(0.3);
    std::uniform_int_distribution<int> early_ms(0, 40), later_ms(0, 350);
    KillLedger ledger;
    int live_kills = 0, drawn_kills = 0;
    constexpr int kKills = 64;
    int sim_rc = -1000;  // -1000: still running (Background::wait reaps once)
    for (bool sim_running = true; sim_running || ledger.kills < kKills;) {
        if (sim_rc == -1000) sim_rc = sim.wait(milliseconds(0));
        sim_running = sim_rc == -1000;
        std::filesystem::remove(pid_file);
        TmuxSession tui(command, 100, 30, tui_env);
        const pid_t pid = read_pid(pid_file, milliseconds(5000));
        ASSERT_GT(pid, 0) << "msmon-tui did not start: " << tui.capture();
        if (early(rng)) {
            // Very early: before or while it opens the store, scans the job and draws its first frame.
            std::this_thread::sleep_for(milliseconds(early_ms(rng)));  // paces the input: a random kill moment
        } else {
            // Its first frame, while it still reads the job (not once it settled: the kill lands in the catch-up).
            const std::string screen = tui.busy_screen_with("Overview", milliseconds(5000));
            ASSERT_FALSE(screen.empty()) << "msmon-tui drew nothing: " << tui.capture();
            // The previous TUI is gone, so this one holds the writer lock and ingests (not "read only").
            ASSERT_EQ(screen.find("read only"), std::string::npos) << screen;
            std::this_thread::sleep_for(milliseconds(later_ms(rng)));  // paces the input: a random kill moment
            ++drawn_kills;
        }
        ASSERT_EQ(::kill(pid, SIGKILL), 0) << "msmon-tui ended before its kill: " << tui.capture();
        // Gone, or a zombie (tmux 3.3 sometimes leaves a pane's process unreaped after an early kill): its files, and
        // so the writer lock and SQLite's locks, are closed either way.
        ASSERT_GE(wait_until([&] { return exited(pid); }, milliseconds(5000)).count(), 0)
            << read_file("/proc/" + std::to_string(pid) + "/stat");
        live_kills += sim_running;
        if (!ledger.check(db)) break;
    }
    ASSERT_EQ(sim_rc, 0) << sim.err();
    const auto t1 = Clock::now();
    const auto [values, rows] = compare_with_clean_ingest(tmp, job, db, {}, env, ledger.kills);
    EXPECT_GE(ledger.kills, kKills);
    EXPECT_GE(live_kills, kKills / 2) << "the simulated run ended too early";
    EXPECT_GE(drawn_kills, kKills / 2);
    std::printf(
        "[ kills    ] %d SIGKILLs of msmon-tui in tmux (%d during the live run, %d after its first frame, %d "
        "after new rows were committed), integrity_check ok after each; %zu values (msmon query) and %zu store "
        "rows compared, %.1f s killing + %.1f s comparing\n",
        ledger.kills, live_kills, drawn_kills, ledger.after_commit, values, rows, seconds(t1 - t0),
        seconds(Clock::now() - t1));
}

// A cross-rank group is judged once every rank has passed its step; the last step's never is while the run is
// followed. Its values were committed, so a restart does not read them again: the group must come back from the
// store, or rank 2's outlier at step 5 is lost for good.
TEST(KillRestart, a_cross_rank_group_waiting_when_ingest_is_killed_is_judged_after_the_restart) {
    TempDir tmp;
    const std::string job = tmp / "job";
    const auto env = isolated_env(tmp);
    ASSERT_EQ(run({program("msmon"), "simulate", job, "--ranks", "4", "--steps", "6", "--params", "4", "--faults",
                   "spike@5:r2"},
                  env)
                  .exit_code,
              0);
    auto outliers = [&](const std::string& db) {
        auto r = run({program("msmon"), "anomalies", "--db", db, "--format", "json"}, env);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        std::vector<std::string> out;
        for (const auto& a : nlohmann::json::parse(r.out))
            if (a["rule"] == "CrossRankOutlier") out.push_back(a.dump());
        std::sort(out.begin(), out.end());
        return out;
    };
    const std::string clean_db = tmp / "clean.db";
    ASSERT_EQ(run({program("msmon"), "ingest", job, "--db", clean_db}, env).exit_code, 0);
    const long long rows = inspect(clean_db).rows;
    ASSERT_GT(rows, 0);
    const auto expected = outliers(clean_db);
    ASSERT_EQ(expected.size(), 1u);  // rank 2's own gradients at step 5 (grad_reduced is the same on every rank)

    const std::string db = tmp / "killed.db";
    Background ingest({program("msmon"), "ingest", job, "--follow", "--db", db}, tmp.path(), env);
    ASSERT_GE(wait_until([&] { return inspect(db).rows == rows; }, milliseconds(10000)).count(), 0);
    ingest.signal(SIGKILL);
    ASSERT_EQ(ingest.wait(milliseconds(5000)), -SIGKILL);
    EXPECT_EQ(outliers(db), std::vector<std::string>{}) << "judged before the kill: nothing to test";
    auto restart = run({program("msmon"), "ingest", job, "--db", db, "--json"}, env);
    ASSERT_EQ(restart.exit_code, 0) << restart.err;
    EXPECT_NE(restart.out.find("\"rows\": 0,"), std::string::npos) << restart.out;
    EXPECT_EQ(outliers(db), expected);
}

TEST(KillRestart, reingesting_the_same_files_adds_nothing) {
    TempDir tmp;
    const std::string job = tmp / "job";
    const std::string db = tmp / "store.db";
    ASSERT_EQ(run({program("msmon"), "simulate", job, "--ranks", "2", "--steps", "10", "--params", "4"}).exit_code, 0);
    auto first = run({program("msmon"), "ingest", job, "--db", db, "--json"});
    ASSERT_EQ(first.exit_code, 0) << first.err;
    EXPECT_EQ(first.out.find("\"rows\": 0,"), std::string::npos) << first.out;
    auto q1 = run({program("msmon"), "query", "--db", db});
    auto second = run({program("msmon"), "ingest", job, "--db", db, "--json"});
    ASSERT_EQ(second.exit_code, 0);
    EXPECT_NE(second.out.find("\"rows\": 0,"), std::string::npos) << second.out;
    EXPECT_NE(second.out.find("\"values\": 0,"), std::string::npos) << second.out;
    EXPECT_EQ(run({program("msmon"), "query", "--db", db}).out, q1.out);
}

}  // namespace
}  // namespace msmon::test
