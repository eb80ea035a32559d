// Helpers for end-to-end tests: see e2e_support.hpp.
#include "tests/support/e2e_support.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/reference_csv.hpp"

namespace msmon::test {

namespace fs = std::filesystem;

std::string ingest_msprobe_fault_run(const TempDir& tmp, const std::string& name) {
    const std::string shared = shared_dir();
    if (shared.empty()) return {};
    const std::string db = tmp / (name + ".db");
    auto r =
        run({program("msmon"), "ingest", shared + "/fixtures/msprobe-faults/" + name, "--db", db}, isolated_env(tmp));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return db;
}

std::map<std::string, std::string> isolated_env(const TempDir& tmp) {
    return {{"XDG_CACHE_HOME", tmp / "xdg-cache"},
            {"XDG_STATE_HOME", tmp / "xdg-state"},
            {"XDG_CONFIG_HOME", tmp / "xdg-config"}};
}

std::string log_path(const TempDir& tmp) {
    return tmp / "xdg-state/msmon/msmon.log";
}

std::string QueryRow::key() const {
    return rank + "|" + kind + "|" + vpp_stage + "|" + name + "|" + step + "|" + micro_step + "|" + op;
}

std::vector<QueryRow> parse_query_csv(const std::string& out, std::string& error) {
    std::vector<QueryRow> rows;
    const auto records = parse_csv_reference(out);
    const std::vector<std::string> header = {"rank", "kind", "vpp_stage", "name", "step", "micro_step", "op", "value"};
    if (records.empty() || records[0] != header) {
        error = "query output does not start with the contract header: '" + out.substr(0, 80) + "'";
        return rows;
    }
    for (std::size_t i = 1; i < records.size(); ++i) {
        const auto& r = records[i];
        if (r.size() != 8) {
            error = "query line " + std::to_string(i + 1) + " has " + std::to_string(r.size()) + " fields";
            return rows;
        }
        rows.push_back({r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7]});
    }
    return rows;
}

std::vector<QueryRow> query_rows(const std::string& db, const std::vector<std::string>& extra,
                                 const std::map<std::string, std::string>& env, std::string& error) {
    std::vector<std::string> argv = {program("msmon"), "query", "--db", db};
    argv.insert(argv.end(), extra.begin(), extra.end());
    const auto r = run(argv, env);
    if (r.exit_code != 0) {
        error = "msmon query exited " + std::to_string(r.exit_code) + ": " + r.err;
        return {};
    }
    return parse_query_csv(r.out, error);
}

bool same_number(const std::string& a, const std::string& b) {
    double x = 0, y = 0;
    if (!reference_double(a, x) || !reference_double(b, y)) return a == b;
    if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
    return x == y && std::signbit(x) == std::signbit(y);
}

std::vector<std::vector<std::string>> sqlite_rows(const std::string& db, const std::string& sql, std::string& error) {
    std::vector<std::vector<std::string>> out;
    sqlite3* h = nullptr;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
        error = "cannot open " + db + ": " + (h ? sqlite3_errmsg(h) : "?");
        sqlite3_close(h);
        return out;
    }
    sqlite3_stmt* st = nullptr;
    if (sqlite3_prepare_v2(h, sql.c_str(), -1, &st, nullptr) != SQLITE_OK) {
        error = std::string("cannot prepare '") + sql + "': " + sqlite3_errmsg(h);
        sqlite3_close(h);
        return out;
    }
    int rc = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        std::vector<std::string> row;
        for (int c = 0; c < sqlite3_column_count(st); ++c) {
            if (sqlite3_column_type(st, c) == SQLITE_NULL) {
                row.emplace_back("NULL");
            } else {
                const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(st, c));
                row.emplace_back(text, static_cast<std::size_t>(sqlite3_column_bytes(st, c)));
            }
        }
        out.push_back(std::move(row));
    }
    if (rc != SQLITE_DONE) error = std::string("query failed: ") + sqlite3_errmsg(h);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return out;
}

std::string tree_listing(const std::string& dir) {
    std::vector<std::string> lines;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(dir, ec); it != fs::recursive_directory_iterator(); ++it) {
        struct stat st {};
        const std::string p = it->path().string();
        if (::lstat(p.c_str(), &st) != 0) {
            lines.push_back(p.substr(dir.size()) + " (vanished)");
            continue;
        }
        std::ostringstream line;
        line << p.substr(dir.size()) << " " << (S_ISDIR(st.st_mode) ? "dir" : "file") << " size=" << st.st_size
             << " mtime=" << st.st_mtim.tv_sec << "." << st.st_mtim.tv_nsec << " ino=" << st.st_ino;
        lines.push_back(line.str());
    }
    struct stat top {};
    if (::lstat(dir.c_str(), &top) == 0)
        lines.push_back(". mtime=" + std::to_string(top.st_mtim.tv_sec) + "." + std::to_string(top.st_mtim.tv_nsec));
    std::sort(lines.begin(), lines.end());
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

std::string to_crlf(const std::string& lf) {
    std::string out;
    for (char c : lf) {
        if (c == '\n') out += '\r';
        out += c;
    }
    return out;
}

long long json_count(const std::string& json_text, const std::string& key) {
    try {
        const auto j = nlohmann::json::parse(json_text);
        if (j.is_object() && j.contains(key) && j[key].is_number_integer()) return j[key].get<long long>();
    } catch (const std::exception&) {
    }
    return -1;
}

}  // namespace msmon::test
