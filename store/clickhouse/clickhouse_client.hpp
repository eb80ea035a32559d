// A ClickHouse server reached through its HTTP interface: clickhouse://HOST:PORT/DB.
#pragma once

#include <chrono>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "store/clickhouse/http_client.hpp"

namespace msmon {

struct ClickHouseTarget {
    std::string host;
    int port = 8123;
    std::string database;
    std::string text() const { return "clickhouse://" + host + ":" + std::to_string(port) + "/" + database; }
};

// "clickhouse://HOST[:PORT]/DB"; nullopt with `error` when malformed (DB: letters, digits, underscore).
std::optional<ClickHouseTarget> parse_clickhouse_url(const std::string& url, std::string& error);
inline bool is_clickhouse_url(std::string_view s) {
    return s.rfind("clickhouse://", 0) == 0;
}

// The server answered with an error (the request was refused: nothing of it was applied).
struct ClickHouseError : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// No answer: the request may or may not have been applied.
struct ClickHouseUnreachable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Single-quoted ClickHouse string literal.
std::string ch_quote(std::string_view s);

class ClickHouseClient {
public:
    explicit ClickHouseClient(ClickHouseTarget target,
                              std::chrono::milliseconds timeout = std::chrono::milliseconds(30000));
    // Runs `sql` (its result, e.g. FORMAT RowBinary, is returned whole). Throws ClickHouseError or
    // ClickHouseUnreachable.
    std::string query(const std::string& sql) const;
    // INSERT INTO `table_and_columns` FORMAT RowBinary with `rows` as the gzip-compressed body.
    void insert(const std::string& table_and_columns, std::string_view rows) const;
    const ClickHouseTarget& target() const { return target_; }

private:
    std::string request(const std::string& sql, std::string_view body, bool gzip_body) const;
    ClickHouseTarget target_;
    HttpClient http_;
};

}  // namespace msmon
