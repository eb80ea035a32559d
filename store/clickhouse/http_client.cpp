// HTTP/1.1 with Connection: close: simple to reason about when the server dies mid-request (no stale
// keep-alive sockets to retry on), and a connection per second of shipping costs nothing on a LAN.
#include "store/clickhouse/http_client.hpp"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "core/files/input_file.hpp"
#include "core/files/input_limits.hpp"
#include "core/signals/stop_request.hpp"
#include "store/clickhouse/host_addresses.hpp"

namespace msmon {

namespace {

class Socket {
public:
    explicit Socket(int fd) : fd_(fd) {}
    ~Socket() {
        if (fd_ >= 0) ::close(fd_);
    }
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    int fd() const { return fd_; }

private:
    int fd_;
};

std::string errno_text(const char* what) {
    return std::string(what) + ": " + std::strerror(errno);
}

// Waits until `fd` is ready for `events`, the deadline passes, or a stop's grace is over (core/signals).
bool wait_ready(int fd, short events, std::chrono::steady_clock::time_point deadline, std::string& error) {
    while (true) {
        if (stop_grace_over()) {
            error = "msmon is stopping";
            return false;
        }
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            error = "timed out";
            return false;
        }
        pollfd p{fd, events, 0};
        const int rc = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left.count(), 100)));
        if (rc > 0) return true;
        if (rc < 0 && errno != EINTR) {
            error = errno_text("poll");
            return false;
        }
    }
}

int connect_to(const std::string& host, int port, std::chrono::steady_clock::time_point deadline, std::string& error) {
    const std::vector<HostAddress> addresses = resolve_host(host, port, error);
    if (addresses.empty()) return -1;
    const std::string service = std::to_string(port);
    int fd = -1;
    for (const HostAddress& a : addresses) {
        const auto* sa = reinterpret_cast<const sockaddr*>(&a.addr);
        fd = ::socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0) continue;
        if (::connect(fd, sa, a.len) == 0) break;
        std::string waited;
        if (errno == EINPROGRESS && wait_ready(fd, POLLOUT, deadline, waited)) {
            int so_error = 0;
            socklen_t len = sizeof so_error;
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &so_error, &len);
            if (so_error == 0) break;
            errno = so_error;
        }
        // Not connected: refused and the like, or the wait gave up ("timed out", "msmon is stopping"; errno then
        // still said EINPROGRESS, "Operation now in progress").
        error = waited.empty() ? errno_text(("connect to " + host + ":" + service).c_str())
                               : "connect to " + host + ":" + service + ": " + waited;
        ::close(fd);
        fd = -1;
    }
    if (fd >= 0) {
        const int one = 1;
        ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    return fd;
}

bool send_all(int fd, std::string_view data, std::chrono::steady_clock::time_point deadline, std::string& error) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n > 0) {
            data.remove_prefix(static_cast<std::size_t>(n));
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (!wait_ready(fd, POLLOUT, deadline, error)) return false;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            error = errno_text("send");
            return false;
        }
    }
    return true;
}

// An answer past a bound: what the message says, naming the setting that raises it.
std::string past_bound(const char* what, std::int64_t bound, const char* setting) {
    return std::string("the server's answer is larger than ") + byte_size_text(bound) + " " + what + " (the limit " +
           setting + " in msmon's settings): not read";
}

// Reads until the peer closes (the request said Connection: close), at most the bound on an answer (and its head).
bool read_all(int fd, std::string& out, std::chrono::steady_clock::time_point deadline, std::string& error) {
    const auto bound = static_cast<std::size_t>(input_limits().clickhouse_answer) + 65536;
    char buf[65536];
    while (true) {
        const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
        if (n > 0) {
            if (out.size() + static_cast<std::size_t>(n) > bound) {
                error = past_bound("as sent", input_limits().clickhouse_answer, kClickHouseAnswerLimit);
                return false;
            }
            out.append(buf, static_cast<std::size_t>(n));
        } else if (n == 0) {
            return true;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            if (!wait_ready(fd, POLLIN, deadline, error)) return false;
        } else if (errno != EINTR) {
            error = errno_text("recv");
            return false;
        }
    }
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    return s;
}

bool dechunk(std::string_view in, std::string& out) {
    std::size_t pos = 0;
    while (true) {
        const auto eol = in.find("\r\n", pos);
        if (eol == std::string_view::npos) return false;
        const std::size_t size = std::strtoul(std::string(in.substr(pos, eol - pos)).c_str(), nullptr, 16);
        pos = eol + 2;
        if (size == 0) return true;
        if (pos > in.size() || size > in.size() - pos) return false;
        out.append(in.substr(pos, size));
        pos += size + 2;
    }
}

