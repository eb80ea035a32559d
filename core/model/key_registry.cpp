// Interning with heterogeneous lookup: the hot path (a known tensor) allocates nothing.
#include "core/model/key_registry.hpp"

#include <algorithm>
#include <cstring>

namespace msmon {

KeyRegistry::KeyRegistry(IngestStore& store, const IngestSnapshot& snapshot) : store_(store) {
    for (const auto& r : snapshot.runs) {
        runs_.emplace(r.path, r.id);
        run_info_.emplace(r.id, r);
        ranks_.insert(r.rank);
        next_run_ = std::max(next_run_, r.id + 1);
    }
    rank_count_.store(ranks_.size());
    for (const auto& l : snapshot.layouts) {
        layouts_.emplace(l.ops, l.id);
        layout_ops_.emplace(l.id, l.ops);
        next_layout_ = std::max(next_layout_, l.id + 1);
    }
    for (const auto& t : snapshot.texts) {
        texts_.emplace(t.text, t.id);
        next_text_ = std::max(next_text_, t.id + 1);
    }
    next_tensor_ = snapshot.max_tensor_id + 1;
}

std::int64_t KeyRegistry::run_id(const RunInfo& proto, RecordBatch& batch) {
    if (auto it = runs_.find(proto.path); it != runs_.end()) return it->second;
    RunInfo run = proto;
    run.id = next_run_++;
    runs_.emplace(run.path, run.id);
    run_info_.emplace(run.id, run);
    if (ranks_.insert(run.rank).second) rank_count_.store(ranks_.size(), std::memory_order_relaxed);
    loaded_runs_.insert(run.id);  // a new run has no stored tensors
    batch.new_runs.push_back(std::move(run));
    return batch.new_runs.back().id;
}

void KeyRegistry::append_key(std::string& key, std::int64_t run_id, std::string_view kind, std::string_view vpp,
                             std::string_view name, std::optional<std::int64_t> micro) {
    auto put_bytes = [&key](const void* p, std::size_t n) { key.append(static_cast<const char*>(p), n); };
    auto put_text = [&](std::string_view s) {
        const auto n = static_cast<std::uint32_t>(s.size());
        put_bytes(&n, sizeof n);
        key.append(s);
    };
    put_bytes(&run_id, sizeof run_id);
    put_text(kind);
    put_text(vpp);
    put_text(name);
    const std::int64_t m = micro.value_or(-1);
    const char has = micro ? 1 : 0;
    put_bytes(&has, 1);
    put_bytes(&m, sizeof m);
}

void KeyRegistry::load_run_tensors(std::int64_t run_id) {
    if (!loaded_runs_.insert(run_id).second) return;
    auto stored = store_.load_tensors(run_id);
    std::sort(stored.begin(), stored.end(), [](const TensorInfo& a, const TensorInfo& b) { return a.id < b.id; });
    for (auto& t : stored) {
        t.ordinal = kind_counts_[{t.run_id, t.kind}]++;
        key_.clear();
        append_key(key_, t.run_id, t.kind, t.vpp_stage, t.name, t.micro_step);
        tensors_.emplace(key_, t.id);
        tensor_info_.emplace(t.id, t);
    }
}

std::int64_t KeyRegistry::tensor_id(std::int64_t run_id, std::string_view kind, std::string_view vpp_stage,
                                    std::string_view name, std::optional<std::int64_t> micro_step,
                                    std::int64_t layout_id, RecordBatch& batch) {
    key_.clear();
    append_key(key_, run_id, kind, vpp_stage, name, micro_step);
    if (auto it = tensors_.find(std::string_view(key_)); it != tensors_.end()) return it->second;
    if (!loaded_runs_.count(run_id)) {
        std::string pending = key_;
        load_run_tensors(run_id);
        if (auto it = tensors_.find(std::string_view(pending)); it != tensors_.end()) return it->second;
        key_ = std::move(pending);
    }
    TensorInfo t;
    t.id = next_tensor_++;
    t.run_id = run_id;
    t.kind = std::string(kind);
    t.vpp_stage = std::string(vpp_stage);
    t.name = std::string(name);
    t.micro_step = micro_step;
    t.layout_id = layout_id;
    t.ordinal = kind_counts_[{run_id, t.kind}]++;
    tensors_.emplace(key_, t.id);
    tensor_info_.emplace(t.id, t);
    batch.new_tensors.push_back(std::move(t));
    return batch.new_tensors.back().id;
}

std::int64_t KeyRegistry::layout_id(std::string_view ops, RecordBatch& batch) {
    if (auto it = layouts_.find(ops); it != layouts_.end()) return it->second;
    const std::int64_t id = next_layout_++;
    layouts_.emplace(std::string(ops), id);
    layout_ops_.emplace(id, std::string(ops));
    batch.new_layouts.push_back({id, std::string(ops)});
    return id;
}

std::int64_t KeyRegistry::text_id(std::string_view text, RecordBatch& batch) {
    if (auto it = texts_.find(text); it != texts_.end()) return it->second;
    const std::int64_t id = next_text_++;
    texts_.emplace(std::string(text), id);
    batch.new_texts.push_back({id, std::string(text)});
    return id;
}

}  // namespace msmon

namespace msmon {

std::optional<std::int64_t> KeyRegistry::find_tensor(std::int64_t run_id, std::string_view kind,
                                                     std::string_view vpp_stage, std::string_view name,
                                                     std::optional<std::int64_t> micro_step) const {
    std::string key;
    append_key(key, run_id, kind, vpp_stage, name, micro_step);
    const auto it = tensors_.find(std::string_view(key));
    if (it == tensors_.end()) return std::nullopt;
    return it->second;
}

const TensorInfo* KeyRegistry::tensor(std::int64_t id) const {
    auto it = tensor_info_.find(id);
    return it == tensor_info_.end() ? nullptr : &it->second;
}

const RunInfo* KeyRegistry::run(std::int64_t id) const {
    auto it = run_info_.find(id);
    return it == run_info_.end() ? nullptr : &it->second;
}

std::vector<const RunInfo*> KeyRegistry::runs_with_prefix(std::string_view prefix) const {
    std::vector<const RunInfo*> out;
    for (const auto& [_, r] : run_info_)
        if (std::string_view(r.path).substr(0, prefix.size()) == prefix) out.push_back(&r);
    return out;
}

const std::string* KeyRegistry::layout_ops(std::int64_t id) const {
    auto it = layout_ops_.find(id);
    return it == layout_ops_.end() ? nullptr : &it->second;
}

}  // namespace msmon
