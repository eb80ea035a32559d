#include "store/clickhouse/host_addresses.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <strings.h>

#include <cstring>
#include <fstream>
#include <sstream>

namespace msmon {

namespace {

// An IPv4 or IPv6 address written as such ("10.0.0.5", "::1", "[::1]").
bool numeric_address(std::string text, int port, HostAddress& out) {
    if (text.size() > 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
    auto* v4 = reinterpret_cast<sockaddr_in*>(&out.addr);
    if (::inet_pton(AF_INET, text.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(static_cast<std::uint16_t>(port));
        out.len = sizeof(sockaddr_in);
        return true;
    }
    out.addr = {};
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&out.addr);
    if (::inet_pton(AF_INET6, text.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(static_cast<std::uint16_t>(port));
        out.len = sizeof(sockaddr_in6);
        return true;
    }
    return false;
}

}  // namespace

std::vector<std::string> hosts_file_addresses(const std::string& text, const std::string& host) {
    std::vector<std::string> out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line.substr(0, line.find('#')));
        std::string address, name;
        if (!(words >> address)) continue;
        while (words >> name)
            if (::strcasecmp(name.c_str(), host.c_str()) == 0) {
                out.push_back(address);
                break;
            }
    }
    return out;
}

std::vector<HostAddress> resolve_host(const std::string& host, int port, std::string& error) {
    std::vector<HostAddress> out;
    if (HostAddress a; numeric_address(host, port, a)) {
        out.push_back(a);
        return out;
    }
#ifdef MSMON_NO_NSS
    std::ifstream file("/etc/hosts");
    std::stringstream text;
    text << file.rdbuf();
    for (const std::string& address : hosts_file_addresses(text.str(), host))
        if (HostAddress a; numeric_address(address, port, a)) out.push_back(a);
    if (out.empty() && ::strcasecmp(host.c_str(), "localhost") == 0) {
        HostAddress a;
        numeric_address("127.0.0.1", port, a);
        out.push_back(a);
    }
    if (out.empty())
        error = "cannot resolve " + host +
                ": this static msmon reads IP addresses and /etc/hosts only (no DNS): give the host's address";
#else
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string service = std::to_string(port);
    if (const int rc = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0) {
        error = "cannot resolve " + host + ": " + ::gai_strerror(rc);
        return out;
    }
    for (addrinfo* a = found; a; a = a->ai_next) {
        if (a->ai_addrlen > sizeof(sockaddr_storage)) continue;
        HostAddress h;
        std::memcpy(&h.addr, a->ai_addr, a->ai_addrlen);
        h.len = a->ai_addrlen;
        out.push_back(h);
    }
    ::freeaddrinfo(found);
#endif
    return out;
}

}  // namespace msmon
