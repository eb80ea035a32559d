// The spool's per-node details beside the values: parse issues, the file count, module structure and stacks.
#include <map>
#include <utility>

#include "core/tail/file_tailer.hpp"
#include "store/ship_spool.hpp"

namespace msmon {

std::vector<SpoolIssue> ShipSpool::issues_after(std::int64_t after_id, std::size_t limit) {
    std::vector<SpoolIssue> out;
    // LEFT JOIN: an issue whose file row was replaced still ships (with no path) rather than never.
    Statement q(read_,
                "SELECT i.id, coalesce(f.path, ''), i.line, i.reason, i.excerpt FROM parse_issue i LEFT JOIN "
                "file f ON f.id = i.file_id WHERE i.id > ? ORDER BY i.id LIMIT ?");
    q.bind(1, after_id);
    q.bind(2, static_cast<std::int64_t>(limit));
    while (q.step()) out.push_back({q.int64(0), {q.text(1), q.int64(2), q.text(3), q.text(4)}});
    return out;
}

std::int64_t ShipSpool::file_count() {
    Statement q(read_, "SELECT count(*) FROM file");
    q.step();
    return q.int64(0);
}

std::vector<SpoolModule> ShipSpool::modules(std::uint64_t& hash) {
    read_.exec("BEGIN");  // one snapshot: structures and stacks agree
    struct Guard {
        Connection& c;
        ~Guard() { sqlite3_exec(c.raw(), "COMMIT", nullptr, nullptr, nullptr); }
    } guard{read_};
    std::map<std::pair<int, std::string>, SpoolModule> by_key;
    auto at = [&](int rank, std::string module) -> SpoolModule& {
        SpoolModule& m = by_key[{rank, module}];
        m.rank = rank;
        m.module = std::move(module);
        return m;
    };
    Statement structs(read_, "SELECT rank, module, json FROM module_struct");
    while (structs.step()) at(static_cast<int>(structs.int64(0)), structs.text(1)).structure = structs.text(2);
    // Runs in descending id order: a rank's first run's stack is written last and wins.
    Statement stacks(read_,
                     "SELECT r.rank, s.module, s.stack FROM stack_info s JOIN run r ON r.id = s.run_id ORDER BY "
                     "s.run_id DESC");
    while (stacks.step()) at(static_cast<int>(stacks.int64(0)), stacks.text(1)).stack = stacks.text(2);
    std::vector<SpoolModule> out;
    out.reserve(by_key.size());
    std::uint64_t h = fingerprint_hash("", 0);
    for (auto& [key, m] : by_key) {
        const std::string rank = std::to_string(m.rank);
        const std::string* const fields[] = {&rank, &m.module, &m.structure, &m.stack};
        for (const std::string* field : fields) {
            const std::uint64_t size = field->size();  // sized: no two different lists hash the same bytes
            h = fingerprint_extend(h, reinterpret_cast<const char*>(&size), sizeof size);
            h = fingerprint_extend(h, field->data(), field->size());
        }
        out.push_back(std::move(m));
    }
    hash = h & 0x7fffffffffffffffull;
    return out;
}

}  // namespace msmon
