// Detectors over each batch: msprobe-compatible rules (exact EMA state, persisted per tensor), msmon's default
// checks (non-finite, jumps; core/detect/series_checks), MindFormers global-norm spikes and embedding norm,
// cross-rank outliers (log|x| against the ranks' usual spread), stalled ranks (core/detect/stall_watch).
#include "core/detect/detector_set.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <tuple>

#include "core/detect/anomaly_builder.hpp"
#include "core/detect/layout_ops.hpp"
#include "core/text/json_depth.hpp"
#include "core/text/key_values.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

std::int64_t vpp_number(const std::string& vpp) {
    return parse_int(vpp).value_or(0);
}

constexpr const char* kFoldSetting = "finding_fold_pending";

void put_setting(RecordBatch& batch, const char* key, std::string value) {
    for (auto& [k, v] : batch.settings)
        if (k == key) {
            v = std::move(value);
            return;
        }
    batch.settings.emplace_back(key, std::move(value));
}

}  // namespace

DetectorSet::DetectorSet(IngestStore& store, KeyRegistry& keys, DetectorOptions options,
                         const std::vector<std::pair<std::string, std::string>>& settings, RecordBatch& batch,
                         std::function<void(const std::string&)> notice)
    : store_(store), keys_(keys), options_(std::move(options)), notice_(std::move(notice)) {
    for (const auto& [k, v] : settings) {
        thresholds_.learn(k, v);
        if (k == kThresholdsUsedSetting) thresholds_used_ = v;
        if (k == CrossRankCheck::kSetting) cross_.restore(v);
        if (k == kFoldSetting && !fold_.decode(v)) notice_("saved detector findings are unreadable; they are dropped");
    }
    learn_thresholds(batch);  // the flags of this session
    std::optional<std::string> config = options_.monitor_config_text;
    if (config) {
        batch.settings.emplace_back("monitor_config", *config);
    } else {
        for (const auto& [k, v] : settings)
            if (k == "monitor_config") config = v;
    }
    if (!config) return;
    if (!json_depth_within(*config)) {
        error_ = "monitor config is nested deeper than " + std::to_string(kMaxJsonDepth) + " levels";
        return;
    }
    try {
        rules_ = MsprobeAlertRules::from_config(nlohmann::json::parse(*config), error_);
        if (rules_)
            for (const auto& w : rules_->warnings) notice_("monitor config: " + w);
    } catch (const nlohmann::json::exception& e) {
        error_ = std::string("monitor config is not valid JSON: ") + e.what();
    }
}

bool DetectorSet::ok(std::string& error) const {
    if (error_.empty()) return true;
    error = error_;
    return false;
}

std::string DetectorSet::encode(const TensorState& s) {
    std::string out = "last=" + std::to_string(s.last_step) + ";spike=" + std::to_string(s.spike_count) + ";ema=";
    for (std::size_t k = 0; k < s.ops.size(); ++k) {
        if (k) out += ',';
        out += s.ops[k].seeded() ? format_double(s.ops[k].average()) : std::string("-");
    }
    if (!s.held_params.empty()) out += ";param=" + encode_held_params(s.held_params);
    return out + "|" + s.checks.encode();
}

DetectorSet::TensorState DetectorSet::decode(const std::string& text) {
    TensorState s;
    const auto bar = text.find('|');
    if (bar != std::string::npos) s.checks = SeriesCheckState::decode(std::string_view(text).substr(bar + 1));
    std::string_view rest = std::string_view(text).substr(0, bar);
    for_each_key_value(rest, [&](std::string_view key, std::string_view value) {
        if (key == "last") s.last_step = parse_int(value).value_or(-1);
        else if (key == "spike") s.spike_count = parse_int(value).value_or(0);
        else if (key == "param") s.held_params = decode_held_params(value);
        else if (key == "ema") {
            std::string_view list = value;
            while (!list.empty()) {
                const auto comma = list.find(',');
                const std::string_view v = list.substr(0, comma);
                list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
                MsprobeSeriesState st;
                if (v != "-") st.restore(parse_double(v).value_or(std::nan("")));
                s.ops.push_back(st);
            }
        }
    });
    return s;
}

