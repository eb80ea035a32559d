// TensorBoard event files → rows of the series tensorboard_tags.hpp names; text summaries → "config" events.
#include "core/ingest/event_file_consumer.hpp"

#include <spdlog/spdlog.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/detect/job_thresholds.hpp"
#include "core/files/input_file.hpp"
#include "core/files/input_limits.hpp"
#include "core/ingest/issue_cap.hpp"
#include "core/ingest/relaunch_runs.hpp"
#include "core/parse/job_threshold_text.hpp"
#include "core/parse/tensorboard_tags.hpp"
#include "core/parse/tfrecord_framing.hpp"
#include "core/text/display_escape.hpp"

namespace msmon {

namespace {

constexpr std::size_t kMaxConfigText = 4000;

std::string_view folder_of(std::string_view path) {
    const auto slash = path.rfind('/');
    if (slash == std::string_view::npos || slash == 0) return {};
    const auto prev = path.rfind('/', slash - 1);
    return path.substr(prev == std::string_view::npos ? 0 : prev + 1,
                       slash - (prev == std::string_view::npos ? 0 : prev + 1));
}

// nlohmann's dump() throws on text that is not UTF-8; tags come from the file and may be anything.
bool is_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        const std::size_t len = b < 0x80             ? 1
                                : (b & 0xE0) == 0xC0 ? 2
                                : (b & 0xF0) == 0xE0 ? 3
                                : (b & 0xF8) == 0xF0 ? 4
                                                     : 0;
        if (len == 0 || i + len > s.size()) return false;
        std::uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
        for (std::size_t k = 1; k < len; ++k) {
            const auto c = static_cast<unsigned char>(s[i + k]);
            if ((c & 0xC0) != 0x80) return false;
            cp = (cp << 6) | (c & 0x3Fu);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) || cp > 0x10FFFF ||
            (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

std::string to_hex(std::string_view s) {
    static constexpr char kDigits[] = "0123456789abcdef";
    std::string out;
    out.reserve(s.size() * 2);
    for (const char c : s) {
        out.push_back(kDigits[static_cast<unsigned char>(c) >> 4]);
        out.push_back(kDigits[static_cast<unsigned char>(c) & 15]);
    }
    return out;
}

std::optional<std::string> from_hex(std::string_view s) {
    if (s.size() % 2) return std::nullopt;
    auto digit = [](char c) -> int {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return -1;
    };
    std::string out;
    for (std::size_t i = 0; i < s.size(); i += 2) {
        const int hi = digit(s[i]), lo = digit(s[i + 1]);
        if (hi < 0 || lo < 0) return std::nullopt;
        out.push_back(static_cast<char>(hi << 4 | lo));
    }
    return out;
}

std::uint32_t load32(const char* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;
}

// Where the first whole record (both CRCs valid, its length within `cap`) starts at or after `from`; npos if none.
std::size_t next_whole_record(std::string_view bytes, std::size_t from, std::uint64_t cap) {
    for (std::size_t p = from; p + kTfRecordHeaderBytes + kTfRecordFooterBytes <= bytes.size(); ++p) {
        const Frame g = next_frame(bytes.substr(p));
        if (g.status == FrameStatus::record && g.length <= cap) return p;
    }
    return std::string_view::npos;
}

}  // namespace

std::string EventFileContext::serialize() const {
    if (!skipping && plugins.empty() && !placed) return "";
    nlohmann::json j;
    if (placed) j["launch"] = launch;
    if (skipping) j["skip"] = {skip_left, skip_crc, skip_start, skip_length, skip_payload};
    // Tags (and plugin names) that are not UTF-8 are kept byte for byte in hex: JSON text cannot hold them.
    for (const auto& [tag, name] : plugins) {
        if (is_utf8(tag) && is_utf8(name)) j["plugins"][tag] = name;
        else j["plugins_hex"][to_hex(tag)] = to_hex(name);
    }
    return j.dump();
}

EventFileContext EventFileContext::parse(std::string_view text) {
    EventFileContext c;
    if (text.empty()) return c;
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (!j.is_object()) return c;
    if (auto s = j.find("skip"); s != j.end() && s->is_array() && s->size() == 5) {
        c.skipping = true;
        c.skip_left = (*s)[0].get<std::uint64_t>();
        c.skip_crc = (*s)[1].get<std::uint32_t>();
        c.skip_start = (*s)[2].get<std::int64_t>();
        c.skip_length = (*s)[3].get<std::uint64_t>();
        c.skip_payload = (*s)[4].get<int>();
    }
    if (auto l = j.find("launch"); l != j.end() && l->is_string()) {
        c.placed = true;
        c.launch = l->get<std::string>();
    }
    if (auto p = j.find("plugins"); p != j.end() && p->is_object())
        for (const auto& [tag, name] : p->items())
            if (name.is_string()) c.plugins[tag] = name.get<std::string>();
    if (auto p = j.find("plugins_hex"); p != j.end() && p->is_object())
        for (const auto& [tag, name] : p->items()) {
            auto t = from_hex(tag);
            auto n = name.is_string() ? from_hex(name.get<std::string>()) : std::nullopt;
            if (t && n) c.plugins[*t] = *n;
        }
    return c;
}

void EventFileConsumer::issue(TrackedFile& file, std::int64_t record, std::string reason, RecordBatch& batch,
                              ConsumeResult& result) {
    ++result.issues;
    add_issue(
        file.progress, batch,
        [&] {
            ParseIssue p;
            p.file_id = file.progress.id;
            p.path = file.progress.path;
            p.line = record;
            p.reason = std::move(reason);
            return p;
        },
        true);
}

std::int64_t EventFileConsumer::run_for_rank(const TrackedFile& file, int rank, RecordBatch& batch) {
    if (rank == file.rank) return run_;
    const std::string key = std::to_string(file.progress.run_id) + "#" + std::to_string(rank);
    if (auto it = rank_runs_.find(key); it != rank_runs_.end()) return it->second;
    const RunInfo* run = keys_.run(file.progress.run_id);
    if (!run) return file.progress.run_id;
    RunInfo proto = *run;
    proto.id = 0;
    proto.rank = rank;
    const auto hash = proto.path.rfind("#rank");
    proto.path = (hash == std::string::npos ? proto.path + "#tensorboard" : proto.path.substr(0, hash)) + "#rank" +
                 std::to_string(rank);
    const std::int64_t id = keys_.run_id(proto, batch);
    rank_runs_[key] = id;
    return id;
}

void EventFileConsumer::add_scalar(TrackedFile& file, std::string_view tag, std::string_view folder, std::int64_t step,
                                   double value, RecordBatch& batch, ConsumeResult& result) {
    const TbSeries s = map_tensorboard_tag(tag, folder);
    const std::int64_t run = s.rank ? run_for_rank(file, *s.rank, batch) : run_;
    const std::int64_t layout = keys_.layout_id(s.op, batch);
    const std::int64_t tensor = keys_.tensor_id(run, s.kind, s.vpp_stage, s.name, s.micro_step, layout, batch);
    // msprobe writes each op of a tensor as its own tag: ops of one step join one row (its layout grows).
    if (s.op != "value") {
        auto it = open_rows_.find(tensor);
        if (it != open_rows_.end() && it->second.first == step && it->second.second < batch.rows.size()) {
            SampleRow& row = batch.rows[it->second.second];
            const std::string* ops = keys_.layout_ops(row.layout_id);
            if (row.tensor_id == tensor && row.step == step && ops && row.value_count < kMaxNumericOps) {
                std::size_t index = 0;
                bool found = false;
                for (std::string_view rest = *ops; !found;) {
                    const auto comma = rest.find(',');
                    if (rest.substr(0, comma) == s.op) found = true;
                    else if (comma == std::string_view::npos) break;
                    else {
                        rest = rest.substr(comma + 1);
                        ++index;
                    }
                }
                if (found) {
                    row.values[index] = value;  // the same op again at this step: the later value wins
                } else {
                    row.layout_id = static_cast<std::int32_t>(keys_.layout_id(*ops + "," + s.op, batch));
                    row.values[row.value_count++] = value;
                }
                return;
            }
        }
    }
    SampleRow& row = batch.rows.emplace_back();
    row.tensor_id = tensor;
    row.step = step;
    row.layout_id = static_cast<std::int32_t>(layout);
    row.value_count = 1;
    row.values[0] = value;
    row.precedence = kFullPrecision;  // over the same value rounded in a log line, whichever is read first
    ++result.rows;
    if (s.op != "value") open_rows_[tensor] = {step, batch.rows.size() - 1};
}

void EventFileConsumer::handle_event(TrackedFile& file, EventFileContext& ctx, std::string_view folder,
                                     std::int64_t offset, std::int64_t record, RecordBatch& batch,
                                     ConsumeResult& result) {
    const bool timed = std::isfinite(event_.wall_time) && event_.wall_time > 0 && event_.wall_time < 1e11;
    if (!ctx.placed && timed && !event_.values.empty()) {
        ctx.placed = true;
        const RunInfo* first = keys_.run(file.progress.run_id);
        if (first && first->format == "mindformers")
            ctx.launch = launch_at(keys_, file.progress.run_id, static_cast<std::int64_t>(event_.wall_time * 1000.0));
        run_ = launch_run(keys_, file.progress.run_id, ctx.launch, batch);
    }
    // The event's wall time is when its step was logged: the Chart's wall-clock axis (one entry a step).
    if (!event_.values.empty() && timed && !(run_ == timed_run_ && event_.step == timed_step_)) {
        timed_run_ = run_;
        timed_step_ = event_.step;
        batch.step_times.push_back({run_, event_.step, static_cast<std::int64_t>(event_.wall_time * 1000.0)});
    }
    for (const TfSummaryValue& v : event_.values) {
        if (!v.plugin_name.empty() && v.has_tensor)
            ctx.plugins.try_emplace(std::string(v.tag), std::string(v.plugin_name));
        if (v.has_simple) {
            add_scalar(file, v.tag, folder, event_.step, static_cast<double>(v.simple_value), batch, result);
            continue;
        }
        if (!v.has_tensor) continue;  // images, histograms, audio: not msmon's
        const auto plugin = ctx.plugins.find(v.tag);
        if (plugin == ctx.plugins.end()) continue;
        if (plugin->second == "scalars") {
            if (v.tensor.elements == 1 && v.tensor.has_number)
                add_scalar(file, v.tag, folder, event_.step, v.tensor.number, batch, result);
            else
                issue(file, record,
                      "scalar tag '" + escape_for_display(v.tag, 80) + "' at byte " + std::to_string(offset) +
                          " holds no single number: skipped",
                      batch, result);
        } else if (plugin->second == "text" && !v.tensor.strings.empty()) {
            std::string tag(v.tag);
            if (const auto suffix = tag.rfind("/text_summary");
                suffix != std::string::npos && suffix + 13 == tag.size())
                tag.resize(suffix);
            std::string text;
            for (std::size_t i = 0; i < v.tensor.strings.size() && text.size() < kMaxConfigText; ++i)
                text.append(i ? "\n" : "").append(v.tensor.strings[i]);
            if (text.size() > kMaxConfigText) text.resize(kMaxConfigText);
            EventRecord e;
            e.run_id = run_;
            e.rank = file.rank;
            e.step = event_.step;
            e.kind = "config";
            e.message = tag + ": " + text;
            // monitor_config's or CheckpointMonitor's thresholds: the job's own (core/detect/job_thresholds.hpp).
            for (const auto& t : thresholds_in_text(e.message)) {
                put_job_threshold(
                    batch, t.key, t.value, JobEvidence::config_text,
                    "TensorBoard text '" + escape_for_display(tag, 80) + "' of rank " + std::to_string(file.rank));
            }
            batch.events.push_back(std::move(e));
        }
    }
}

ConsumeResult EventFileConsumer::consume(TrackedFile& file, std::string_view bytes, std::int64_t file_size,
                                         RecordBatch& batch) {
    const std::size_t read_chunk = read_chunk_;
    ConsumeResult result;
    if (file.progress.offset == 0) contexts_.erase(file.progress.id);  // a new or restarted file
    auto [cit, fresh] = contexts_.try_emplace(file.progress.id);
    EventFileContext& ctx = cit->second;
    if (fresh) ctx = EventFileContext::parse(file.progress.context);
    run_ = launch_run(keys_, file.progress.run_id, ctx.launch, batch);
    const std::string_view folder = folder_of(file.progress.path);
    std::size_t pos = 0;
    std::int64_t records = 0;
    auto record_no = [&] { return file.progress.line + records + 1; };
    auto at = [&](std::size_t p) { return file.progress.offset + static_cast<std::int64_t>(p); };
    bool resyncing = false;
    while (pos < bytes.size()) {
        if (ctx.skipping) {
            const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(ctx.skip_left, bytes.size() - pos));
            ctx.skip_crc = crc32c(bytes.data() + pos, n, ctx.skip_crc);
            ctx.skip_left -= n;
            pos += n;
            if (ctx.skip_left > 0 || bytes.size() - pos < kTfRecordFooterBytes) break;
            if (mask_crc(ctx.skip_crc) != load32(bytes.data() + pos))
                issue(file, record_no(),
                      "data CRC mismatch in the record of " + std::to_string(ctx.skip_length) + " bytes at byte " +
                          std::to_string(ctx.skip_start) + ": skipped",
                      batch, result);
            else if (ctx.skip_payload == 5)
                issue(file, record_no(),
                      "summary record of " + std::to_string(ctx.skip_length) + " bytes at byte " +
                          std::to_string(ctx.skip_start) + " is larger than a read (" + std::to_string(read_chunk) +
                          " bytes): skipped",
                      batch, result);
            pos += kTfRecordFooterBytes;
            ++records;
            ctx.skipping = false;
            continue;
        }
        const std::string_view rest = bytes.substr(pos);
        const Frame f = next_frame(rest);
        // A length past the bound on a record (256 MiB unless set), its CRC valid or not, is no record: streamed
        // past, a length of 2^40 swallowed the rest of the file without a word. Named, and the next header looked
        // for as after a length whose CRC fails.
        const auto cap = static_cast<std::uint64_t>(input_limits().event_record);
        if (f.status != FrameStatus::bad_length_crc && f.length > cap) {
            std::size_t p = pos + 1;
            for (; p + kTfRecordHeaderBytes <= bytes.size(); ++p) {
                const Frame g = next_frame(bytes.substr(p));
                if (g.status != FrameStatus::bad_length_crc && g.length <= cap && (g.size > 0 || g.length > 0)) break;
            }
            issue(file, record_no(),
                  "record length " + std::to_string(f.length) + " at byte " + std::to_string(at(pos)) +
                      " is past the bound on a record (" + byte_size_text(input_limits().event_record) +
                      ", the limit " + kEventRecordLimit + " in msmon's settings): skipped " + std::to_string(p - pos) +
                      " bytes to the next record header",
                  batch, result);
            resyncing = true;
            pos = p;
            continue;
        }
        if (f.status == FrameStatus::incomplete && f.size > 0 &&
            f.size > static_cast<std::uint64_t>(std::max<std::int64_t>(file_size - at(pos), 0))) {
            // The record runs past the file's end. A writer mid-record has written nothing after it; a whole
            // record after its header says the length is no record's (a length of 100 MB in a 1 MB file streamed
            // past everything after it, and past what was appended later). Named, and read on from that record.
            // Otherwise it waits at its start until the file holds it whole.
            const std::size_t next = next_whole_record(bytes, pos + 1, cap);
            if (next == std::string_view::npos) break;
            issue(file, record_no(),
                  "record length " + std::to_string(f.length) + " at byte " + std::to_string(at(pos)) +
                      " runs past the file's end (" + std::to_string(file_size) + " bytes) and a whole record " +
                      "starts at byte " + std::to_string(at(next)) + ": skipped " + std::to_string(next - pos) +
                      " bytes to it",
                  batch, result);
            resyncing = true;
            pos = next;
            continue;
        }
        if (f.status == FrameStatus::incomplete) {
            if (f.size == 0 || f.size <= read_chunk) break;  // the read stopped inside it: read on from its start
            // Too large to hold in one read (a big graph_def), and whole in the file: stream past it, checking its
            // CRC on the way.
            ctx.skipping = true;
            ctx.skip_left = f.length;
            ctx.skip_crc = 0;
            ctx.skip_start = at(pos);
            ctx.skip_length = f.length;
            ctx.skip_payload = peek_tf_event_payload(rest.substr(kTfRecordHeaderBytes));
            pos += kTfRecordHeaderBytes;
            continue;
        }
        if (f.status == FrameStatus::bad_length_crc) {
            // The length cannot be trusted: look for the next header whose CRC holds.
            std::size_t p = pos + 1;
            for (; p + kTfRecordHeaderBytes <= bytes.size(); ++p)
                if (next_frame(bytes.substr(p)).status != FrameStatus::bad_length_crc) break;
            const std::size_t next = p;  // a valid header, or the last bytes that could still start one
            if (!resyncing)
                issue(file, record_no(),
                      "length CRC mismatch at byte " + std::to_string(at(pos)) + ": skipped " +
                          std::to_string(next - pos) + " bytes to the next valid record header",
                      batch, result);
            resyncing = true;
            pos = next;
            continue;
        }
        resyncing = false;
        if (f.status == FrameStatus::bad_data_crc) {
            issue(file, record_no(),
                  "data CRC mismatch in the record of " + std::to_string(f.length) + " bytes at byte " +
                      std::to_string(at(pos)) + ": skipped",
                  batch, result);
        } else if (!decode_tf_event(f.data, event_, error_)) {
            issue(file, record_no(),
                  "record at byte " + std::to_string(at(pos)) + " is not an Event (" + error_ + "): skipped", batch,
                  result);
        } else {
            handle_event(file, ctx, folder, at(pos), record_no(), batch, result);
        }
        pos += f.size;
        ++records;
    }
    result.consumed = pos;
    result.lines = records;
    file.progress.context = ctx.serialize();
    return result;
}

}  // namespace msmon
