// A hostile answer where ClickHouse should be: any local user can listen on 127.0.0.1:8123 while ClickHouse is
// down. A 2 MB gzip body inflating to 2 GB took `msmon query --store` to 4.2 GB; a plain 2 GB body to 2.1 GB. An
// answer is read within 64 MiB as sent and 256 MiB inflated, and the message names the bound and its setting.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>

#include "store/clickhouse/http_client.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

// Answers every request on 127.0.0.1 (a port of its own) with `response`, until destroyed.
class FakeServer {
public:
    explicit FakeServer(std::string response) : response_(std::move(response)) {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sockaddr_in a{};
        a.sin_family = AF_INET;
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof a;
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
            return;
        port_ = ntohs(a.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    ~FakeServer() {
        stop_ = true;
        if (thread_.joinable()) thread_.join();
        ::close(fd_);
    }
    int port() const { return port_; }

private:
    void serve() {
        while (!stop_) {
            pollfd p{fd_, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0) continue;
            const int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
            if (c < 0) continue;
            // The request, to its end (the client shuts its side down once sent), then the answer.
            char buf[65536];
            for (pollfd q{c, POLLIN, 0}; ::poll(&q, 1, 2000) > 0 && ::recv(c, buf, sizeof buf, 0) > 0;) {
            }
            for (std::size_t sent = 0; sent < response_.size() && !stop_;) {
                const ssize_t n = ::send(c, response_.data() + sent, response_.size() - sent, MSG_NOSIGNAL);
                if (n <= 0) break;  // the client stopped reading: what it should do past its bound
                sent += static_cast<std::size_t>(n);
            }
            ::close(c);
        }
    }
    std::string response_;
    int fd_ = -1, port_ = 0;
    std::atomic<bool> stop_{false};
    std::thread thread_;
};

TEST(HostileServer, a_gzip_bomb_or_a_huge_body_is_refused_past_its_bound_naming_the_setting) {
    TempDir tmp;
    const auto env = isolated_env(tmp);
    // 300 MiB of zeros, gzipped to a few hundred KB: past the 256 MiB bound once inflated.
    const std::string bomb = gzip_compress(std::string(300u << 20, '\0'), 9);
    ASSERT_LT(bomb.size(), 2u << 20);
    const std::string gzip_answer =
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + std::to_string(bomb.size()) + "\r\n\r\n" +
        bomb;
    // 80 MiB sent as it is: past the 64 MiB bound on an answer.
    const std::string plain_answer =
        "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(80u << 20) + "\r\n\r\n" + std::string(80u << 20, 'x');
    for (const auto& [answer, said] :
         {std::pair<const std::string&, std::string>{
              gzip_answer,
              "larger than 256 MiB inflated (the limit limits.clickhouse_inflated_mib in msmon's settings)"},
          {plain_answer, "larger than 64 MiB as sent (the limit limits.clickhouse_answer_mib in msmon's settings)"}}) {
        FakeServer server(answer);
        ASSERT_GT(server.port(), 0);
        Background query({program("msmon"), "query", "--store",
                          "clickhouse://127.0.0.1:" + std::to_string(server.port()) + "/msmon", "--job", "j"},
                         tmp.path(), env);
        EXPECT_EQ(query.wait(std::chrono::seconds(60)), 1) << query.err();
        EXPECT_NE(query.err().find(said), std::string::npos) << query.err();
    }
}

}  // namespace
}  // namespace msmon::test