void DetectorSet::load_states(const RecordBatch& batch) {
    std::vector<std::int64_t> unknown;
    std::int64_t previous = -1;
    for (const auto& row : batch.rows) {
        if (row.tensor_id == previous) continue;
        previous = row.tensor_id;
        if (!states_.count(row.tensor_id)) unknown.push_back(row.tensor_id);
    }
    if (unknown.empty()) return;
    for (const auto& rec : store_.load_detector_states(unknown)) states_[rec.tensor_id] = decode(rec.state);
    for (auto id : unknown) states_.try_emplace(id);
}

ReadProgress DetectorSet::read_progress(Clock::time_point quiet_at) const {
    ReadProgress p;
    p.quiet_at = quiet_at;
    p.held_from_step = fold_.oldest_step();
    for (const auto& [rank, step] : newest_by_rank_) p.all_ranks_at = std::min(p.all_ranks_at, step);
    return p;
}

DetectorSet::TensorState& DetectorSet::state_of(std::int64_t tensor_id) {
    return states_[tensor_id];
}

void DetectorSet::msprobe_compat(const SampleRow& row, const TensorInfo& t, const RunInfo& run, TensorState& st,
                                 RecordBatch& batch) {
    const std::string* layout = keys_.layout_ops(row.layout_id);
    if (!layout) return;
    const auto ops = numeric_ops(*layout);
    if (st.ops.size() < ops.size()) st.ops.resize(ops.size());
    const std::string tag = msprobe_tag_name(t.kind, t.vpp_stage, t.name, t.micro_step, run.rank);
    for (std::size_t k = 0; k < ops.size() && static_cast<int>(k) < row.value_count; ++k) {
        auto finding = st.ops[k].observe(*rules_, ops[k], row.values[k]);
        if (!finding) continue;
        std::string message = "Rule " + std::string(rule_name(finding->rule)) + " reports anomaly signal in ('" + tag +
                              "', '" + ops[k] + "') at step " + std::to_string(row.step) + ", current value " +
                              python_float_repr(finding->value) + ", history mean " +
                              python_float_repr(finding->history) + ".";
        auto a = detected_anomaly(finding->rule,
                                  {.rank = run.rank,
                                   .step = row.step,
                                   .micro_step = t.micro_step,
                                   .kind = t.kind,
                                   .vpp_stage = t.vpp_stage,
                                   .name = t.name,
                                   .op = ops[k],
                                   .value = finding->value,
                                   .reference = finding->history,
                                   .pp_stage = run.rank,
                                   .vpp = vpp_number(t.vpp_stage),
                                   .tag_name = tag},
                                  std::move(message));
        batch.anomalies.push_back(std::move(a));
    }
}

const CheckSlots& DetectorSet::slots_of(std::int32_t layout_id) {
    auto it = slots_.find(layout_id);
    if (it != slots_.end()) return it->second;
    const std::string* layout = keys_.layout_ops(layout_id);
    return slots_[layout_id] = layout ? CheckSlots::from_ops(numeric_ops(*layout)) : CheckSlots{};
}

void DetectorSet::default_checks(const SampleRow& row, const TensorInfo& t, const RunInfo& run, TensorState& st) {
    // TensorBoard's "<metric> vs samples" repeats a step series on a samples axis: the same events again.
    if (t.kind.ends_with("_vs_samples")) return;
    const bool scalar = run.format == "mindformers";
    const CheckSlots slots = scalar ? CheckSlots::scalar() : slots_of(row.layout_id);
    auto finding = [&](Rule rule, std::string op, double value, std::optional<double> reference, double ratio) {
        SeriesFinding f;
        f.rule = rule;
        f.rank = run.rank;
        f.step = row.step;
        f.order = t.ordinal;
        f.kind = t.kind;
        f.vpp_stage = t.vpp_stage;
        f.name = t.name;
        f.micro_step = t.micro_step;
        f.op = std::move(op);
        f.value = value;
        f.reference = reference;
        f.ratio = ratio;
        fold_.add(std::move(f));
    };
    auto op_name = [&](int slot) -> std::string {
        if (scalar) return "value";
        const std::string* layout = keys_.layout_ops(row.layout_id);
        const auto ops = layout ? numeric_ops(*layout) : std::vector<std::string>{};
        return slot >= 0 && static_cast<std::size_t>(slot) < ops.size() ? ops[static_cast<std::size_t>(slot)] : "value";
    };
    if (auto nf = st.checks.check_non_finite(slots, row.values, scalar ? 1 : row.value_count))
        finding(Rule::NonFinite, op_name(nf->slot), nf->value, nf->previous, 1);
    // A module's outputs all zero from one step on: it died (forward activations only).
    if (t.kind == "actv")
        if (auto before = st.checks.check_dead(slots, row.values, row.value_count))
            finding(Rule::DeadLayer, "zeros", row.values[slots.zeros], *before, 1);
    const bool jumps = !scalar || t.kind == "loss" || t.kind == "global_norm";
    if (jumps && slots.norm >= 0 && slots.norm < (scalar ? 1 : row.value_count)) {
        if (auto j = st.checks.check_jump(options_.series, row.values[slots.norm]))
            finding(Rule::Jump, scalar ? "value" : "norm", j->value, j->median, j->ratio);
        // Adam's moments grow for ~1/(1-beta2) steps from zero by design: their early level is no baseline.
        if (t.kind != "exp_avg" && t.kind != "exp_avg_sq")
            if (auto d = st.checks.check_drift(options_.series))
                finding(Rule::Drift, scalar ? "value" : "norm", d->value, d->median, d->ratio);
    }
}

