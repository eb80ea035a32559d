// Key overrides from msmon's settings ("keys": {"chart:w": "W"}): a binding moves from one key to another in its
// table, and its help label with it, so dispatch, the hint bar and `?` help agree. Only printable keys move; a key
// the table does not bind, or one already taken (in the table, or among the keys valid everywhere), is refused
// with the reason.
#pragma once

#include <string>
#include <vector>

#include "tui/key_table.hpp"

namespace msmon::tui {

// Moves the binding of `from` in `table` to `to`; `taken_elsewhere`: tables whose keys `to` must not shadow. False
// with `error` set when it cannot.
bool rebind_key(KeyTable& table, int from, int to, const std::vector<const KeyTable*>& taken_elsewhere,
                std::string& error);

// "chart:w" → ("chart", 'w'); a value "W" → 'W'. False when not that shape (one printable ASCII character).
bool parse_key_override(const std::string& key, const std::string& value, std::string& table, int& from, int& to,
                        std::string& error);

}  // namespace msmon::tui
