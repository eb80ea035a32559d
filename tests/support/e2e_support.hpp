// Helpers for end-to-end tests of the msmon program: isolated environments, `msmon query` output as rows,
// read-only looks into a store with SQLite, and folder listings to prove nothing was written somewhere.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tests/support/test_env.hpp"

namespace msmon::test {

// XDG_CACHE_HOME, XDG_STATE_HOME and XDG_CONFIG_HOME under `tmp`, so a test never touches the real home (nor reads
// its settings).
std::map<std::string, std::string> isolated_env(const TempDir& tmp);

// `msmon ingest` of ../shared/fixtures/msprobe-faults/NAME into a store under `tmp`: the store's path, or "" when
// ../shared is absent (the caller skips).
std::string ingest_msprobe_fault_run(const TempDir& tmp, const std::string& name);

// The log file msmon writes under an isolated_env.
std::string log_path(const TempDir& tmp);

// One line of `msmon query` CSV output.
struct QueryRow {
    std::string rank, kind, vpp_stage, name, step, micro_step, op, value;
    // rank|kind|vpp_stage|name|step|micro_step|op
    std::string key() const;
};

// Parses `msmon query --format csv` output; sets `error` (and returns what it has) if the header is not the
// contract's or a line does not have 8 fields.
std::vector<QueryRow> parse_query_csv(const std::string& out, std::string& error);

// Runs `msmon query --db DB extra...` and returns its rows; `error` is set if it failed or its output is
// malformed.
std::vector<QueryRow> query_rows(const std::string& db, const std::vector<std::string>& extra,
                                 const std::map<std::string, std::string>& env, std::string& error);

// Two number texts denote the same double (NaN equals NaN; -0 differs from 0). Non-numbers compare as text.
bool same_number(const std::string& a, const std::string& b);

// Every row of `sql` on the store at `db` opened read-only, columns as text (NULL as "NULL"). `error` is set
// if the statement fails.
std::vector<std::vector<std::string>> sqlite_rows(const std::string& db, const std::string& sql, std::string& error);

// One line per entry under `dir` (recursive, sorted): relative path, type, size, mtime in ns, inode.
std::string tree_listing(const std::string& dir);

// "a\nb\n" -> "a\r\nb\r\n".
std::string to_crlf(const std::string& lf);

// The integer after `"key": ` in msmon's --json summary, or -1.
long long json_count(const std::string& json_text, const std::string& key);

}  // namespace msmon::test
