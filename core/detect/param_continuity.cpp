// Pairing param_updated(t) with param_origin(t+1) and comparing their printed statistics.
#include "core/detect/param_continuity.hpp"

#include <algorithm>
#include <cmath>

#include "core/text/number_text.hpp"

namespace msmon {

bool has_continuity_partner(std::string_view kind) {
    return kind == "param_origin" || kind == "param_updated";
}

std::string_view continuity_partner(std::string_view kind) {
    return kind == "param_origin" ? "param_updated" : "param_origin";
}

std::int64_t continuity_partner_step(std::string_view kind, std::int64_t step) {
    return kind == "param_origin" ? step - 1 : step + 1;
}

std::optional<ContinuityBreak> compare_param_rows(const std::vector<std::string>& updated_ops,
                                                  const std::vector<double>& updated,
                                                  const std::vector<std::string>& origin_ops,
                                                  const std::vector<double>& origin) {
    ContinuityBreak b;
    std::optional<ContinuityBreak> first;
    for (std::size_t i = 0; i < updated_ops.size() && i < updated.size(); ++i) {
        const auto at = std::find(origin_ops.begin(), origin_ops.end(), updated_ops[i]);
        const auto j = static_cast<std::size_t>(at - origin_ops.begin());
        if (at == origin_ops.end() || j >= origin.size()) continue;
        ++b.ops_compared;
        const double u = updated[i], o = origin[j];
        if (u == o || (std::isnan(u) && std::isnan(o))) continue;
        ++b.ops_differing;
        if (!first || updated_ops[i] == "norm") first = ContinuityBreak{updated_ops[i], u, o, 0, 0};
    }
    if (!first) return std::nullopt;
    first->ops_differing = b.ops_differing;
    first->ops_compared = b.ops_compared;
    return first;
}

void hold_param_row(std::vector<HeldParamRow>& held, HeldParamRow row, std::size_t max) {
    const auto at = std::find_if(held.begin(), held.end(), [&](const HeldParamRow& h) { return h.step == row.step; });
    if (at != held.end()) *at = std::move(row);  // a file read again: its last reading
    else held.push_back(std::move(row));
    std::sort(held.begin(), held.end(), [](const HeldParamRow& a, const HeldParamRow& b) { return a.step < b.step; });
    if (held.size() > max) held.erase(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(held.size() - max));
}

std::string encode_held_params(const std::vector<HeldParamRow>& held) {
    std::string out;
    for (const auto& h : held) {
        if (!out.empty()) out += '/';
        out += std::to_string(h.step) + "@" + std::to_string(h.layout_id) + ":";
        for (std::size_t i = 0; i < h.values.size(); ++i) out += (i ? "," : "") + format_double(h.values[i]);
    }
    return out;
}

std::vector<HeldParamRow> decode_held_params(std::string_view text) {
    std::vector<HeldParamRow> out;
    while (!text.empty()) {
        const auto slash = text.find('/');
        const std::string_view item = text.substr(0, slash);
        text = slash == std::string_view::npos ? std::string_view() : text.substr(slash + 1);
        const auto at = item.find('@'), colon = item.find(':');
        if (at == std::string_view::npos || colon == std::string_view::npos || colon < at) continue;
        const auto step = parse_int(item.substr(0, at));
        const auto layout = parse_int(item.substr(at + 1, colon - at - 1));
        if (!step || !layout) continue;
        HeldParamRow h{*step, static_cast<std::int32_t>(*layout), {}};
        std::string_view list = item.substr(colon + 1);
        while (!list.empty()) {
            const auto comma = list.find(',');
            h.values.push_back(parse_double(list.substr(0, comma)).value_or(std::nan("")));
            list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        }
        out.push_back(std::move(h));
    }
    return out;
}

}  // namespace msmon
