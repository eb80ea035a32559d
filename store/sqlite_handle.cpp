// RAII wrappers: errors become SqliteError with the database path and SQLite's message.
#include "store/sqlite_handle.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>

#include "store/store_location.hpp"

namespace msmon {

namespace {

// "file:" URI of a path: '%', '?' and '#' escaped.
std::string file_uri(const std::string& path) {
    std::string out = "file:";
    for (char c : path) {
        if (c == '%') out += "%25";
        else if (c == '?') out += "%3f";
        else if (c == '#') out += "%23";
        else out += c;
    }
    return out;
}

// No msmon writer holds the store (its writer keeps an exclusive flock on its lock file while it runs).
bool no_writer(const std::string& path) {
    const int fd = ::open(store_lock_path(path).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT;
    const bool free = ::flock(fd, LOCK_SH | LOCK_NB) == 0;
    ::close(fd);
    return free;
}

}  // namespace

Connection::Connection(const std::string& path, Mode mode) : path_(path) {
    const int flags = mode == Mode::read_only ? SQLITE_OPEN_READONLY : (SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
    open(path, flags);
    if (mode != Mode::read_only) return;
    // A WAL store whose writer has exited has no -shm; a reader that may not create one (another user, a read-only
    // folder) cannot open it ("attempt to write a readonly database"). With no writer running, nothing can change
    // it: it is read as immutable (SQLite's own answer for read-only WAL files).
    const int rc = sqlite3_exec(db_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK || ((rc & 0xff) != SQLITE_READONLY && (rc & 0xff) != SQLITE_CANTOPEN) || !no_writer(path))
        return;
    sqlite3_close_v2(db_);
    db_ = nullptr;
    open(file_uri(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI);
}

void Connection::open(const std::string& name, int flags) {
    // The path is the store's real one (resolve_store_path): no link anywhere in it, so none planted later is used.
    const int rc = sqlite3_open_v2(name.c_str(), &db_, flags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_NOFOLLOW, nullptr);
    if (rc != SQLITE_OK) {
        const std::string msg = db_ ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
        sqlite3_close_v2(db_);
        db_ = nullptr;
        throw SqliteError("cannot open store '" + path_ + "': " + msg, rc);
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

Statement::~Statement() {
    sqlite3_finalize(stmt_);
}

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

Transaction::Transaction(Connection& conn) : conn_(conn) {
    conn_.exec("BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
    if (!done_) sqlite3_exec(conn_.raw(), "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
    conn_.exec("COMMIT");
    done_ = true;
}

}  // namespace msmon
