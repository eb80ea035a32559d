#include "cli/json_values.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "core/text/csv_record.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

nlohmann::ordered_json number_or_text(double v) {
    if (std::isfinite(v)) return v;
    return format_double(v);
}

nlohmann::ordered_json vpp_stage_json(std::string_view text) {
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return nullptr;
    return v;
}

std::string json_rows_as_csv(const nlohmann::ordered_json& rows, bool terminal) {
    std::vector<std::string> columns;
    std::set<std::string> seen;
    for (const auto& row : rows)
        for (auto it = row.begin(); it != row.end(); ++it)
            if (seen.insert(it.key()).second) columns.push_back(it.key());
    std::string out;
    auto field = [&](std::string_view text) { append_csv_field(out, terminal ? escape_for_display(text) : text); };
    for (std::size_t c = 0; c < columns.size(); ++c) {
        if (c) out += ',';
        field(columns[c]);
    }
    out += '\n';
    for (const auto& row : rows) {
        for (std::size_t c = 0; c < columns.size(); ++c) {
            if (c) out += ',';
            const auto it = row.find(columns[c]);
            if (it == row.end() || it->is_null()) continue;
            field(it->is_string() ? it->get<std::string>()
                                  : it->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
        }
        out += '\n';
    }
    return out;
}

}  // namespace msmon
