// OSC 9 / OSC 777 notifications and the bell, wrapped for tmux when inside it.
#include "tui/notification.hpp"

#include <cstdlib>

#include "core/text/display_escape.hpp"

namespace msmon::tui {

namespace {

constexpr std::size_t kMaxText = 200;

// tmux passes "ESC P tmux; <sequence, each ESC doubled> ESC \" through to the outer terminal.
std::string tmux_wrapped(const std::string& seq) {
    std::string out = "\x1bPtmux;";
    for (char c : seq) {
        if (c == '\x1b') out += '\x1b';
        out += c;
    }
    out += "\x1b\\";
    return out;
}

}  // namespace

std::string notification_bytes(const std::string& text, const NotifyTarget& target) {
    std::string safe = escape_for_display(text);
    if (safe.size() > kMaxText) {
        std::size_t end = kMaxText;
        while (end > 0 && (static_cast<unsigned char>(safe[end]) & 0xC0) == 0x80) --end;
        safe.resize(end);
    }
    std::string out;
    if (target.bell) out += '\a';
    if (target.desktop) {
        // OSC 9's text must not begin with a digit and ';' (ConEmu reads "9;4;..." as a progress report).
        const std::string osc9 = "\x1b]9;msmon: " + safe + "\a";
        const std::string osc777 = "\x1b]777;notify;msmon;" + safe + "\a";
        out += target.tmux ? tmux_wrapped(osc9) + tmux_wrapped(osc777) : osc9 + osc777;
    }
    return out;
}

NotifyTarget notify_target_from_env(bool bell, bool desktop) {
    const char* tmux = std::getenv("TMUX");
    return NotifyTarget{bell, desktop, tmux && *tmux};
}

}  // namespace msmon::tui
