#include "cli/json_values.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>

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

}  // namespace msmon
