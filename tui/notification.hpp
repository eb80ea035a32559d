// What the TUI writes to the terminal for a new incident: the bell (tmux marks the window, a terminal may flash
// or sound), and a desktop notification in the two forms terminals understand — OSC 9 (iTerm2, WezTerm, kitty,
// Windows Terminal, foot, Ghostty) and OSC 777 (rxvt-unicode, foot, WezTerm, Ghostty, VTE). Inside tmux they are
// wrapped for passthrough (`set -g allow-passthrough on` lets them reach the outer terminal; without it tmux
// drops them quietly). Terminals ignore an OSC they do not know.
#pragma once

#include <string>

namespace msmon::tui {

struct NotifyTarget {
    bool bell = true;
    bool desktop = true;  // OSC 9 and OSC 777
    bool tmux = false;    // $TMUX is set: wrap the OSCs in tmux's DCS passthrough
};

// The bytes for one notification. `text` is made safe first: control bytes become visible escapes, and it is
// cut to 200 bytes, so nothing in it can end the OSC early or start another sequence.
std::string notification_bytes(const std::string& text, const NotifyTarget& target);

// NotifyTarget from the environment ($TMUX) and the user's choices.
NotifyTarget notify_target_from_env(bool bell, bool desktop);

}  // namespace msmon::tui