void DetectorSet::pair_params(const RecordBatch& batch, const std::vector<std::size_t>& rows) {
    // The batch's param rows by the parameter they describe; each side's rows by step, held ones first (a row
    // read again replaces its earlier reading).
    struct Side {
        std::optional<std::int64_t> tensor;
        std::map<std::int64_t, HeldParamRow> rows;
    };
    struct Pair {
        const TensorInfo* t = nullptr;
        int rank = 0;
        Side origin, updated;
    };
    std::map<std::tuple<std::int64_t, std::string, std::string, std::int64_t>, Pair> pairs;
    for (std::size_t i : rows) {
        const SampleRow& row = batch.rows[i];
        const TensorInfo* t = keys_.tensor(row.tensor_id);
        const RunInfo* run = t ? keys_.run(t->run_id) : nullptr;
        if (!t || !run) continue;
        Pair& p = pairs[{t->run_id, t->vpp_stage, t->name, t->micro_step.value_or(-1)}];
        p.t = t;
        p.rank = run->rank;
        Side& side = t->kind == "param_origin" ? p.origin : p.updated;
        side.tensor = row.tensor_id;
        side.rows[row.step] =
            HeldParamRow{row.step, row.layout_id,
                         std::vector<double>(row.values, row.values + std::max<std::int32_t>(0, row.value_count))};
    }
    // The partners not in this batch: their states in one read.
    std::vector<std::int64_t> unknown;
    for (auto& [_, p] : pairs)
        for (Side* side : {&p.origin, &p.updated}) {
            const char* kind = side == &p.origin ? "param_origin" : "param_updated";
            if (!side->tensor)
                side->tensor = keys_.find_tensor(p.t->run_id, kind, p.t->vpp_stage, p.t->name, p.t->micro_step);
            if (side->tensor && !states_.count(*side->tensor)) unknown.push_back(*side->tensor);
        }
    if (!unknown.empty())
        for (const auto& rec : store_.load_detector_states(unknown)) states_[rec.tensor_id] = decode(rec.state);
    for (auto& [_, p] : pairs) {
        const TensorInfo& t = *p.t;
        for (Side* side : {&p.origin, &p.updated})
            if (side->tensor)
                for (auto& h : states_[*side->tensor].held_params) side->rows.try_emplace(h.step, std::move(h));
        // param_origin(s) pairs with param_updated(s - 1), and with nothing else.
        for (auto o = p.origin.rows.begin(); o != p.origin.rows.end();) {
            const auto u = o->first > std::numeric_limits<std::int64_t>::min() ? p.updated.rows.find(o->first - 1)
                                                                               : p.updated.rows.end();
            if (u == p.updated.rows.end()) {
                ++o;
                continue;
            }
            const std::string* origin_layout = keys_.layout_ops(o->second.layout_id);
            const std::string* updated_layout = keys_.layout_ops(u->second.layout_id);
            if (origin_layout && updated_layout)
                if (auto b = compare_param_rows(numeric_ops(*updated_layout), u->second.values,
                                                numeric_ops(*origin_layout), o->second.values)) {
                    const TensorInfo* origin_tensor = p.origin.tensor ? keys_.tensor(*p.origin.tensor) : nullptr;
                    SeriesFinding f;
                    f.rule = Rule::ContinuityBreak;
                    f.rank = p.rank;
                    f.step = o->first;
                    f.order = origin_tensor ? origin_tensor->ordinal : t.ordinal;
                    f.kind = "param_origin";
                    f.vpp_stage = t.vpp_stage;
                    f.name = t.name;
                    f.micro_step = t.micro_step;
                    f.op = b->op;
                    f.value = b->origin;
                    f.reference = b->updated;
                    const double ratio = b->updated != 0 ? b->origin / b->updated : 0;
                    f.ratio = std::isfinite(ratio) && ratio > 0 ? ratio : 1;
                    fold_.add(std::move(f));
                }
            p.updated.rows.erase(u);
            o = p.origin.rows.erase(o);
        }
        // What may still pair: rows whose partner step has not been seen yet (files are read in step order, so
        // these are the last few).
        const auto last_step = [&](const Side& s) {
            return s.tensor && states_.count(*s.tensor) ? states_[*s.tensor].last_step : std::int64_t{-1};
        };
        const std::int64_t origin_last = last_step(p.origin), updated_last = last_step(p.updated);
        const bool both = p.origin.tensor && p.updated.tensor;
        for (Side* side : {&p.origin, &p.updated}) {
            if (!side->tensor) continue;
            auto& held = states_[*side->tensor].held_params;
            held.clear();
            for (auto& [step, row] : side->rows) {
                const bool origin = side == &p.origin;
                if (origin ? step - 1 > updated_last : step + 1 > origin_last)
                    hold_param_row(held, std::move(row), both ? kMaxHeldParamRows : kMaxHeldParamRowsAlone);
            }
            touched_.push_back(*side->tensor);
        }
    }
}

