// MindFormers log parsing. Prefixes are recognised by hand (every line pays for it); messages by regexes
// compiled once, taken from the spec and tried only on lines whose first characters can match.
#include "core/parse/mindformers_log.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <regex>

#include "core/text/number_text.hpp"

namespace msmon {

namespace {

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// "YYYY-MM-DD HH:MM:SS,mmm" at the start of s.
bool is_log_time(std::string_view s) {
    static constexpr std::string_view shape = "dddd-dd-dd dd:dd:dd,ddd";
    if (s.size() < shape.size()) return false;
    for (std::size_t i = 0; i < shape.size(); ++i)
        if (shape[i] == 'd' ? !is_digit(s[i]) : s[i] != shape[i]) return false;
    return true;
}

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

std::optional<double> opt_number(const std::csub_match& m) {
    if (!m.matched) return std::nullopt;
    return parse_log_number(std::string_view(&*m.first, static_cast<std::size_t>(m.length())));
}

std::int64_t to_int(const std::csub_match& m) {
    return parse_int(std::string_view(&*m.first, static_cast<std::size_t>(m.length()))).value_or(0);
}

// libstdc++'s std::regex recurses once per character matched: a line of a few ten thousand bytes overflows the
// stack. Longer text is not handed to a regex (found by fuzz/mindformers_log_fuzz).
constexpr std::size_t kMaxRegexText = 8192;

// (epoch - 1) * steps_per_epoch + step, or nullopt when it does not fit in 64 bits (found by fuzzing: UB).
std::optional<std::int64_t> global_step_of(std::int64_t epoch, std::int64_t steps_per_epoch, std::int64_t step) {
    std::int64_t g = 0;
    if (__builtin_mul_overflow(epoch - 1, steps_per_epoch, &g) || __builtin_add_overflow(g, step, &g))
        return std::nullopt;
    return g;
}

}  // namespace

std::optional<double> parse_log_number(std::string_view text) {
    text = trim(text);
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = trim(text.substr(1, text.size() - 2));
    if (auto v = parse_double(text)) return v;
    // numpy's array2string spelling "1.e-05"
    if (auto dot = text.find(".e"); dot != std::string_view::npos) {
        std::string fixed(text);
        fixed.insert(dot + 1, "0");
        return parse_double(fixed);
    }
    return std::nullopt;
}

LogLineHead parse_log_head(std::string_view line) {
    LogLineHead h;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.size() > 2 && line[0] == '[') {
        // FILE: "[INFO] 2026-07-24 14:20:06,869 [file:line] func: message"
        const auto close = line.find(']');
        if (close != std::string_view::npos && close + 2 < line.size() && line[close + 1] == ' ' &&
            is_log_time(line.substr(close + 2))) {
            const std::string_view rest = line.substr(close + 2 + 23);
            if (rest.size() > 2 && rest[0] == ' ' && rest[1] == '[') {
                const auto end_loc = rest.find("] ");
                const auto colon = end_loc == std::string_view::npos ? end_loc : rest.find(": ", end_loc + 2);
                if (colon != std::string_view::npos) {
                    h.prefix = LogPrefix::file_sink;
                    h.level = line.substr(1, close - 1);
                    h.time = line.substr(close + 2, 23);
                    h.message = rest.substr(colon + 2);
                    return h;
                }
            }
        }
        // MindSpore: "[WARNING] ME(56203:2814...,MainProcess):2026-07-14-06:47:00.610.000 [file:line] text"
        static const std::regex ms(
            R"(^\[(DEBUG|INFO|WARNING|ERROR|CRITICAL|EXCEPTION)\] ([A-Z_]+)\((\d+)[,:]([0-9a-fA-F]+),([^)]*)\):(\d{4}-\d{2}-\d{2}-\d{2}:\d{2}:\d{2}\.\d{3}\.\d{3}) \[([^\]]+)\] ?(.*)$)");
        std::cmatch m;
        if (line.size() <= kMaxRegexText && std::regex_match(line.begin(), line.end(), m, ms)) {
            h.prefix = LogPrefix::mindspore;
            h.level = std::string_view(&*m[1].first, static_cast<std::size_t>(m[1].length()));
            h.time = std::string_view(&*m[6].first, static_cast<std::size_t>(m[6].length()));
            h.message = m[8].matched ? std::string_view(&*m[8].first, static_cast<std::size_t>(m[8].length()))
                                     : std::string_view();
            return h;
        }
        return h;
    }
    // STDOUT: "2026-07-24 10:05:53,818 - <name>[file:line] - INFO - message"
    if (is_log_time(line) && line.substr(23, 3) == " - ") {
        static constexpr std::string_view levels[] = {"DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"};
        // The level is the earliest "] - LEVEL - " marker: a message may quote another one later on.
        std::size_t best = std::string_view::npos, best_len = 0;
        std::string_view best_level;
        for (auto level : levels) {
            const std::string marker = "] - " + std::string(level) + " - ";
            const auto at = line.find(marker, 26);
            if (at < best) {
                best = at;
                best_len = marker.size();
                best_level = level;
            }
        }
        if (best != std::string_view::npos) {
            h.prefix = LogPrefix::stdout_sink;
            h.level = best_level;
            h.time = line.substr(0, 23);
            h.message = line.substr(best + best_len);
            return h;
        }
    }
    return h;
}

