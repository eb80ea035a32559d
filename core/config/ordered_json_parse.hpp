// Parses JSON into an ordered_json (keys in file order, as msprobe's json.load/json.dump keep them) in n log n:
// nlohmann's own parse inserts each key with a linear search of the object, so a config with 40,000 `targets`
// took 5 s to read. Duplicate keys behave as nlohmann's (and Python's): the last value, at the first one's place.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace msmon {

// False with `error` set (nlohmann's message) if `text` is not one JSON value.
bool parse_ordered_json(std::string_view text, nlohmann::ordered_json& out, std::string& error);

}  // namespace msmon