void DetectorSet::mindformers_checks(const SampleRow& row, const TensorInfo& t, const RunInfo& run, TensorState& st,
                                     RecordBatch& batch) {
    const double v = row.values[0];
    auto emit = [&](Rule rule, double reference, std::string message) {
        batch.anomalies.push_back(detected_anomaly(rule,
                                                   {.rank = run.rank,
                                                    .step = row.step,
                                                    .kind = t.kind,
                                                    .name = t.name,
                                                    .op = "value",
                                                    .value = v,
                                                    .reference = reference},
                                                   std::move(message)));
    };
    if (const auto spike = thresholds_.spike(); t.kind == "global_norm" && spike) {
        const double threshold = *spike;
        if (v >= threshold || std::isnan(v)) {
            ++st.spike_count;
            // Nothing here depends on when the job's thresholds were read (a restarted or a clean ingest reads its
            // files in another order): the threshold's source and the count that stops the job are in msmon health.
            emit(Rule::GlobalNormSpike, threshold,
                 "global norm " + format_short(v) + " at step " + std::to_string(row.step) +
                     " is above the threshold " + format_short(threshold) + ": spike " +
                     std::to_string(st.spike_count) +
                     " in a row (with data skip on, MindFormers skips this step's update and stops the job at its "
                     "count threshold)");
        } else {
            st.spike_count = 0;
        }
    } else if (const auto embedding = thresholds_.embedding();
               t.kind == "embedding_local_norm" && embedding && v >= *embedding) {
        emit(Rule::EmbeddingNormHigh, *embedding,
             "embedding local norm " + format_short(v) + " at step " + std::to_string(row.step) +
                 " is at or above the threshold " + format_short(*embedding) +
                 ": the checkpoint saved at this step will be marked unhealthy");
    }
}

void DetectorSet::learn_thresholds(RecordBatch& batch) {
    bool learned = false;
    for (const auto& [k, v] : batch.settings) learned = thresholds_.learn(k, v) || learned;
    // What the readers put in is replaced by what is learned over every batch: the store keeps the same place
    // named however the files were read (job_thresholds.cpp).
    std::erase_if(batch.settings, [](const auto& kv) { return kv.first.rfind(kJobThresholdSetting, 0) == 0; });
    if (learned)
        for (auto& [k, v] : thresholds_.settings()) batch.settings.emplace_back(std::move(k), std::move(v));
    std::string used = encode_threshold_uses(thresholds_.uses());
    if (used != thresholds_used_) {
        thresholds_used_ = used;
        put_setting(batch, kThresholdsUsedSetting, std::move(used));
    }
}