bool parse_response(const std::string& raw, HttpResponse& r, std::string& error) {
    const auto head_end = raw.find("\r\n\r\n");
    if (head_end == std::string::npos || raw.compare(0, 5, "HTTP/") != 0) return false;
    const auto sp = raw.find(' ');
    r.status = std::atoi(raw.c_str() + sp + 1);
    bool chunked = false, gzipped = false;
    long long length = -1;
    std::size_t pos = raw.find("\r\n") + 2;
    while (pos < head_end) {
        const auto eol = raw.find("\r\n", pos);
        const std::string line = raw.substr(pos, eol - pos);
        pos = eol + 2;
        const auto colon = line.find(':');
        if (colon == std::string::npos) continue;
        const std::string key = lower(line.substr(0, colon));
        std::string value = line.substr(colon + 1);
        while (!value.empty() && value.front() == ' ') value.erase(0, 1);
        if (key == "transfer-encoding" && lower(value).find("chunked") != std::string::npos) chunked = true;
        if (key == "content-encoding" && lower(value).find("gzip") != std::string::npos) gzipped = true;
        if (key == "content-length") length = std::atoll(value.c_str());
    }
    std::string_view body(raw);
    body.remove_prefix(head_end + 4);
    std::string plain;
    if (chunked) {
        if (!dechunk(body, plain)) return false;
    } else {
        if (length >= 0 && static_cast<std::size_t>(length) > body.size()) return false;
        plain.assign(body.substr(0, length >= 0 ? static_cast<std::size_t>(length) : body.size()));
    }
    if (gzipped) {
        const auto bound = static_cast<std::size_t>(input_limits().clickhouse_inflated);
        if (gunzip(plain, r.body, bound)) return true;
        if (r.body.size() > bound)
            error = past_bound("inflated", input_limits().clickhouse_inflated, kClickHouseInflatedLimit);
        return false;
    }
    r.body = std::move(plain);
    return true;
}

}  // namespace

HttpClient::HttpClient(std::string host, int port, std::chrono::milliseconds timeout)
    : host_(std::move(host)), port_(port), timeout_(timeout) {}

HttpResponse HttpClient::post(const std::string& target, std::string_view body, bool gzip_body) const {
    return request("POST", target, body, gzip_body);
}

HttpResponse HttpClient::get(const std::string& target) const {
    return request("GET", target, {}, false);
}

HttpResponse HttpClient::request(const char* method, const std::string& target, std::string_view body,
                                 bool gzip_body) const {
    HttpResponse r;
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    std::string compressed;
    if (gzip_body) {
        compressed = gzip_compress(body);
        body = compressed;
    }
    std::string head = std::string(method) + " " + target + " HTTP/1.1\r\nHost: " + host_ + ":" +
                       std::to_string(port_) +
                       "\r\nConnection: close\r\nAccept-Encoding: gzip\r\nContent-Type: application/octet-stream\r\n"
                       "Content-Length: " +
                       std::to_string(body.size()) + "\r\n";
    if (gzip_body) head += "Content-Encoding: gzip\r\n";
    head += "\r\n";
    const int fd = connect_to(host_, port_, deadline, r.error);
    if (fd < 0) return r;
    Socket sock(fd);
    std::string raw;
    if (!send_all(fd, head, deadline, r.error) || !send_all(fd, body, deadline, r.error)) return r;
    ::shutdown(fd, SHUT_WR);
    if (!read_all(fd, raw, deadline, r.error)) return r;
    std::string error;
    if (!parse_response(raw, r, error)) {
        r.status = 0;
        r.body.clear();
        r.error = !error.empty() ? error
                  : raw.empty()  ? "connection closed without a response"
                                 : "malformed or truncated HTTP response";
    }
    return r;
}

std::string gzip_compress(std::string_view data, int level) {
    z_stream z{};
    if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return {};
    std::string out(deflateBound(&z, static_cast<uLong>(data.size())) + 32, '\0');
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    deflate(&z, Z_FINISH);
    out.resize(z.total_out);
    deflateEnd(&z);
    return out;
}

bool gunzip(std::string_view data, std::string& out, std::size_t bound) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) return false;
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    z.avail_in = static_cast<uInt>(data.size());
    char buf[65536];
    int rc = Z_OK;
    while (rc != Z_STREAM_END) {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END) break;
        out.append(buf, sizeof buf - z.avail_out);
        if (out.size() > bound) break;                                 // a bomb: stops past the bound
        if (rc == Z_OK && z.avail_in == 0 && z.avail_out != 0) break;  // truncated input
    }
    inflateEnd(&z);
    return rc == Z_STREAM_END;
}

std::string url_encode(std::string_view text) {
    static const char* hex = "0123456789ABCDEF";
    std::string out;
    for (const unsigned char c : text) {
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
            c == '.' || c == '~') {
            out.push_back(static_cast<char>(c));
        } else {
            out.push_back('%');
            out.push_back(hex[c >> 4]);
            out.push_back(hex[c & 15]);
        }
    }
    return out;
}

}  // namespace msmon
