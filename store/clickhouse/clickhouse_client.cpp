// Requests go as POST /?query=SQL; wait_end_of_query makes the server buffer a SELECT's result, so an error
// mid-query is a 500 with the message rather than an exception text appended to half a result.
#include "store/clickhouse/clickhouse_client.hpp"

#include <cctype>
#include <cstdlib>

namespace msmon {

std::optional<ClickHouseTarget> parse_clickhouse_url(const std::string& url, std::string& error) {
    const std::string prefix = "clickhouse://";
    if (!is_clickhouse_url(url)) {
        error = "'" + url + "' is not clickhouse://HOST:PORT/DB";
        return std::nullopt;
    }
    const std::string rest = url.substr(prefix.size());
    const auto slash = rest.find('/');
    ClickHouseTarget t;
    std::string hostport = rest.substr(0, slash);
    t.database = slash == std::string::npos ? "" : rest.substr(slash + 1);
    if (!t.database.empty() && t.database.back() == '/') t.database.pop_back();
    // [v6addr]:port or host:port; the port is optional.
    const auto bracket = hostport.find(']');
    const auto colon = hostport.rfind(':');
    if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
        const std::string port = hostport.substr(colon + 1);
        char* end = nullptr;
        const long p = std::strtol(port.c_str(), &end, 10);
        if (port.empty() || *end || p <= 0 || p > 65535) {
            error = "bad port in '" + url + "'";
            return std::nullopt;
        }
        t.port = static_cast<int>(p);
        hostport.resize(colon);
    }
    if (hostport.size() > 2 && hostport.front() == '[' && hostport.back() == ']')
        hostport = hostport.substr(1, hostport.size() - 2);
    t.host = hostport;
    if (t.host.empty()) {
        error = "no host in '" + url + "'";
        return std::nullopt;
    }
    if (t.database.empty()) {
        error = "no database in '" + url + "' (clickhouse://HOST:PORT/DB)";
        return std::nullopt;
    }
    for (const char c : t.database)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') {
            error = "database name '" + t.database + "' may hold letters, digits and '_' only";
            return std::nullopt;
        }
    return t;
}

std::string ch_quote(std::string_view s) {
    std::string out = "'";
    for (const char c : s) {
        if (c == '\'' || c == '\\') out.push_back('\\');
        out.push_back(c);
    }
    out.push_back('\'');
    return out;
}

ClickHouseClient::ClickHouseClient(ClickHouseTarget target, std::chrono::milliseconds timeout)
    : target_(std::move(target)), http_(target_.host, target_.port, timeout) {}

std::string ClickHouseClient::request(const std::string& sql, std::string_view body, bool gzip_body) const {
    const HttpResponse r = http_.post("/?wait_end_of_query=1&query=" + url_encode(sql), body, gzip_body);
    if (r.status == 0) throw ClickHouseUnreachable(target_.text() + ": " + r.error);
    if (r.status != 200) {
        std::string msg = r.body;
        while (!msg.empty() && (msg.back() == '\n' || msg.back() == '\r')) msg.pop_back();
        throw ClickHouseError(target_.text() + ": HTTP " + std::to_string(r.status) + ": " + msg);
    }
    return r.body;
}

std::string ClickHouseClient::query(const std::string& sql) const {
    return request(sql, {}, false);
}

void ClickHouseClient::insert(const std::string& table_and_columns, std::string_view rows) const {
    request("INSERT INTO " + table_and_columns + " FORMAT RowBinary", rows, true);
}

}  // namespace msmon