void DetectorSet::save_cross(RecordBatch& batch) {
    if (auto state = cross_.take_changed_state()) put_setting(batch, CrossRankCheck::kSetting, std::move(*state));
}

void DetectorSet::observe(RecordBatch& batch) {
    learn_thresholds(batch);
    if (batch.rows.empty()) return;
    load_states(batch);
    const auto now = Clock::now();
    param_rows_.clear();
    for (std::size_t i = 0; i < batch.rows.size(); ++i) {
        const SampleRow& row = batch.rows[i];
        const TensorInfo* t = keys_.tensor(row.tensor_id);
        const RunInfo* run = t ? keys_.run(t->run_id) : nullptr;
        if (!t || !run) continue;
        TensorState& st = state_of(row.tensor_id);
        const bool fresh = row.step > st.last_step;  // values seen before (a re-read file) are not re-judged
        if (fresh) {
            if (run->format == "mindformers") mindformers_checks(row, *t, *run, st, batch);
            else if (rules_ && !rules_->rules.empty()) msprobe_compat(row, *t, *run, st, batch);
            default_checks(row, *t, *run, st);
            if (run->format != "mindformers" && has_continuity_partner(t->kind)) param_rows_.push_back(i);
            st.last_step = row.step;
            if (touched_.empty() || touched_.back() != row.tensor_id) touched_.push_back(row.tensor_id);
        }
        cross_.collect(row, *t, *run);
        if (stalls_.live()) {
            auto [it, added] = batch_pace_.try_emplace(run->rank, t->run_id, row.step);
            if (!added && (it->second.first != t->run_id || row.step > it->second.second))
                it->second = {t->run_id, row.step};
        }
    }
    if (!param_rows_.empty()) pair_params(batch, param_rows_);
    for (const auto& [rank, run_step] : batch_pace_) stalls_.advance(rank, run_step.first, run_step.second, now);
    batch_pace_.clear();
    std::sort(touched_.begin(), touched_.end());
    touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
    for (auto id : touched_) {
        batch.detector_states.push_back({id, states_[id].last_step, encode(states_[id])});
        const TensorInfo* t = keys_.tensor(id);
        if (const RunInfo* run = t ? keys_.run(t->run_id) : nullptr) {
            auto [it, added] = newest_by_rank_.try_emplace(run->rank, states_[id].last_step);
            if (!added) it->second = std::max(it->second, states_[id].last_step);
        }
    }
    touched_.clear();
    if (!fold_.empty()) {  // findings of a (rank, kind, step) are complete once the rank's kind moved on
        std::map<std::pair<int, std::string>, std::int64_t> latest;
        for (const auto& row : batch.rows) {
            const TensorInfo* t = keys_.tensor(row.tensor_id);
            const RunInfo* run = t ? keys_.run(t->run_id) : nullptr;
            if (!t || !run) continue;
            auto [it, added] = latest.try_emplace({run->rank, t->kind}, row.step);
            if (!added) it->second = std::max(it->second, row.step);
        }
        fold_.emit_completed(latest, batch.anomalies);
    }
    save_fold(batch);
    save_cross(batch);
}

void DetectorSet::on_idle(Clock::time_point now, RecordBatch& batch) {
    stalls_.go_live();
    // A group waits for its rank's next step (a file may be half written); a rank that writes nothing more gets
    // its findings out after fold_max_wait.
    fold_.emit_waiting(now, options_.fold_max_wait, batch.anomalies);
    save_fold(batch);
    cross_.evaluate(false, batch);
    save_cross(batch);
    stalls_.judge(now, batch.anomalies);
}

void DetectorSet::finish(RecordBatch& batch) {
    fold_.emit_all(batch.anomalies);
    save_fold(batch);
    cross_.evaluate(true, batch);
    save_cross(batch);
}

void DetectorSet::judge_cross_rank_through(std::int64_t step, RecordBatch& batch) {
    cross_.evaluate_through(step, batch);
    save_cross(batch);
}

void DetectorSet::save_fold(RecordBatch& batch) {
    if (fold_.take_changed()) put_setting(batch, kFoldSetting, fold_.encode());
}

}  // namespace msmon
