// A small blocking HTTP/1.1 client over POSIX sockets: one POST per connection, gzip both ways (zlib).
#pragma once

#include <chrono>
#include <limits>
#include <string>
#include <string_view>

namespace msmon {

struct HttpResponse {
    int status = 0;     // 0: no response (the request may or may not have reached the server)
    std::string body;   // decoded (de-chunked, gunzipped)
    std::string error;  // transport failure, when status is 0
};

class HttpClient {
public:
    HttpClient(std::string host, int port, std::chrono::milliseconds timeout);

    // POSTs `body` to `target` ("/?query=..."). With gzip_body the body is sent gzip-compressed
    // (Content-Encoding: gzip); gzip responses (Accept-Encoding) are always accepted. Returns the response;
    // a transport failure gives status 0 and `error`.
    HttpResponse post(const std::string& target, std::string_view body, bool gzip_body) const;
    HttpResponse get(const std::string& target) const;

    const std::string& host() const { return host_; }
    int port() const { return port_; }

private:
    HttpResponse request(const char* method, const std::string& target, std::string_view body, bool gzip_body) const;
    std::string host_;
    int port_;
    std::chrono::milliseconds timeout_;
};

// zlib gzip framing; gunzip returns false on corrupt input, or once `out` grew past `bound` (a bomb: 2 MB that
// inflate to 2 GB).
std::string gzip_compress(std::string_view data, int level = 3);
bool gunzip(std::string_view data, std::string& out, std::size_t bound = std::numeric_limits<std::size_t>::max());

// Percent-encodes a URL query value.
std::string url_encode(std::string_view text);

}  // namespace msmon
