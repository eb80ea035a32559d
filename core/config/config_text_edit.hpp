// Saving a change into the user's own config text: only the text of the values that changed is rewritten. Key
// order, indentation, line breaks, how numbers are spelled (1e-3 stays 1e-3) and the final newline stay as the
// user wrote them; a value that changed is written in the style of the text around it (a one-line list stays on
// one line); a key that is added goes after the last key, in the file's own indentation and separators.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace msmon {

// The text of `after`, made from `text` (which parses to `before`) by rewriting only what differs; nullopt when the
// text cannot be edited in place (duplicate keys in an object that changed, a root that is not an object).
std::optional<std::string> edit_config_text_in_place(std::string_view text, const nlohmann::ordered_json& before,
                                                     const nlohmann::ordered_json& after);

// What a save writes: the in-place edit, or, when there is none, the whole document rendered afresh
// (render_monitor_config). An edit of a text up to kVerifiedEditBytes is parsed back and must equal `after`, else
// the document is rendered (a config of 300,000 targets is not parsed a third time; the fuzz target checks the
// edit itself).
inline constexpr std::size_t kVerifiedEditBytes = std::size_t{1} << 20;
std::string edit_config_text(std::string_view text, const nlohmann::ordered_json& before,
                             const nlohmann::ordered_json& after);

}  // namespace msmon
