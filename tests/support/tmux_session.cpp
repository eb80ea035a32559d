// tmux through popen: a private socket per session (-L) so tests never touch the user's tmux.
#include "tests/support/tmux_session.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

namespace msmon::test {

namespace {

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string run_capture(const std::string& cmd) {
    std::string out;
    FILE* p = ::popen(cmd.c_str(), "r");
    if (!p) return out;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
    return out;
}

}  // namespace

bool TmuxSession::available() {
    return std::system("command -v tmux >/dev/null 2>&1") == 0;
}

TmuxSession::TmuxSession(const std::string& command, int width, int height,
                         const std::map<std::string, std::string>& env) {
    static int counter = 0;
    socket_ = "msmon-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    std::string env_prefix = "env";
    for (const auto& [k, v] : env) env_prefix += " " + k + "=" + shell_quote(v);
    tmux("-f /dev/null new-session -d -x " + std::to_string(width) + " -y " + std::to_string(height) + " " +
         shell_quote(env_prefix + " sh -c " + shell_quote(command)));
    tmux("set-option -g status off");
    tmux("set-option -g remain-on-exit on");
}

TmuxSession::~TmuxSession() {
    tmux("kill-server");
}

std::string TmuxSession::tmux(const std::string& args) const {
    return run_capture("tmux -L " + socket_ + " " + args + " 2>/dev/null");
}

void TmuxSession::send_keys(const std::string& keys, bool literal) {
    tmux("send-keys -t 0 " + std::string(literal ? "-l " : "") + shell_quote(keys));
}

void TmuxSession::resize(int width, int height) {
    tmux("resize-window -t 0 -x " + std::to_string(width) + " -y " + std::to_string(height));
}

void TmuxSession::record_output(const std::string& path) {
    tmux("pipe-pane -o -t 0 " + shell_quote("cat >> " + shell_quote(path)));
}

std::string TmuxSession::capture() const {
    return tmux("capture-pane -p -t 0");
}

std::string TmuxSession::capture_styled() const {
    return tmux("capture-pane -p -e -t 0");
}

namespace {

// Walks styled text: `on_text(byte, attributes)` for every byte of text, SGR sequences applied as they come.
template <typename F>
void walk_styled(const std::string& line, F on_text) {
    bool bold = false, dim = false, reverse = false;
    for (std::size_t i = 0; i < line.size(); ++i) {
        if (line[i] != '\x1b') {
            on_text(line[i], bold, dim, reverse);
            continue;
        }
        if (i + 1 >= line.size() || line[i + 1] != '[') {  // another escape: skip it and its one final byte
            ++i;
            continue;
        }
        std::size_t end = i + 2;
        while (end < line.size() && !(line[end] >= 0x40 && line[end] <= 0x7e)) ++end;
        if (end < line.size() && line[end] == 'm') {
            std::vector<int> params;
            std::string num;
            for (std::size_t k = i + 2; k <= end; ++k) {
                if (k == end || line[k] == ';') {
                    params.push_back(num.empty() ? 0 : std::atoi(num.c_str()));
                    num.clear();
                } else {
                    num.push_back(line[k]);
                }
            }
            for (std::size_t k = 0; k < params.size(); ++k) {
                const int p = params[k];
                if (p == 0) bold = dim = reverse = false;
                else if (p == 1) bold = true;
                else if (p == 2) dim = true;
                else if (p == 7) reverse = true;
                else if (p == 22) bold = dim = false;
                else if (p == 27) reverse = false;
                else if (p == 38 || p == 48 || p == 58)  // extended colour: 5;N or 2;R;G;B
                    k += k + 1 < params.size() && params[k + 1] == 5 ? 2 : 4;
            }
        }
        i = end;
    }
}

}  // namespace

std::vector<std::vector<std::string>> styled_runs(const std::string& styled_screen, Sgr attribute) {
    std::vector<std::vector<std::string>> lines(1);
    bool in_run = false;
    walk_styled(styled_screen, [&](char c, bool bold, bool dim, bool reverse) {
        if (c == '\n') {
            lines.emplace_back();
            in_run = false;
            return;
        }
        const bool on = attribute == Sgr::bold ? bold : attribute == Sgr::dim ? dim : reverse;
        if (on && !in_run) lines.back().emplace_back();
        if (on) lines.back().back().push_back(c);
        in_run = on;
    });
    return lines;
}

std::string plain_text(const std::string& styled) {
    std::string out;
    walk_styled(styled, [&](char c, bool, bool, bool) { out.push_back(c); });
    return out;
}

bool TmuxSession::alive() const {
    return tmux("display-message -p -t 0 '#{pane_dead}'").find('0') != std::string::npos;
}

std::string TmuxSession::wait_for(const std::string& text, std::chrono::milliseconds timeout) const {
    std::string screen = screen_when([&](const std::string& s) { return s.find(text) != std::string::npos; }, timeout);
    return screen.find(text) == std::string::npos ? "" : screen;
}

std::string TmuxSession::screen_when(const std::function<bool(const std::string&)>& ok,
                                     std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string screen;
    while (std::chrono::steady_clock::now() < deadline) {
        screen = capture();
        if (ok(screen)) {
            // Half a frame (the title redrawn, the rows below not yet) passes in milliseconds; a frame whole
            // on the screen stays. A live screen may never hold still: then the last one on which `ok` holds.
            for (int i = 0; i < 8; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(40));
                std::string again = capture();
                if (again == screen || !ok(again)) break;
                screen = std::move(again);
            }
            return screen;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    return screen;
}

std::vector<std::string> lines_of(const std::string& screen) {
    std::vector<std::string> out;
    std::istringstream in(screen);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

std::map<std::string, std::string> tmux_env(const TempDir& tmp) {
    return {{"LANG", "C.UTF-8"},
            {"LC_ALL", "C.UTF-8"},
            {"TERM", "xterm-256color"},
            {"XDG_STATE_HOME", tmp / "state"},
            {"XDG_CACHE_HOME", tmp / "cache"},
            {"XDG_CONFIG_HOME", tmp / "config"}};
}

}  // namespace msmon::test
