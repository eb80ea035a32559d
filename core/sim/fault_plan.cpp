// Fault list grammar: TYPE@STEP[:rRANK][:mMODULE][xFACTOR], comma-separated (see fault_plan.hpp).
#include "core/sim/fault_plan.hpp"

#include <array>
#include <utility>

#include "core/text/number_text.hpp"

namespace msmon {

namespace {

struct TypeInfo {
    Fault::Type type;
    std::string_view name;
    bool rank_ok, rank_needed, module_ok, factor_ok;
    double default_factor;
};

// stop@ keeps accepting what the old grammar accepted (a rank or factor it ignores).
constexpr std::array<TypeInfo, 11> kTypes = {{
    {Fault::Type::spike, "spike", true, false, false, true, 100},
    {Fault::Type::nan, "nan", true, false, true, false, 100},
    {Fault::Type::stop, "stop", true, false, false, true, 100},
    {Fault::Type::baddata, "baddata", true, true, false, true, 25},
    {Fault::Type::drift, "drift", false, false, true, true, 10},
    {Fault::Type::stall, "stall", true, true, false, false, 100},
    {Fault::Type::restart, "restart", false, false, false, false, 100},
    {Fault::Type::sdc, "sdc", true, true, true, true, 1.01},
    {Fault::Type::sdcgrad, "sdcgrad", true, true, true, true, 1.5},
    {Fault::Type::lr, "lr", false, false, false, true, 20},
    {Fault::Type::dead, "dead", false, false, true, false, 100},
}};

const TypeInfo* type_info(std::string_view name) {
    for (const auto& t : kTypes)
        if (t.name == name) return &t;
    return nullptr;
}

bool parse_factor(std::string_view text, double& out) {
    auto x = parse_double(text);
    if (!x || !(*x > 0) || !(*x < 1e300)) return false;
    out = *x;
    return true;
}

// One item: TYPE@STEP then tags in any order.
bool parse_fault(std::string_view item, Fault& f, std::string& error) {
    const auto at = item.find('@');
    const std::string_view type = item.substr(0, at);
    const TypeInfo* info = type_info(type);
    const std::string what = "fault '" + std::string(item) + "': ";
    if (!info) {
        error = "unknown fault '" + std::string(type) +
                "' (spike, nan, baddata, drift, stall, restart, stop, sdc, sdcgrad, lr, dead)";
        return false;
    }
    if (at == std::string_view::npos) {
        error = "fault '" + std::string(item) + "' needs @STEP";
        return false;
    }
    f.type = info->type;
    f.factor = info->default_factor;
    std::string_view rest = item.substr(at + 1);
    const auto cut = rest.find_first_of(":x");
    auto step = parse_int(rest.substr(0, cut));
    if (!step || *step < 0) {
        error = what + "bad step";
        return false;
    }
    f.step = *step;
    rest = cut == std::string_view::npos ? std::string_view() : rest.substr(cut);
    bool has_rank = false, has_module = false, has_factor = false;
    while (!rest.empty()) {
        const char tag = rest.front();
        rest.remove_prefix(1);
        if (tag == 'x') {
            const auto next = rest.find(':');
            if (!parse_factor(rest.substr(0, next), f.factor)) {
                error = what + "bad factor";
                return false;
            }
            has_factor = true;
            rest = next == std::string_view::npos ? std::string_view() : rest.substr(next);
        } else if (!rest.empty() && rest.front() == 'm') {
            // A module name runs to the next ':'; a trailing xFACTOR is split off it ("linear_fc2x3").
            rest.remove_prefix(1);
            const auto next = rest.find(':');
            std::string_view name = rest.substr(0, next);
            rest = next == std::string_view::npos ? std::string_view() : rest.substr(next);
            if (const auto x = name.rfind('x'); x != std::string_view::npos && x > 0) {
                double factor = 0;
                if (parse_factor(name.substr(x + 1), factor)) {
                    f.factor = factor;
                    has_factor = true;
                    name = name.substr(0, x);
                }
            }
            if (name.empty()) {
                error = what + "empty module name";
                return false;
            }
            f.module = std::string(name);
            has_module = true;
        } else {
            if (!rest.empty() && rest.front() == 'r') rest.remove_prefix(1);
            const auto next = rest.find_first_of(":x");
            auto r = parse_int(rest.substr(0, next));
            if (!r || *r < 0 || *r > (1 << 30)) {
                error = what + "bad rank";
                return false;
            }
            f.rank = static_cast<int>(*r);
            has_rank = true;
            rest = next == std::string_view::npos ? std::string_view() : rest.substr(next);
        }
    }
    if (has_rank && !info->rank_ok) {
        error = what + std::string(info->name) + " applies to every rank (no :rRANK)";
        return false;
    }
    if (!has_rank && info->rank_needed) {
        error = what + std::string(info->name) + " needs a rank (:rRANK)";
        return false;
    }
    if (has_module && !info->module_ok) {
        error = what + std::string(info->name) + " takes no module (only nan, drift, dead, sdc and sdcgrad do)";
        return false;
    }
    if (has_factor && !info->factor_ok) {
        error = what + std::string(info->name) + " takes no factor";
        return false;
    }
    return true;
}

}  // namespace

std::optional<std::vector<Fault>> parse_fault_list(std::string_view text, std::string& error) {
    std::vector<Fault> out;
    while (!text.empty()) {
        const auto comma = text.find(',');
        const std::string_view item = text.substr(0, comma);
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
        Fault f;
        if (!parse_fault(item, f, error)) return std::nullopt;
        out.push_back(std::move(f));
    }
    return out;
}

std::string_view fault_type_name(Fault::Type type) {
    for (const auto& t : kTypes)
        if (t.type == type) return t.name;
    return "?";
}

std::int64_t first_stop_step(const std::vector<Fault>& faults) {
    std::int64_t first = -1;
    for (const auto& f : faults)
        if (f.type == Fault::Type::stop && (first < 0 || f.step < first)) first = f.step;
    return first;
}

}  // namespace msmon
