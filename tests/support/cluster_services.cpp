// ClickHouse 18.16 starts in about a second with a minimal config: ports, paths under the test folder, one
// user.
#include "tests/support/cluster_services.hpp"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <thread>

#include "store/clickhouse/http_client.hpp"

namespace msmon::test {

std::vector<std::string> agent_args(const std::string& node_dir, const std::string& url, const std::string& job,
                                    int node, int interval_ms) {
    return {program("msmon"),
            "ingest",
            node_dir + "/job",
            "--follow",
            "--db",
            node_dir + "/store.db",
            "--sink",
            url,
            "--job",
            job,
            "--node",
            "node" + std::to_string(node),
            "--sink-interval-ms",
            std::to_string(interval_ms)};
}

std::string find_installed(const std::string& name) {
    std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
    path += ":/usr/sbin:/usr/bin:/sbin:/bin";
    for (std::size_t start = 0; start <= path.size();) {
        auto colon = path.find(':', start);
        const std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
        const std::string candidate = dir + "/" + name;
        if (!dir.empty() && ::access(candidate.c_str(), X_OK) == 0) return candidate;
        if (colon == std::string::npos) break;
        start = colon + 1;
    }
    return {};
}

int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    socklen_t len = sizeof a;
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

ClickHouseTestServer::ClickHouseTestServer(const std::string& dir) : dir_(dir) {
    http_port_ = free_port();
    tcp_port_ = free_port();
    std::filesystem::create_directories(dir_ + "/data");
    write_file(dir_ + "/config.xml",
               "<?xml version=\"1.0\"?>\n<yandex>\n"
               "  <logger><level>information</level><log>" +
                   dir_ + "/server.log</log><errorlog>" + dir_ +
                   "/server.err.log</errorlog><console>0</console></logger>\n"
                   "  <http_port>" +
                   std::to_string(http_port_) +
                   "</http_port>\n"
                   "  <tcp_port>" +
                   std::to_string(tcp_port_) +
                   "</tcp_port>\n"
                   "  <listen_host>127.0.0.1</listen_host>\n"
                   "  <path>" +
                   dir_ + "/data/</path>\n  <tmp_path>" + dir_ +
                   "/data/tmp/</tmp_path>\n"
                   "  <user_files_path>" +
                   dir_ +
                   "/data/user_files/</user_files_path>\n"
                   "  <format_schema_path>" +
                   dir_ +
                   "/data/format_schemas/</format_schema_path>\n"
                   "  <users_config>" +
                   dir_ +
                   "/users.xml</users_config>\n"
                   "  <default_profile>default</default_profile>\n  <default_database>default</default_database>\n"
                   "  <mark_cache_size>67108864</mark_cache_size>\n"
                   "  <uncompressed_cache_size>67108864</uncompressed_cache_size>\n"
                   "</yandex>\n");
    write_file(dir_ + "/users.xml",
               "<?xml version=\"1.0\"?>\n<yandex>\n"
               // ClickHouse's own default limit: a read with FINAL over the parts a test leaves unmerged needs more
               // than 2 GB of buffers (the cluster test's reads hit that limit).
               "  <profiles><default><max_memory_usage>10000000000</max_memory_usage></default></profiles>\n"
               "  <users><default><password></password><networks><ip>127.0.0.1</ip></networks>"
               "<profile>default</profile><quota>default</quota></default></users>\n"
               "  <quotas><default></default></quotas>\n</yandex>\n");
    ready_ = start();
}

std::string ClickHouseTestServer::url(const std::string& database) const {
    return "clickhouse://127.0.0.1:" + std::to_string(http_port_) + "/" + database;
}

ClickHouseTarget ClickHouseTestServer::target(const std::string& database) const {
    return {"127.0.0.1", http_port_, database};
}

std::string ClickHouseTestServer::scalar(const std::string& sql) const {
    std::string out = ClickHouseClient(target("default")).query(sql);
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
}

void ClickHouseTestServer::kill() {
    if (!process_) return;
    process_->signal(SIGKILL);
    process_->wait(std::chrono::seconds(30));
    process_.reset();
}

void ClickHouseTestServer::signal(int sig) {
    if (process_) process_->signal(sig);
}

bool ClickHouseTestServer::start() {
    const std::string binary = find_installed("clickhouse-server");
    process_ =
        std::make_unique<Background>(std::vector<std::string>{binary, "--config-file=" + dir_ + "/config.xml"}, dir_);
    const HttpClient http("127.0.0.1", http_port_, std::chrono::milliseconds(1000));
    return wait_until([&] { return http.get("/").body == "Ok.\n"; }, std::chrono::seconds(60)).count() >= 0;
}

std::string ClickHouseTestServer::log() const {
    return read_file(dir_ + "/server.err.log");
}

NodeExporterTestServer::NodeExporterTestServer(const std::string& textfile_dir, const std::string& log_dir) {
    port_ = free_port();
    const std::string binary = find_installed("prometheus-node-exporter");
    process_ = std::make_unique<Background>(
        std::vector<std::string>{binary, "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                                 "--collector.disable-defaults", "--collector.textfile",
                                 "--collector.textfile.directory=" + textfile_dir},
        log_dir);
    ready_ = wait_until([&] { return !metrics().empty(); }, std::chrono::seconds(30)).count() >= 0;
}

std::string NodeExporterTestServer::metrics() const {
    const HttpResponse r = HttpClient("127.0.0.1", port_, std::chrono::milliseconds(2000)).get("/metrics");
    return r.status == 200 ? r.body : std::string();
}

}  // namespace msmon::test
