// The addresses to connect to for a host name. The usual build asks the resolver (getaddrinfo: /etc/hosts, DNS,
// whatever NSS is set up for). A static build (MSMON_NO_NSS) loads no NSS module, so it reads IP addresses and
// /etc/hosts itself and says so for any other name.
#pragma once

#include <sys/socket.h>

#include <string>
#include <vector>

namespace msmon {

struct HostAddress {
    sockaddr_storage addr{};
    socklen_t len = 0;
};

// Empty with `error` set when the name resolves to nothing.
std::vector<HostAddress> resolve_host(const std::string& host, int port, std::string& error);

// The addresses an /etc/hosts text gives `host` ("ADDRESS NAME [ALIAS...]" lines, '#' comments, names compared
// without case), in file order: what a static build resolves a name with.
std::vector<std::string> hosts_file_addresses(const std::string& text, const std::string& host);

}  // namespace msmon