std::optional<std::int64_t> log_time_ms(std::string_view time) {
    if (time.size() < 19 || time.size() > 40) return std::nullopt;
    const std::string text(time);
    int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0, ms = 0, used = 0;
    if (std::sscanf(text.c_str(), "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6 || used != 19)
        return std::nullopt;
    if (text.size() > 19 && (text[19] == ',' || text[19] == '.')) {
        int digits = 0;
        for (std::size_t k = 20; k < text.size() && k < 23 && std::isdigit(static_cast<unsigned char>(text[k])); ++k) {
            ms = ms * 10 + (text[k] - '0');
            ++digits;
        }
        while (digits++ < 3) ms *= 10;
    }
    if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
    std::tm tm{};
    tm.tm_year = y - 1900;
    tm.tm_mon = mo - 1;
    tm.tm_mday = d;
    tm.tm_hour = h;
    tm.tm_min = mi;
    tm.tm_sec = sec;
    tm.tm_isdst = -1;
    const std::time_t t = std::mktime(&tm);
    if (t == static_cast<std::time_t>(-1)) return std::nullopt;
    return static_cast<std::int64_t>(t) * 1000 + ms;
}

std::optional<StepLine> parse_step_line(std::string_view message) {
    if (message.substr(0, 2) != "{ " || message.size() > kMaxRegexText) return std::nullopt;
    StepLine s;
    std::cmatch m;
    if (message.substr(0, 9) == "{ Epoch:[") {
        static const std::regex step(
            R"(^\{ Epoch:\[ *(\d+)/ *(\d+)\], step:\[ *(\d+)/ *(\d+)\], loss(?:: ([^,\[\]]+)|:\[([^/\]]+)/([^\]]+)\]), (?:lm_loss: ([^,]+), )?(?:load_balancing_loss: ([^,]+), )?(?:mtp_loss: ([^,]+), )?(?:indexer_loss: ([^,]+), )?per_step_time: (\d+)ms, (?:lr: ([^,]+), )?overflow cond: ([^,]+), loss_scale: ([^,]+), global_norm: (.*?)(?:, train_throughput_per_npu: ([-+0-9.eEinfa]+)T)?$)");
        if (!std::regex_match(message.begin(), message.end(), m, step)) return std::nullopt;
        s.epoch = to_int(m[1]);
        s.epochs = to_int(m[2]);
        s.step_in_epoch = to_int(m[3]);
        s.steps_per_epoch = to_int(m[4]);
        const auto global_step = global_step_of(s.epoch, s.steps_per_epoch, s.step_in_epoch);
        if (!global_step) return std::nullopt;
        s.global_step = *global_step;
        s.loss = m[5].matched ? opt_number(m[5]) : opt_number(m[6]);
        s.loss_epoch_mean = opt_number(m[7]);
        s.lm_loss = opt_number(m[8]);
        s.load_balancing_loss = opt_number(m[9]);
        s.mtp_loss = opt_number(m[10]);
        s.indexer_loss = opt_number(m[11]);
        s.per_step_ms = opt_number(m[12]);
        s.lr = opt_number(m[13]);
        s.overflow = std::string_view(&*m[14].first, static_cast<std::size_t>(m[14].length())) == "True";
        s.loss_scale = opt_number(m[15]);
        s.global_norm = opt_number(m[16]);
        s.throughput_tflops = opt_number(m[17]);
        return s;
    }
    if (message.substr(0, 8) == "{ step:[") {
        static const std::regex pyn(
            R"(^\{ step:\[ *(\d+)/ *(\d+)\], (?:consumed_samples: (\S+), global_batch_size: (\S+), )?loss: +(N/A \(non-last PP stage, refer to last stage for real loss\)|[-+0-9.eEinfa]+), per_step_time: +(\d+)ms(.*) \}$)");
        if (!std::regex_match(message.begin(), message.end(), m, pyn)) return std::nullopt;
        s.step_in_epoch = s.global_step = to_int(m[1]);
        s.steps_per_epoch = to_int(m[2]);
        s.epoch = s.epochs = 1;
        s.loss = opt_number(m[5]);
        s.per_step_ms = opt_number(m[6]);
        // Tail: ", key: value" pairs.
        std::string_view tail(&*m[7].first, static_cast<std::size_t>(m[7].length()));
        while (tail.substr(0, 2) == ", ") {
            tail.remove_prefix(2);
            const auto colon = tail.find(": ");
            if (colon == std::string_view::npos) break;
            const std::string_view key = tail.substr(0, colon);
            tail.remove_prefix(colon + 2);
            const auto comma = tail.find(", ");
            std::string_view value = trim(tail.substr(0, comma));
            tail = comma == std::string_view::npos ? std::string_view() : tail.substr(comma);
            if (key == "throughput" && !value.empty() && value.back() == 'T') value.remove_suffix(1);
            const auto v = value == "NaN" ? std::optional<double>(std::nan("")) : parse_log_number(value);
            if (!v) continue;
            if (key == "lr") s.lr = v;
            else if (key == "grad_norm") s.global_norm = v;
            else if (key == "throughput") s.throughput_tflops = v;
            else if (key == "load_balancing_loss") s.load_balancing_loss = v;
            else if (key == "indexer_loss") s.indexer_loss = v;
            else s.extra_losses.emplace_back(std::string(key), *v);
        }
        return s;
    }
    return std::nullopt;
}

std::optional<TsmLine> parse_tsm_line(std::string_view message) {
    if (message.substr(0, 7) != "Epoch:[") return std::nullopt;
    // Only the head goes through the regex: the value can be a long list (see kMaxRegexText). No ": " comes
    // before the one after the tag, which holds no space.
    const auto sep = message.find(": ");
    if (sep == std::string_view::npos || sep + 2 > kMaxRegexText) return std::nullopt;
    static const std::regex tsm(R"(^Epoch:\[ *(\d+)/ *(\d+)\], step:\[ *(\d+)/ *(\d+)\] (\S+): $)");
    std::cmatch m;
    if (!std::regex_match(message.begin(), message.begin() + sep + 2, m, tsm)) return std::nullopt;
    TsmLine t;
    const auto global_step = global_step_of(to_int(m[1]), to_int(m[4]), to_int(m[3]));
    if (!global_step) return std::nullopt;
    t.global_step = *global_step;
    t.tag = m[5].str();
    std::string_view value = trim(message.substr(sep + 2));
    if (value.size() >= 2 && value.front() == '[' && value.back() == ']') {
        std::string_view body = value.substr(1, value.size() - 2);
        while (!body.empty()) {
            const auto sep = body.find_first_of(", ");
            const std::string_view item = body.substr(0, sep);
            if (!item.empty()) {
                auto v = parse_log_number(item);
                if (!v) return std::nullopt;
                t.values.push_back(*v);
            }
            if (sep == std::string_view::npos) break;
            body.remove_prefix(sep + 1);
        }
    } else if (auto v = parse_log_number(value)) {
        t.values.push_back(*v);
    }
    if (t.values.empty()) return std::nullopt;
    return t;
}

std::optional<SkipLine> parse_skip_line(std::string_view message) {
    if (message.substr(0, 17) != "opt_global_step: " || message.size() > kMaxRegexText) return std::nullopt;
    static const std::regex skip(
        R"(^opt_global_step: (-?\d+), skip_data_grad_norm_threshold: ([^,]+), is_skip: (.*)$)");
    std::cmatch m;
    if (!std::regex_match(message.begin(), message.end(), m, skip)) return std::nullopt;
    SkipLine s;
    s.opt_global_step = to_int(m[1]);
    s.threshold = opt_number(m[2]).value_or(0);
    s.is_skip = m[3].str().find("True") != std::string::npos;
    return s;
}

std::optional<SpikeLine> parse_spike_line(std::string_view message) {
    if (message.substr(0, 12) == "ValueError: ") message.remove_prefix(12);
    if (message.substr(0, 20) != "Current global norm " || message.size() > kMaxRegexText) return std::nullopt;
    static const std::regex consec(
        R"(^Current global norm (.*) of step (\d+) has been (\d+) consecutive times greater than threshold: (.*)$)");
    static const std::regex stop(
        R"(^Current global norm (.*) of step (\d+) has been (\d+) consecutive times greater than threshold ([^,]*), stop training\.\.\.$)");
    std::cmatch m;
    SpikeLine s;
    if (std::regex_match(message.begin(), message.end(), m, stop)) s.stop = true;
    else if (!std::regex_match(message.begin(), message.end(), m, consec)) return std::nullopt;
    s.global_norm = opt_number(m[1]).value_or(std::nan(""));
    s.step = to_int(m[2]);
    s.count = to_int(m[3]);
    s.threshold = opt_number(m[4]).value_or(0);
    return s;
}

std::optional<double> parse_embedding_line(std::string_view message) {
    static constexpr std::string_view key = "embedding_local_norm: ";
    if (message.substr(0, key.size()) != key) return std::nullopt;
    return parse_log_number(message.substr(key.size()));
}

bool is_partial_loss_warning(std::string_view message) {
    return message.find("the loss on the last card is valid") != std::string_view::npos ||
           message.find("multiple copies in parallel is open") != std::string_view::npos ||
           message.find("loss is valid only on rank 0") != std::string_view::npos;
}

bool is_traceback_start(std::string_view line) {
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    return line == "Traceback (most recent call last):";
}

bool is_exception_line(std::string_view line) {
    // "ValueError: ...", "RuntimeError: ...", "mindspore.common.exceptions.FooError: ...", "KeyboardInterrupt"
    std::size_t i = 0;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_' || line[i] == '.'))
        ++i;
    // The last dotted component must start with a capital ("a." has an empty one: found by fuzzing, read past the end).
    const std::size_t dot = i == 0 ? std::string_view::npos : line.rfind('.', i - 1);
    const std::size_t last = dot == std::string_view::npos ? 0 : dot + 1;
    if (i == 0 || last >= i || !std::isupper(static_cast<unsigned char>(line[last]))) return false;
    const std::string_view name = line.substr(0, i);
    const bool error_like =
        name.find("Error") != std::string_view::npos || name.find("Exception") != std::string_view::npos ||
        name.find("Interrupt") != std::string_view::npos || name.find("Exit") != std::string_view::npos;
    return error_like && (i == line.size() || line[i] == ':');
}

std::pair<std::string, std::string> tsm_series(const std::string& tag) {
    if (const auto slash = tag.find('/'); slash != std::string::npos)
        return {tag.substr(0, slash), tag.substr(slash + 1)};
    auto strip = [&](std::string_view prefix, std::string_view suffix) -> std::optional<std::string> {
        if (tag.size() > prefix.size() + suffix.size() && tag.compare(0, prefix.size(), prefix) == 0 &&
            tag.compare(tag.size() - suffix.size(), suffix.size(), suffix) == 0)
            return tag.substr(prefix.size(), tag.size() - prefix.size() - suffix.size());
        return std::nullopt;
    };
    if (auto t = strip("micro_local_", "_loss")) return {"local_loss", *t};
    if (auto t = strip("device_accum_local_", "_loss")) return {"device_accum_local_loss", *t};
    if (auto t = strip("local_", "_loss")) return {"local_loss", *t};
    return {tag, ""};
}

}  // namespace msmon
