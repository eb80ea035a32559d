// Fault list grammar: TYPE@STEP[:rRANK][xFACTOR], comma-separated.
#include "core/sim/fault_plan.hpp"

#include "core/text/number_text.hpp"

namespace msmon {

std::optional<std::vector<Fault>> parse_fault_list(std::string_view text, std::string& error) {
    std::vector<Fault> out;
    while (!text.empty()) {
        const auto comma = text.find(',');
        std::string_view item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
        Fault f;
        const auto at = item.find('@');
        const std::string_view type = item.substr(0, at);
        if (type == "spike")
            f.type = Fault::Type::spike;
        else if (type == "nan")
            f.type = Fault::Type::nan;
        else if (type == "stop")
            f.type = Fault::Type::stop;
        else {
            error = "unknown fault '" + std::string(type) + "' (spike, nan, stop)";
            return std::nullopt;
        }
        if (at == std::string_view::npos) {
            error = "fault '" + std::string(item) + "' needs @STEP";
            return std::nullopt;
        }
        std::string_view rest = item.substr(at + 1);
        auto cut = rest.find_first_of(":x");
        auto step = parse_int(rest.substr(0, cut));
        if (!step || *step < 0) {
            error = "fault '" + std::string(item) + "': bad step";
            return std::nullopt;
        }
        f.step = *step;
        rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut);
        while (!rest.empty()) {
            const char tag = rest.front();
            rest.remove_prefix(1);
            if (tag == ':' && !rest.empty() && rest.front() == 'r') rest.remove_prefix(1);
            auto next = rest.find_first_of(":x");
            std::string_view num = rest.substr(0, next);
            rest = next == std::string_view::npos ? std::string_view() : rest.substr(next);
            if (tag == ':') {
                auto r = parse_int(num);
                if (!r || *r < 0) {
                    error = "fault '" + std::string(item) + "': bad rank";
                    return std::nullopt;
                }
                f.rank = static_cast<int>(*r);
            } else {
                auto x = parse_double(num);
                if (!x || !(*x > 0)) {
                    error = "fault '" + std::string(item) + "': bad factor";
                    return std::nullopt;
                }
                f.factor = *x;
            }
        }
        out.push_back(f);
    }
    return out;
}

std::int64_t first_stop_step(const std::vector<Fault>& faults) {
    std::int64_t first = -1;
    for (const auto& f : faults)
        if (f.type == Fault::Type::stop && (first < 0 || f.step < first)) first = f.step;
    return first;
}

}  // namespace msmon
