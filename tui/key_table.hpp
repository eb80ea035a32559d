// One declarative key table per view: the same entries dispatch keys and render the `?` help and the hint bar,
// so help can never drift from behaviour.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace msmon::tui {

// Keys as the views see them: printable characters are their code points; special keys below.
enum Key : int {
    kKeyNone = -1,
    kKeyUp = 0x110000,
    kKeyDown,
    kKeyLeft,
    kKeyRight,
    kKeyPageUp,
    kKeyPageDown,
    kKeyHome,
    kKeyEnd,
    kKeyEnter,
    kKeyEscape,
    kKeyBackspace,
    kKeyDelete,
    kKeyTab,
    kKeyBackTab,
    kKeyResize,
    kKeyMouseClick,
    kKeyWheelUp,
    kKeyWheelDown,
};

// What a handled key asks of the app.
enum class Reaction { none, redraw, reload };

struct KeyBinding {
    std::vector<int> keys;
    std::string label;  // as shown in help: "j/↓"
    std::string help;
    std::function<Reaction()> run;
};

using KeyTable = std::vector<KeyBinding>;

// Runs the binding for `key`; false if the table has none.
bool dispatch(const KeyTable& table, int key, Reaction& reaction);

}  // namespace msmon::tui
