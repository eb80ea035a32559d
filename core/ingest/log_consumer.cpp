// MindFormers log lines → rows of kind loss/global_norm/lr/... (op "value") and events (data skip, spikes, stops).
#include "core/ingest/log_consumer.hpp"

#include <spdlog/spdlog.h>

#include <cmath>
#include <cstring>

#include "core/detect/anomaly_score.hpp"
#include "core/detect/job_thresholds.hpp"
#include "core/ingest/issue_cap.hpp"
#include "core/ingest/relaunch_runs.hpp"
#include "core/parse/job_threshold_text.hpp"
#include "core/parse/mindformers_log.hpp"
#include "core/parse/msprobe_console.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/key_values.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

// Where a job's threshold was read, for the Health tab: "msrun_log/worker_0.log line 12" (the folder too: every
// rank's info.log is named alike).
std::string line_of(const TrackedFile& file, std::int64_t line) {
    const std::string& path = file.progress.path;
    const auto slash = path.rfind('/');
    const auto folder = slash == std::string::npos || slash == 0 ? std::string::npos : path.rfind('/', slash - 1);
    return escape_for_display(path.substr(folder == std::string::npos ? 0 : folder + 1), 120) + " line " +
           std::to_string(line);
}

// What a stop line says of the job's thresholds: it stops when the count reaches the count threshold.
void learn_from_spike(const SpikeLine& sp, const TrackedFile& file, std::int64_t line, RecordBatch& batch) {
    if (!(sp.threshold > 0) || !std::isfinite(sp.threshold)) return;  // not a number MindFormers compares with
    put_job_threshold(batch, kSpikeThresholdKey, sp.threshold, JobEvidence::check_line, line_of(file, line));
    if (sp.stop)
        put_job_threshold(batch, kSpikeCountThresholdKey, static_cast<double>(sp.count), JobEvidence::check_line,
                          line_of(file, line));
}

constexpr std::size_t kMaxTracebackLines = 400;

// "  12.3% |████...| 0.13094 samples/s/p  1 day, 3:34:25 }" → samples/s/p
std::optional<double> parse_progress_samples(std::string_view message) {
    const auto unit = message.find(" samples/s/p");
    if (unit == std::string_view::npos || message.find('%') == std::string_view::npos) return std::nullopt;
    const auto bar_end = message.rfind("| ", unit);
    if (bar_end == std::string_view::npos) return std::nullopt;
    return parse_double(message.substr(bar_end + 2, unit - bar_end - 2));
}

}  // namespace

std::string LogReaderContext::serialize() const {
    std::string out = "step=" + std::to_string(step) + ";warn=" + (partial_loss_warning ? "1" : "0") +
                      ";micro_of=" + std::to_string(micro_step_of) + (placed ? ";launch=" + launch : "") + ";micro=";
    bool first = true;
    for (const auto& [tag, n] : micro_counts) {
        out += (first ? "" : ",") + tag + ":" + std::to_string(n);
        first = false;
    }
    return out;
}

LogReaderContext LogReaderContext::parse(std::string_view text) {
    LogReaderContext c;
    for_each_key_value(text, [&](std::string_view key, std::string_view value) {
        if (key == "step") c.step = parse_int(value).value_or(-1);
        else if (key == "warn") c.partial_loss_warning = value == "1";
        else if (key == "micro_of") c.micro_step_of = parse_int(value).value_or(-1);
        else if (key == "launch") {
            c.placed = true;
            c.launch = std::string(value);
        } else if (key == "micro") {
            std::string_view rest = value;
            while (!rest.empty()) {
                const auto comma = rest.find(',');
                const std::string_view pair = rest.substr(0, comma);
                rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
                const auto colon = pair.rfind(':');
                if (colon != std::string_view::npos)
                    c.micro_counts[std::string(pair.substr(0, colon))] = parse_int(pair.substr(colon + 1)).value_or(0);
            }
        }
    });
    return c;
}

void LogConsumer::add_value(std::string_view kind, std::string_view name, std::optional<std::int64_t> micro,
                            std::int64_t step, double value, RecordBatch& batch, ConsumeResult& result) {
    if (!value_layout_) value_layout_ = keys_.layout_id("value", batch);
    SampleRow& row = batch.rows.emplace_back();
    row.tensor_id = keys_.tensor_id(run_, kind, "", name, micro, value_layout_, batch);
    row.step = step;
    row.layout_id = static_cast<std::int32_t>(value_layout_);
    row.value_count = 1;
    row.values[0] = value;
    row.precedence = kRoundedText;  // an event file's value of the same step stays over this one
    ++result.rows;
}

