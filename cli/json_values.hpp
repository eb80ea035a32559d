// Values as every command's JSON writes them, so that one field has one type everywhere.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace msmon {

// A number; NaN and ±Inf (which JSON lacks) as the text "nan", "inf", "-inf".
nlohmann::ordered_json number_or_text(double v);

// vpp_stage as a number, as rank is; null for a value with no stage (MindFormers' loss, global norm, ...).
nlohmann::ordered_json vpp_stage_json(std::string_view text);

// Rows of JSON objects as CSV: a header of every key in the order keys first appear, one line per row. A string
// is written as it is, null as an empty field, anything else as its JSON text; fields are quoted per RFC 4180.
// On a terminal each field is escaped for display first (the names come from files other users write).
std::string json_rows_as_csv(const nlohmann::ordered_json& rows, bool terminal);

}  // namespace msmon
