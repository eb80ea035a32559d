#include "tui/terminfo_fallback.hpp"

#include <curses.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <term.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

namespace msmon::tui {

namespace {

const TerminfoBlob* builtin(std::string_view name) {
    for (const TerminfoBlob& b : builtin_terminfo())
        if (name == b.name) return &b;
    return nullptr;
}

bool starts_with(std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
}

// ncurses can read a description of `term` where it looks (TERMINFO, ~/.terminfo, TERMINFO_DIRS, its own list).
bool described(const char* term) {
    int err = 0;
    if (::setupterm(term, STDOUT_FILENO, &err) != OK) return false;
    ::del_curterm(cur_term);
    return true;
}

bool write_file(const std::string& path, const TerminfoBlob& blob) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) return false;
    const bool ok = ::write(fd, blob.data, blob.size) == static_cast<ssize_t>(blob.size);
    return ::close(fd) == 0 && ok;
}

}  // namespace

const TerminfoBlob* stand_in_for(std::string_view term) {
    if (const TerminfoBlob* own = builtin(term)) return own;
    // The 256-colour description first (what terminals of today are), the plain one if that was not built in.
    auto pick = [](const char* rich, const char* plain) {
        const TerminfoBlob* b = builtin(rich);
        return b ? b : builtin(plain);
    };
    if (starts_with(term, "tmux")) return pick("tmux-256color", "tmux");
    if (starts_with(term, "screen")) return pick("screen-256color", "screen");
    if (starts_with(term, "xterm") || starts_with(term, "rxvt") || starts_with(term, "alacritty") ||
        starts_with(term, "kitty") || starts_with(term, "foot") || starts_with(term, "wezterm") ||
        starts_with(term, "gnome") || starts_with(term, "konsole") || starts_with(term, "vte") ||
        starts_with(term, "putty") || starts_with(term, "iterm"))
        return pick("xterm-256color", "xterm");
    if (starts_with(term, "linux")) return builtin("linux");
    if (starts_with(term, "vt1") || starts_with(term, "vt2") || term == "ansi") return builtin("vt100");
    return nullptr;
}

bool TerminfoFallback::prepare(std::string& note, std::string& error) {
    const char* env = std::getenv("TERM");
    const std::string term = env ? env : "";
    if (term.empty()) {
        error = "TERM is not set: set it to your terminal's type (TERM=xterm-256color for most terminals)";
        return false;
    }
    if (described(term.c_str())) return true;
    const TerminfoBlob* blob = stand_in_for(term);
    if (!blob) {
        error = "this node has no terminfo description of TERM=" + term +
                " and msmon-tui carries none close to it: run it with TERM=xterm-256color (or TERM=screen-256color "
                "inside screen or tmux), or install that description (ncurses-term)";
        return false;
    }
    // A private folder: mkdtemp makes it 0700 under a name nobody could have planted.
    std::string base = "/tmp";
    for (const char* var : {"XDG_RUNTIME_DIR", "TMPDIR"})
        if (const char* v = std::getenv(var); v && *v == '/' && std::filesystem::is_directory(v)) {
            base = v;
            break;
        }
    std::string pattern = base + "/msmon-terminfo-XXXXXX";
    if (!::mkdtemp(pattern.data())) {
        error = "no terminfo description of TERM=" + term + " here, and no private folder under " + base +
                " to put msmon-tui's own in: run it with TERM=xterm-256color";
        return false;
    }
    dir_ = pattern;
    const std::string sub = dir_ + "/" + std::string(1, blob->name[0]);
    if (::mkdir(sub.c_str(), 0700) != 0 || !write_file(sub + "/" + blob->name, *blob)) {
        error = "could not write msmon-tui's terminfo description of " + std::string(blob->name) + " under " + dir_;
        return false;
    }
    ::setenv("TERMINFO", dir_.c_str(), 1);
    ::setenv("TERM", blob->name, 1);
    if (!described(blob->name)) {
        error = "the built-in terminfo description of " + std::string(blob->name) + " did not load";
        return false;
    }
    note = "no terminfo description of TERM=" + term + " on this node: drawing as " + blob->name + " (built in)";
    return true;
}

TerminfoFallback::~TerminfoFallback() {
    if (dir_.empty()) return;
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
}

}  // namespace msmon::tui
