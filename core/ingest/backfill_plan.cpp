// The backlog's reading order (see the header).
#include "core/ingest/backfill_plan.hpp"

#include <algorithm>
#include <map>
#include <queue>
#include <tuple>

namespace msmon {

void BackfillPlan::add_folder(const std::string& dir, std::vector<PlannedFile> files) {
    if (files.empty()) return;
    std::sort(files.begin(), files.end(), [](const PlannedFile& a, const PlannedFile& b) {
        return std::tie(a.order, a.name) < std::tie(b.order, b.name);
    });
    for (const auto& f : files) {
        if (!f.csv_data) continue;
        if (first_step_ < 0 || f.order < first_step_) first_step_ = f.order;
        last_step_ = std::max({last_step_, f.order, f.last_step});
    }
    total_ += files.size();
    Folder folder{dir, std::move(files), {}, 0};
    folder.taken.assign(folder.files.size(), false);
    folders_.push_back(std::move(folder));
}

std::vector<BackfillPlan::Entry> BackfillPlan::take_window() {
    std::vector<Entry> out;
    window_taken_ = true;
    for (auto& f : folders_) {
        std::map<std::string, std::size_t> newest;  // kind → its file of the highest step range
        for (std::size_t i = 0; i < f.files.size(); ++i)
            if (f.files[i].csv_data && !f.taken[i]) newest[f.files[i].kind] = i;  // files are by order
        std::vector<std::size_t> picked;
        for (const auto& [kind, i] : newest) picked.push_back(i);
        std::sort(picked.begin(), picked.end());
        for (std::size_t i : picked) {
            f.taken[i] = true;
            ++fed_;
            out.emplace_back(f.dir, f.files[i].name);
        }
    }
    return out;
}

std::vector<BackfillPlan::Entry> BackfillPlan::take_others() {
    std::vector<Entry> out;
    for (const bool first : {true, false})
        for (auto& f : folders_)
            for (std::size_t i = 0; i < f.files.size(); ++i)
                if (!f.files[i].csv_data && !f.taken[i] && f.files[i].settings_first == first) {
                    f.taken[i] = true;
                    ++fed_;
                    out.emplace_back(f.dir, f.files[i].name);
                }
    return out;
}

void BackfillPlan::skip_taken(Folder& f) const {
    while (f.next < f.files.size() && (f.taken[f.next] || !f.files[f.next].csv_data)) ++f.next;
}

std::vector<BackfillPlan::Entry> BackfillPlan::take_history(std::size_t n) {
    std::vector<Entry> out;
    // A k-way merge of the folders by (block of their next CSV, folder): a block's steps of one folder together, then
    // the next folder's, then the next block. A commit then holds many steps of each tensor, written as one chunk per
    // block (store/sample_chunks.hpp), as a folder read whole would be.
    using Head = std::pair<std::int64_t, std::size_t>;
    std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
    const auto block_of = [](std::int64_t order) { return order >> kBlockShift; };
    for (std::size_t i = 0; i < folders_.size(); ++i) {
        skip_taken(folders_[i]);
        if (folders_[i].next < folders_[i].files.size())
            heads.push({block_of(folders_[i].files[folders_[i].next].order), i});
    }
    while (out.size() < n && !heads.empty()) {
        const auto [block, i] = heads.top();
        heads.pop();
        Folder& f = folders_[i];
        f.taken[f.next] = true;
        ++fed_;
        out.emplace_back(f.dir, f.files[f.next].name);
        skip_taken(f);
        if (f.next < f.files.size()) heads.push({block_of(f.files[f.next].order), i});
    }
    return out;
}

BackfillProgress BackfillPlan::progress() const {
    BackfillProgress p;
    p.active = !done();
    p.files = total_;
    p.files_fed = fed_;
    p.first_step = first_step_;
    p.last_step = last_step_;
    std::optional<std::int64_t> lowest_left;  // the lowest step range start of a CSV not taken yet
    for (const auto& f : folders_) {
        bool csv = false;
        for (std::size_t i = 0; i < f.files.size(); ++i) {
            if (!f.files[i].csv_data) continue;
            csv = true;
            if (f.taken[i]) continue;
            if (!lowest_left || f.files[i].order < *lowest_left) lowest_left = f.files[i].order;
            p.unread_last = std::max({p.unread_last, f.files[i].order, f.files[i].last_step});
        }
        p.folders += csv;
    }
    if (!lowest_left) p.history_through = last_step_;
    else p.history_through = *lowest_left - 1;
    return p;
}

}  // namespace msmon
