// Name matchers for msprobe's layout, written out by hand: they run once per directory entry.
#include "core/layout/monitor_layout.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <string>

#include "core/text/number_text.hpp"

namespace msmon {

namespace {

constexpr std::array<std::string_view, 13> kV1Prefixes = {"actv",
                                                          "actv_grad",
                                                          "grad_unreduced",
                                                          "grad_reduced",
                                                          "exp_avg",
                                                          "exp_avg_sq",
                                                          "param_origin",
                                                          "param_updated",
                                                          "other",
                                                          "attention_hook",
                                                          "linear_hook",
                                                          "moe_router_weight_hook",
                                                          "moe_router_logit_hook"};

constexpr std::array<std::string_view, 12> kMonths = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                      "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

bool all_digits(std::string_view s) {
    if (s.empty()) return false;
    for (char c : s)
        if (c < '0' || c > '9') return false;
    return true;
}

bool digits_at(std::string_view s, std::size_t pos, std::size_t count) {
    return pos + count <= s.size() && all_digits(s.substr(pos, count));
}

bool is_lower_hex(std::string_view s) {
    for (char c : s)
        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
    return !s.empty();
}

// "<start>-<end>" of plain digits; v2 also allows a '-' before the start ("step-1-0").
bool parse_step_range(std::string_view s, bool allow_negative_start, std::int64_t& first, std::int64_t& last) {
    const bool negative = allow_negative_start && !s.empty() && s[0] == '-';
    const std::size_t dash = s.find('-', negative ? 1 : 0);
    if (dash == std::string_view::npos) return false;
    const std::string_view a = s.substr(negative ? 1 : 0, dash - (negative ? 1 : 0));
    const std::string_view b = s.substr(dash + 1);
    if (!all_digits(a) || !all_digits(b) || a.size() > 18 || b.size() > 18) return false;
    first = *parse_int(a) * (negative ? -1 : 1);
    last = *parse_int(b);
    return true;
}

}  // namespace

bool is_known_v1_prefix(std::string_view prefix) {
    for (auto p : kV1Prefixes)
        if (p == prefix) return true;
    return false;
}

std::optional<RunDirName> parse_run_dir_name(std::string_view name) {
    // Mon DD _ HH - MM - SS  = 14 chars, then "-rank", digits, "-", 8 hex.
    if (name.size() < 14 + 5 + 1 + 1 + 8) return std::nullopt;
    bool month_ok = false;
    for (auto m : kMonths)
        if (name.substr(0, 3) == m) month_ok = true;
    if (!month_ok || !digits_at(name, 3, 2) || name[5] != '_' || !digits_at(name, 6, 2) || name[8] != '-' ||
        !digits_at(name, 9, 2) || name[11] != '-' || !digits_at(name, 12, 2))
        return std::nullopt;
    std::string_view rest = name.substr(14);
    if (rest.substr(0, 5) != "-rank") return std::nullopt;
    rest.remove_prefix(5);
    std::size_t dash = rest.find('-');
    if (dash == std::string_view::npos || dash == 0 || dash > 5 || !all_digits(rest.substr(0, dash)))
        return std::nullopt;
    std::string_view uid = rest.substr(dash + 1);
    if (uid.size() != 8 || !is_lower_hex(uid)) return std::nullopt;
    RunDirName out;
    out.time_label = std::string(name.substr(0, 14));
    out.rank = static_cast<int>(*parse_int(rest.substr(0, dash)));
    out.uid = std::string(uid);
    return out;
}

std::optional<int> parse_v2_rank_dir_name(std::string_view name) {
    if (name.substr(0, 5) != "rank_") return std::nullopt;
    std::string_view digits = name.substr(5);
    if (digits.size() > 6 || !all_digits(digits)) return std::nullopt;
    return static_cast<int>(*parse_int(digits));
}

std::optional<CsvFileName> parse_v1_csv_name(std::string_view name) {
    if (name == "stack_info.csv") return CsvFileName{CsvRole::stack_info, "stack_info", 0, 0};
    if (name.size() < 4 || name.substr(name.size() - 4) != ".csv") return std::nullopt;
    std::string_view stem = name.substr(0, name.size() - 4);
    // Optional "_part_<n>" written only when one write exceeds a million rows.
    if (auto part = stem.rfind("_part_"); part != std::string_view::npos && all_digits(stem.substr(part + 6)))
        stem = stem.substr(0, part);
    std::size_t us = stem.rfind('_');
    if (us == std::string_view::npos) return std::nullopt;
    CsvFileName out;
    if (!parse_step_range(stem.substr(us + 1), false, out.first_step, out.last_step)) return std::nullopt;
    std::string_view prefix = stem.substr(0, us);
    if (!is_known_v1_prefix(prefix)) return std::nullopt;
    out.kind = std::string(prefix);
    return out;
}

std::optional<CsvFileName> parse_v2_csv_name(std::string_view name) {
    if (name.size() < 5 || name.substr(name.size() - 4) != ".csv") return std::nullopt;
    std::string_view stem = name.substr(0, name.size() - 4);
    CsvFileName out;
    std::size_t pos = stem.rfind("_step");
    if (pos != std::string_view::npos && parse_step_range(stem.substr(pos + 5), true, out.first_step, out.last_step)) {
        out.kind = std::string(stem.substr(0, pos));
    } else {
        out.kind = std::string(stem);
    }
    if (out.kind.empty()) return std::nullopt;
    for (char c : out.kind)
        if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
              c == '-'))
            return std::nullopt;
    return out;
}

bool is_ignored_monitor_child(std::string_view name) {
    return name == "anomaly_detected" || name == "module_struct" || name.ends_with("-csv2tensorboard_by_step");
}

std::int64_t time_label_order(std::string_view label) {
    static constexpr std::array<std::string_view, 12> months = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    if (label.size() < 4) return -1;
    int year = 0, mon = 0, mday = 0, h = 0, m = 0, s = 0, ms = 0;
    if (const std::string text(label);
        std::sscanf(text.c_str(), "%4d-%2d-%2d %2d:%2d:%2d,%3d", &year, &mon, &mday, &h, &m, &s, &ms) >= 6)
        return ((((((static_cast<std::int64_t>(year) * 13 + mon) * 32 + mday) * 24 + h) * 60 + m) * 60 + s) * 1000) +
               ms;
    const auto month = std::find(months.begin(), months.end(), label.substr(0, 3));
    const std::string rest(label.substr(3));
    int day = 0, hour = 0, minute = 0, second = 0;
    if (month == months.end() || std::sscanf(rest.c_str(), "%2d_%2d-%2d-%2d", &day, &hour, &minute, &second) != 4)
        return -1;
    return ((((month - months.begin()) * 32 + day) * 24 + hour) * 60 + minute) * 60 + second;
}

}  // namespace msmon
