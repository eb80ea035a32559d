// The backlog's reading order (see the header).
#include "core/ingest/backfill_plan.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace msmon {

std::uint16_t BackfillPlan::kind_index(const std::string& kind) {
    for (std::size_t i = 0; i < kinds_.size(); ++i)
        if (kinds_[i] == kind) return static_cast<std::uint16_t>(i);
    kinds_.push_back(kind);
    return static_cast<std::uint16_t>(kinds_.size() - 1);
}

void BackfillPlan::add_folder(const std::string& dir, std::vector<PlannedFile> files) {
    if (files.empty()) return;
    std::sort(files.begin(), files.end(), [](const PlannedFile& a, const PlannedFile& b) {
        return std::tie(a.order, a.name) < std::tie(b.order, b.name);
    });
    Folder folder;
    folder.dir = dir;
    folder.files.reserve(files.size());
    for (const auto& f : files) {
        Slot slot;
        slot.order = f.order;
        slot.last_step = f.last_step;
        slot.settings_first = f.settings_first;
        if (f.csv_data) slot.kind = kind_index(f.kind);
        slot.named_by_range = f.csv_data && range_name(slot) == f.name;
        if (!slot.named_by_range) {
            slot.name_at = static_cast<std::uint32_t>(folder.names.size());
            slot.name_len = static_cast<std::uint16_t>(std::min<std::size_t>(f.name.size(), 0xFFFF));
            folder.names.append(f.name, 0, slot.name_len);
        }
        if (f.csv_data) {
            folder.has_csv = true;
            if (first_step_ < 0 || f.order < first_step_) first_step_ = f.order;
            last_step_ = std::max({last_step_, f.order, f.last_step});
        }
        folder.files.push_back(slot);
    }
    folder.names.shrink_to_fit();
    folder.top = folder.files.size();
    total_ += files.size();
    folders_.push_back(std::move(folder));
}

std::string BackfillPlan::range_name(const Slot& s) const {
    return kinds_[s.kind] + "_" + std::to_string(s.order) + "-" + std::to_string(s.last_step) + ".csv";
}

BackfillPlan::Entry BackfillPlan::take(Folder& f, std::size_t i) {
    const Slot& s = f.files[i];
    f.files[i].taken = true;
    ++fed_;
    return {f.dir, s.named_by_range ? range_name(s) : f.names.substr(s.name_at, s.name_len)};
}

std::vector<BackfillPlan::Entry> BackfillPlan::take_window() {
    std::vector<Entry> out;
    for (auto& f : folders_) {
        std::map<std::uint16_t, std::size_t> newest;  // kind → its file of the highest step range
        for (std::size_t i = 0; i < f.files.size(); ++i)
            if (f.files[i].csv() && !f.files[i].taken) newest[f.files[i].kind] = i;  // files are by order
        std::vector<std::size_t> picked;
        for (const auto& [kind, i] : newest) picked.push_back(i);
        std::sort(picked.begin(), picked.end());
        for (std::size_t i : picked) out.push_back(take(f, i));
    }
    return out;
}

std::vector<BackfillPlan::Entry> BackfillPlan::take_others() {
    std::vector<Entry> out;
    for (const bool first : {true, false})
        for (auto& f : folders_)
            for (std::size_t i = 0; i < f.files.size(); ++i)
                if (!f.files[i].csv() && !f.files[i].taken && f.files[i].settings_first == first)
                    out.push_back(take(f, i));
    return out;
}

void BackfillPlan::skip_taken(Folder& f) {
    while (f.next < f.files.size() && (f.files[f.next].taken || !f.files[f.next].csv())) ++f.next;
}

std::vector<BackfillPlan::Entry> BackfillPlan::take_history(std::size_t n, bool* part_done) {
    std::vector<Entry> out;
    if (part_done) *part_done = false;
    // The lowest (block of its next CSV, folder): a block's steps of one folder together (a part), then the next
    // folder's, then the next block. A commit then holds many steps of each tensor, written as one chunk per block
    // (store/sample_chunks.hpp), as a folder read whole would be.
    const auto block_of = [](std::int64_t order) { return order >> kBlockShift; };
    Folder* head = nullptr;
    std::int64_t head_block = 0;
    for (auto& f : folders_) {
        skip_taken(f);
        if (f.next >= f.files.size()) continue;
        const std::int64_t b = block_of(f.files[f.next].order);
        if (!head || b < head_block) {
            head = &f;
            head_block = b;
        }
    }
    if (!head) {
        if (part_done) *part_done = true;
        return out;
    }
    while (out.size() < n) {
        out.push_back(take(*head, head->next));
        skip_taken(*head);
        if (head->next >= head->files.size() || block_of(head->files[head->next].order) != head_block) {
            if (part_done) *part_done = true;
            break;
        }
    }
    return out;
}

// O(folders): each folder's lowest CSV not taken is at `next` (the history takes them in order; the window takes
// only the highest), and its highest at `top`, which only moves down.
BackfillProgress BackfillPlan::progress() {
    BackfillProgress p;
    p.active = !done();
    p.files = total_;
    p.files_fed = fed_;
    p.first_step = first_step_;
    p.last_step = last_step_;
    std::optional<std::int64_t> lowest_left;  // the lowest step range start of a CSV not taken yet
    for (auto& f : folders_) {
        if (!f.has_csv) continue;
        ++p.folders;
        skip_taken(f);  // the cursors only pass what is taken: what the plan holds is the same
        while (f.top > f.next && (f.files[f.top - 1].taken || !f.files[f.top - 1].csv())) --f.top;
        if (f.next >= f.files.size()) continue;
        if (!lowest_left || f.files[f.next].order < *lowest_left) lowest_left = f.files[f.next].order;
        const Slot& last = f.files[f.top - 1];
        p.unread_last = std::max({p.unread_last, last.order, last.last_step});
    }
    if (!lowest_left) p.history_through = last_step_;
    else p.history_through = *lowest_left - 1;
    return p;
}

}  // namespace msmon
