// Dispatch through a key table.
#include "tui/key_table.hpp"

#include <algorithm>

namespace msmon::tui {

bool dispatch(const KeyTable& table, int key, Reaction& reaction) {
    for (const auto& b : table)
        if (std::find(b.keys.begin(), b.keys.end(), key) != b.keys.end()) {
            reaction = b.run();
            return true;
        }
    return false;
}

}  // namespace msmon::tui
