// How a ClickHouse host name becomes addresses: an address as written, /etc/hosts as a static build reads it.
#include "store/clickhouse/host_addresses.hpp"

#include <gtest/gtest.h>
#include <netinet/in.h>

namespace msmon {
namespace {

TEST(HostAddresses, an_etc_hosts_text_gives_a_names_addresses_in_order) {
    const std::string hosts =
        "127.0.0.1\tlocalhost\n"
        "# 10.0.0.9 ch-node   (a comment)\n"
        "10.0.0.5   ch-node ch-node.cluster   # the ClickHouse node\n"
        "fe80::1%eth0 other\n"
        "fd00::5 CH-NODE\n"
        "   \n";
    EXPECT_EQ(hosts_file_addresses(hosts, "ch-node"), (std::vector<std::string>{"10.0.0.5", "fd00::5"}));
    EXPECT_EQ(hosts_file_addresses(hosts, "ch-node.cluster"), (std::vector<std::string>{"10.0.0.5"}));
    EXPECT_TRUE(hosts_file_addresses(hosts, "ch").empty());
    EXPECT_TRUE(hosts_file_addresses(hosts, "comment").empty());
}

TEST(HostAddresses, an_address_as_written_needs_no_resolver) {
    std::string error;
    auto v4 = resolve_host("10.1.2.3", 8123, error);
    ASSERT_EQ(v4.size(), 1u) << error;
    EXPECT_EQ(reinterpret_cast<const sockaddr_in*>(&v4[0].addr)->sin_family, AF_INET);
    EXPECT_EQ(ntohs(reinterpret_cast<const sockaddr_in*>(&v4[0].addr)->sin_port), 8123);
    auto v6 = resolve_host("[::1]", 9000, error);
    ASSERT_EQ(v6.size(), 1u) << error;
    EXPECT_EQ(reinterpret_cast<const sockaddr_in6*>(&v6[0].addr)->sin6_family, AF_INET6);
}

}  // namespace
}  // namespace msmon
