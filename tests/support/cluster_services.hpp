// Services the whole-job tests start for themselves on loopback, each on a free port with its own temp folder
// (never the system's service): a ClickHouse server and a Prometheus node_exporter.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "store/clickhouse/clickhouse_client.hpp"
#include "tests/support/test_env.hpp"

namespace msmon::test {

// The full path of an installed program (PATH, then /usr/sbin and /usr/bin), or empty.
std::string find_installed(const std::string& name);

// `msmon ingest --follow` of node_dir/job into node_dir/store.db, shipping to `url` as job `job`, node "node<N>",
// every `interval_ms`: the agent each simulated node runs.
std::vector<std::string> agent_args(const std::string& node_dir, const std::string& url, const std::string& job,
                                    int node, int interval_ms);

// A TCP port nothing listens on right now (bound and released).
int free_port();

class ClickHouseTestServer {
public:
    // Writes a config under `dir` and starts the server; ready() tells whether it answered within 60 s.
    explicit ClickHouseTestServer(const std::string& dir);
    bool ready() const { return ready_; }
    int http_port() const { return http_port_; }
    std::string url(const std::string& database) const;
    ClickHouseTarget target(const std::string& database) const;
    // One value of a SELECT as text (trimmed).
    std::string scalar(const std::string& sql) const;
    void kill();  // SIGKILL, as a crash or an OOM kill would
    // SIGSTOP: a server that stopped answering (connections are still taken, nothing is answered); SIGCONT again.
    void signal(int sig);
    bool start();  // (again) on the same ports and data; true once it answers
    std::string log() const;

private:
    std::string dir_;
    int http_port_ = 0, tcp_port_ = 0;
    std::unique_ptr<Background> process_;
    bool ready_ = false;
};

class NodeExporterTestServer {
public:
    // Serves only the textfile collector over `textfile_dir`.
    explicit NodeExporterTestServer(const std::string& textfile_dir, const std::string& log_dir);
    bool ready() const { return ready_; }
    // GET /metrics: the body, or empty.
    std::string metrics() const;

private:
    int port_ = 0;
    std::unique_ptr<Background> process_;
    bool ready_ = false;
};

}  // namespace msmon::test
