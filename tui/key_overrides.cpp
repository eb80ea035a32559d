// Moving a binding to another key, label included.
#include "tui/key_overrides.hpp"

#include <algorithm>

namespace msmon::tui {

namespace {

bool printable(int key) {
    return key > 0x20 && key < 0x7f;
}

bool binds(const KeyTable& table, int key) {
    return std::any_of(table.begin(), table.end(), [&](const KeyBinding& b) {
        return std::find(b.keys.begin(), b.keys.end(), key) != b.keys.end();
    });
}

}  // namespace

bool parse_key_override(const std::string& key, const std::string& value, std::string& table, int& from, int& to,
                        std::string& error) {
    const auto colon = key.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 2 != key.size() ||
        !printable(static_cast<unsigned char>(key.back()))) {
        error = "a key override is \"VIEW:K\" = \"K2\" (one printable character each), not \"" + key + "\"";
        return false;
    }
    if (value.size() != 1 || !printable(static_cast<unsigned char>(value[0]))) {
        error = "the new key for " + key + " must be one printable character, not \"" + value + "\"";
        return false;
    }
    table = key.substr(0, colon);
    from = static_cast<unsigned char>(key.back());
    to = static_cast<unsigned char>(value[0]);
    return true;
}

bool rebind_key(KeyTable& table, int from, int to, const std::vector<const KeyTable*>& taken_elsewhere,
                std::string& error) {
    const std::string f(1, static_cast<char>(from)), t(1, static_cast<char>(to));
    auto it = std::find_if(table.begin(), table.end(), [&](const KeyBinding& b) {
        return std::find(b.keys.begin(), b.keys.end(), from) != b.keys.end();
    });
    if (it == table.end()) {
        error = "no key '" + f + "' to move there";
        return false;
    }
    if (from == to) return true;
    if (binds(table, to)) {
        error = "'" + t + "' is taken there";
        return false;
    }
    for (const KeyTable* other : taken_elsewhere)
        if (other && binds(*other, to)) {
            error = "'" + t + "' is a key valid everywhere";
            return false;
        }
    std::replace(it->keys.begin(), it->keys.end(), from, to);
    // The label's part naming the key: "w" → "W", "h/Left" → "H/Left".
    std::string label;
    std::size_t start = 0;
    while (start <= it->label.size()) {
        const auto slash = it->label.find('/', start);
        std::string part = it->label.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (part == f) part = t;
        label += (label.empty() && start == 0 ? "" : "/") + part;
        if (slash == std::string::npos) break;
        start = slash + 1;
    }
    it->label = label;
    return true;
}

}  // namespace msmon::tui