void LogConsumer::add_event(TrackedFile& file, std::optional<std::int64_t> step, std::string kind,
                            std::string_view time, std::string message, RecordBatch& batch) {
    EventRecord e;
    e.run_id = run_;
    e.rank = file.rank;
    e.step = step;
    e.kind = std::move(kind);
    e.time = std::string(time);
    e.message = std::move(message);
    batch.events.push_back(std::move(e));
}

void LogConsumer::handle_message(TrackedFile& file, LogReaderContext& ctx, std::string_view level,
                                 std::string_view time, std::string_view message, std::int64_t line, RecordBatch& batch,
                                 ConsumeResult& result) {
    const std::optional<std::int64_t> current = ctx.step >= 0 ? std::optional<std::int64_t>(ctx.step) : std::nullopt;
    const std::optional<std::int64_t> ms = log_time_ms(time);
    if (!ctx.placed && ms) {
        ctx.placed = true;
        ctx.launch = launch_at(keys_, file.progress.run_id, *ms);
        run_ = launch_run(keys_, file.progress.run_id, ctx.launch, batch);
    }
    if (auto s = parse_step_line(message)) {
        const std::int64_t step = s->global_step;
        ctx.step = step;
        // When the step ended, from the line's own time: the Chart's wall-clock axis.
        if (ms) {
            batch.step_times.push_back({run_, step, *ms});
            auto [it, fresh] = first_step_ms_.emplace(file.progress.run_id, *ms);
            if (!fresh) it->second = std::min(it->second, *ms);
        }
        // A non-last pipeline stage prints loss 0 after the "loss on the last card is valid" warning: not a loss.
        const bool partial = ctx.partial_loss_warning && s->loss && *s->loss == 0;
        ctx.partial_loss_warning = false;
        if (s->loss && !partial) add_value("loss", "", std::nullopt, step, *s->loss, batch, result);
        auto put = [&](std::string_view kind, const std::optional<double>& v) {
            if (v) add_value(kind, "", std::nullopt, step, *v, batch, result);
        };
        put("loss_epoch_mean", s->loss_epoch_mean);
        put("lm_loss", s->lm_loss);
        put("load_balancing_loss", s->load_balancing_loss);
        put("mtp_loss", s->mtp_loss);
        put("indexer_loss", s->indexer_loss);
        for (const auto& [k, v] : s->extra_losses) add_value(k, "", std::nullopt, step, v, batch, result);
        put("per_step_time", s->per_step_ms);
        put("lr", s->lr);
        if (s->overflow) add_value("overflow", "", std::nullopt, step, *s->overflow ? 1.0 : 0.0, batch, result);
        put("loss_scale", s->loss_scale);
        put("global_norm", s->global_norm);
        put("throughput", s->throughput_tflops);
        return;
    }
    if (auto t = parse_tsm_line(message)) {
        auto [kind, name] = tsm_series(t->tag);
        std::optional<std::int64_t> micro;
        if (t->tag.rfind("micro_local_", 0) == 0) {
            if (ctx.micro_step_of != t->global_step) {
                ctx.micro_step_of = t->global_step;
                ctx.micro_counts.clear();
            }
            micro = ctx.micro_counts[t->tag]++;
        }
        if (t->values.size() == 1) {
            add_value(kind, name, micro, t->global_step, t->values[0], batch, result);
        } else {
            for (std::size_t i = 0; i < t->values.size(); ++i)
                add_value(kind, name + "[" + std::to_string(i) + "]", micro, t->global_step, t->values[i], batch,
                          result);
        }
        return;
    }
    if (message.rfind("{ Epoch:[", 0) == 0 || message.rfind("{ step:[", 0) == 0 || message.rfind("Epoch:[", 0) == 0) {
        // Shaped like a step or TrainingStateMonitor line, but not one we can read: count it, never guess.
        ++result.issues;
        add_issue(file.progress, batch, [&] {
            ParseIssue p;
            p.file_id = file.progress.id;
            p.path = file.progress.path;
            p.line = line;
            p.reason = "unrecognised step or metric line";
            p.excerpt = escape_for_display(message, 160);
            return p;
        });
        return;
    }
    if (auto p = parse_progress_samples(message)) {
        if (current) add_value("samples_per_second", "", std::nullopt, *current, *p, batch, result);
        return;
    }
    if (auto e = parse_embedding_line(message)) {
        if (current) add_value("embedding_local_norm", "", std::nullopt, *current, *e, batch, result);
        return;
    }
    if (auto k = parse_skip_line(message)) {
        if (k->threshold > 0 && std::isfinite(k->threshold))
            put_job_threshold(batch, kSpikeThresholdKey, k->threshold, JobEvidence::check_line, line_of(file, line));
        if (k->is_skip) add_event(file, current, "data_skip", time, std::string(message), batch);
        return;
    }
    if (auto sp = parse_spike_line(message)) {
        learn_from_spike(*sp, file, line, batch);
        add_event(file, sp->step, sp->stop ? "stop" : "global_norm_spike", time, std::string(message), batch);
        return;
    }
    if (is_partial_loss_warning(message)) {
        ctx.partial_loss_warning = true;
        return;
    }
    if (message.rfind("Running MindFormers in ", 0) == 0) {
        // A relaunch: this file saw a step before, or the job did (another of its files, read first).
        const auto first = first_step_ms_.find(file.progress.run_id);
        if (ms && (ctx.step >= 0 || (first != first_step_ms_.end() && first->second < *ms))) {
            ctx.launch = std::string(time);
            ctx.step = -1;
            run_ = launch_run(keys_, file.progress.run_id, ctx.launch, batch);
        }
        add_event(file, current, "start", time, std::string(message), batch);
        return;
    }
    if (message.rfind("Finish saving ", 0) == 0) {
        add_event(file, current, "checkpoint_saved", time, std::string(message), batch);
        return;
    }
    if (level == "ERROR" || level == "CRITICAL" || level == "EXCEPTION")
        add_event(file, current, "error", time, std::string(message.substr(0, 4000)), batch);
}

