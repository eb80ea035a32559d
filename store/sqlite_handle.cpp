// RAII wrappers: errors become SqliteError with the database path and SQLite's message.
#include "store/sqlite_handle.hpp"

namespace msmon {

Connection::Connection(const std::string& path, Mode mode) : path_(path) {
    const int flags = mode == Mode::read_only ? SQLITE_OPEN_READONLY
                                              : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    const int rc = sqlite3_open_v2(path.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK) {
        const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw SqliteError("cannot open store '" + path + "': " + msg, rc);
    }
    sqlite3_extended_result_codes(db_, 1);
    sqlite3_busy_timeout(db_, 5000);
}

Connection::~Connection() {
    if (db_) sqlite3_close_v2(db_);
}

void Connection::fail(const std::string& context, int code) const {
    throw SqliteError("store '" + path_ + "': " + context + ": " + sqlite3_errmsg(db_), code);
}

void Connection::exec(const char* sql) {
    char* err = nullptr;
    const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &err);
    if (rc != SQLITE_OK) {
        std::string msg = err ? err : sqlite3_errstr(rc);
        sqlite3_free(err);
        throw SqliteError("store '" + path_ + "': " + msg, rc);
    }
}

Statement::Statement(Connection& conn, const char* sql) : conn_(conn) {
    const int rc = sqlite3_prepare_v3(conn.raw(), sql, -1, SQLITE_PREPARE_PERSISTENT, &stmt_, nullptr);
    if (rc != SQLITE_OK) conn.fail(std::string("prepare '") + sql + "'", rc);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

bool Statement::step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    conn_.fail("step", rc);
}

void Statement::run() {
    step();
    reset();
}

void Statement::reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
}

Transaction::Transaction(Connection& conn) : conn_(conn) { conn_.exec("BEGIN IMMEDIATE"); }

Transaction::~Transaction() {
    if (!done_) sqlite3_exec(conn_.raw(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    conn_.exec("COMMIT");
    done_ = true;
}

}  // namespace msmon
