// The message between "Rule " and its closing ".", read by parse_msprobe_message; the tag by split_msprobe_tag.
#include "core/parse/msprobe_console.hpp"

#include "core/parse/json_documents.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

constexpr std::string_view kSignal = " reports anomaly signal in (";

}  // namespace

bool may_hold_msprobe_alert(std::string_view line) {
    return line.find(kSignal) != std::string_view::npos;
}

std::optional<AnomalyRecord> parse_msprobe_console_line(std::string_view line) {
    const auto signal = line.find(kSignal);
    if (signal == std::string_view::npos) return std::nullopt;
    const auto start = line.rfind("Rule ", signal);
    if (start == std::string_view::npos) return std::nullopt;
    std::string_view message = line.substr(start);
    if (const auto esc = message.find('\x1b'); esc != std::string_view::npos) message = message.substr(0, esc);
    while (!message.empty() && (message.back() == ' ' || message.back() == '\r')) message.remove_suffix(1);
    const auto m = parse_msprobe_message(message);
    if (!m) return std::nullopt;
    const auto tag = split_msprobe_tag(m->tag);
    if (!tag) return std::nullopt;
    AnomalyRecord a;
    a.source = "msprobe";
    a.key = std::string(kConsoleAlertKey);
    a.rule = m->rule;
    a.rank = tag->rank;
    a.step = m->step;
    a.micro_step = 0;  // as msprobe's dump says it (never updated there)
    a.kind = tag->kind;
    a.vpp_stage = tag->vpp_stage;
    a.name = tag->name;
    a.op = m->op;
    a.value = m->value;
    a.reference = m->history;
    a.message = std::string(message);
    a.tag_name = m->tag;
    a.vpp = parse_int(tag->vpp_stage).value_or(0);
    return a;
}

}  // namespace msmon
