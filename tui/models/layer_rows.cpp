#include "tui/models/layer_rows.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

namespace msmon::tui {

std::optional<int> layer_of(std::string_view name) {
    for (std::string_view key : {"layers.", "layer.", "layers_"}) {
        std::size_t at = 0;
        while ((at = name.find(key, at)) != std::string_view::npos) {
            const bool starts_word = at == 0 || name[at - 1] == '.' || name[at - 1] == '_';
            std::size_t i = at + key.size(), digits = 0;
            int n = 0;
            while (i < name.size() && std::isdigit(static_cast<unsigned char>(name[i])) && digits < 9)
                n = n * 10 + (name[i++] - '0'), ++digits;
            if (starts_word && digits > 0 && (i == name.size() || name[i] == '.' || name[i] == '_')) return n;
            at += key.size();
        }
    }
    return std::nullopt;
}

std::vector<LayerGroup> group_by_layer(const std::vector<ModuleRow>& rows) {
    std::vector<LayerGroup> groups;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto layer = layer_of(rows[i].name);
        if (groups.empty() || groups.back().layer != layer) groups.push_back({layer, i, 0});
        ++groups.back().count;
    }
    return groups;
}

double relative_level(double value, std::optional<double> reference) {
    if (!std::isfinite(value)) return std::numeric_limits<double>::quiet_NaN();
    if (!reference || *reference == 0 || value == 0 || !std::isfinite(*reference)) return 0;
    return std::log10(std::abs(value) / std::abs(*reference));
}

std::optional<double> recent_median(const std::vector<StepValue>& row, std::int64_t step, std::size_t window) {
    auto end =
        std::lower_bound(row.begin(), row.end(), step, [](const StepValue& p, std::int64_t s) { return p.step < s; });
    std::vector<double> values;
    while (end != row.begin() && values.size() < window) {
        --end;
        if (std::isfinite(end->value)) values.push_back(end->value);
    }
    if (values.empty()) return std::nullopt;
    const auto mid = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
    std::nth_element(values.begin(), mid, values.end());
    return *mid;
}

}  // namespace msmon::tui
