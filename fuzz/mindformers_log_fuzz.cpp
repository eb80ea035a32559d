// libFuzzer target: MindFormers log text, line by line as the log consumer reads it — the prefix split, then
// every message parser on the message (and on the raw line, so the regexes are reached without a prefix).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "core/parse/mindformers_log.hpp"

namespace {

void check(bool ok) {
    if (!ok) std::abort();
}

// A view handed out by the parser must lie inside the line it was given.
void check_inside(std::string_view part, std::string_view line) {
    if (part.empty()) return;
    check(part.data() >= line.data() && part.data() + part.size() <= line.data() + line.size());
}

void parse_message(std::string_view message) {
    if (auto s = msmon::parse_step_line(message)) {
        check(s->epoch >= 0 && s->steps_per_epoch >= 0 && s->step_in_epoch >= 0);
    }
    if (auto t = msmon::parse_tsm_line(message)) check(!t->values.empty());
    (void)msmon::parse_skip_line(message);
    (void)msmon::parse_spike_line(message);
    (void)msmon::parse_embedding_line(message);
    (void)msmon::is_partial_loss_warning(message);
    (void)msmon::parse_log_number(message);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view bytes(reinterpret_cast<const char*>(data), size);
    std::size_t pos = 0;
    while (pos < bytes.size()) {
        const std::size_t nl = bytes.find('\n', pos);
        const std::size_t stop = nl == std::string_view::npos ? bytes.size() : nl;
        std::string_view line = bytes.substr(pos, stop - pos);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        pos = stop + 1;

        (void)msmon::is_traceback_start(line);
        (void)msmon::is_exception_line(line);
        const msmon::LogLineHead head = msmon::parse_log_head(line);
        // The level may be a view of a constant ("INFO" for stdout lines): read it, so ASan sees a dangling one.
        for (char c : head.level) check(c != '\n');
        check_inside(head.time, line);
        check_inside(head.message, line);
        if (head.prefix != msmon::LogPrefix::none) parse_message(head.message);
        parse_message(line);
    }
    return 0;
}
