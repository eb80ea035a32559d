// RAII for the sqlite3 C API: a connection, a prepared statement, a transaction that rolls back unless committed.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace msmon {

class SqliteError : public std::runtime_error {
public:
    SqliteError(const std::string& what, int code) : std::runtime_error(what), code_(code) {}
    int code() const { return code_; }

private:
    int code_;
};

class Connection {
public:
    enum class Mode { read_write_create, read_only };
    Connection(const std::string& path, Mode mode);
    ~Connection();
    Connection(const Connection&) = delete;
    Connection& operator=(const Connection&) = delete;

    void exec(const char* sql);
    sqlite3* raw() const { return db_; }
    const std::string& path() const { return path_; }
    [[noreturn]] void fail(const std::string& context, int code) const;

private:
    void open(const std::string& name, int flags);
    sqlite3* db_ = nullptr;
    std::string path_;
};

class Statement {
public:
    Statement(Connection& conn, const char* sql);
    ~Statement();
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;

    // Binding by 1-based index; nullopt and NaN bind NULL (SQLite stores NaN as NULL anyway).
    void bind(int i, std::int64_t v) { check(sqlite3_bind_int64(stmt_, i, v)); }
    void bind(int i, int v) { check(sqlite3_bind_int64(stmt_, i, v)); }
    void bind(int i, double v) { check(sqlite3_bind_double(stmt_, i, v)); }
    void bind(int i, std::string_view v) {
        check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
    }
    void bind(int i, std::optional<std::int64_t> v) {
        if (v) bind(i, *v);
        else bind_null(i);
    }
    void bind_null(int i) { check(sqlite3_bind_null(stmt_, i)); }

    // True while a row is available.
    bool step();
    // For hot loops that bind and step through the C API directly.
    sqlite3_stmt* raw() const { return stmt_; }
    // Runs a statement that returns no rows, then resets it.
    void run();
    void reset();

    std::int64_t int64(int col) const { return sqlite3_column_int64(stmt_, col); }
    double real(int col) const { return sqlite3_column_double(stmt_, col); }
    bool is_null(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
    std::string text(int col) const {
        const auto* p = sqlite3_column_text(stmt_, col);
        return p ? std::string(reinterpret_cast<const char*>(p),
                               static_cast<std::size_t>(sqlite3_column_bytes(stmt_, col)))
                 : std::string();
    }
    std::optional<std::int64_t> opt_int64(int col) const {
        if (is_null(col)) return std::nullopt;
        return int64(col);
    }

private:
    void check(int rc) const {
        if (rc != SQLITE_OK) conn_.fail("bind", rc);
    }
    Connection& conn_;
    sqlite3_stmt* stmt_ = nullptr;
};

// BEGIN IMMEDIATE on construction; ROLLBACK in the destructor unless commit() ran.
class Transaction {
public:
    explicit Transaction(Connection& conn);
    ~Transaction();
    Transaction(const Transaction&) = delete;
    Transaction& operator=(const Transaction&) = delete;
    void commit();

private:
    Connection& conn_;
    bool done_ = false;
};

}  // namespace msmon