ConsumeResult LogConsumer::consume(TrackedFile& file, std::string_view bytes, std::int64_t, RecordBatch& batch) {
    ConsumeResult result;
    LogReaderContext ctx = LogReaderContext::parse(file.progress.context);
    run_ = launch_run(keys_, file.progress.run_id, ctx.launch, batch);
    const std::size_t last_nl = bytes.rfind('\n');
    const std::size_t usable = last_nl == std::string_view::npos ? 0 : last_nl + 1;
    std::size_t pos = 0;
    std::int64_t lines = 0;
    auto line_at = [&](std::size_t at, std::size_t& next) {
        const char* nl = static_cast<const char*>(std::memchr(bytes.data() + at, '\n', usable - at));
        next = static_cast<std::size_t>(nl - bytes.data()) + 1;
        std::string_view l = bytes.substr(at, next - 1 - at);
        if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
        return l;
    };
    while (pos < usable) {
        std::size_t next = 0;
        const std::string_view line = line_at(pos, next);
        if (is_traceback_start(line)) {
            // Hold the whole traceback until its exception line: the offset stays at its start meanwhile.
            std::size_t scan = next;
            std::size_t count = 1;
            std::string_view exception;
            std::string text(line);
            while (scan < usable && count < kMaxTracebackLines) {
                std::size_t after = 0;
                const std::string_view l = line_at(scan, after);
                text += "\n";
                text += l;
                ++count;
                scan = after;
                if (is_exception_line(l)) {
                    exception = l;
                    break;
                }
            }
            if (exception.empty() && count < kMaxTracebackLines) break;  // incomplete: wait for more
            std::optional<std::int64_t> step = ctx.step >= 0 ? std::optional<std::int64_t>(ctx.step) : std::nullopt;
            std::string kind = "error";
            if (auto sp = parse_spike_line(exception); sp && sp->stop) {
                kind = "stop";
                step = sp->step;
                learn_from_spike(*sp, file, file.progress.line + lines + static_cast<std::int64_t>(count), batch);
            }
            // Stored as written (bounded); every view escapes it for display.
            if (text.size() > 16000) text = text.substr(0, 8000) + "\n...\n" + text.substr(text.size() - 8000);
            add_event(file, step, kind, "", std::move(text), batch);
            lines += static_cast<std::int64_t>(count);
            pos = scan;
            continue;
        }
        // msprobe's alerts, printed by the trainer into its worker log (core/parse/msprobe_console.hpp).
        if (may_hold_msprobe_alert(line))
            if (auto alert = parse_msprobe_console_line(line)) {
                alert->score = anomaly_score(*alert);
                batch.anomalies.push_back(std::move(*alert));
            }
        // The job's config as the log prints it (pprint on ranks 0, 8, ...; a yaml echo): its check thresholds.
        for (const auto& t : thresholds_in_text(line))
            put_job_threshold(batch, t.key, t.value, JobEvidence::config_text,
                              line_of(file, file.progress.line + lines + 1));
        const LogLineHead head = parse_log_head(line);
        if (head.prefix != LogPrefix::none)
            handle_message(file, ctx, head.level, head.time, head.message, file.progress.line + lines + 1, batch,
                           result);
        ++lines;
        pos = next;
    }
    result.consumed = pos;
    result.lines = lines;
    file.progress.context = ctx.serialize();
    return result;
}

}  // namespace msmon
