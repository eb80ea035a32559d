// Values as every command's JSON writes them, so that one field has one type everywhere.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace msmon {

// A number; NaN and ±Inf (which JSON lacks) as the text "nan", "inf", "-inf".
nlohmann::ordered_json number_or_text(double v);

// vpp_stage as a number, as rank is; null for a value with no stage (MindFormers' loss, global norm, ...).
nlohmann::ordered_json vpp_stage_json(std::string_view text);

}  // namespace msmon
