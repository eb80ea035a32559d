// tmux through popen: a private socket per session (-L) so tests never touch the user's tmux.
#include "tests/support/tmux_session.hpp"

#include <unistd.h>

#include <cstdio>
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

bool TmuxSession::available() { return std::system("command -v tmux >/dev/null 2>&1") == 0; }

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

TmuxSession::~TmuxSession() { tmux("kill-server"); }

std::string TmuxSession::tmux(const std::string& args) const {
    return run_capture("tmux -L " + socket_ + " " + args + " 2>/dev/null");
}

void TmuxSession::send_keys(const std::string& keys, bool literal) {
    tmux("send-keys -t 0 " + std::string(literal ? "-l " : "") + shell_quote(keys));
}

void TmuxSession::resize(int width, int height) {
    tmux("resize-window -t 0 -x " + std::to_string(width) + " -y " + std::to_string(height));
}

void TmuxSession::record_output(const std::string& path) { tmux("pipe-pane -o -t 0 " + shell_quote("cat >> " + shell_quote(path))); }

std::string TmuxSession::capture() const { return tmux("capture-pane -p -t 0"); }

bool TmuxSession::alive() const { return tmux("display-message -p -t 0 '#{pane_dead}'").find('0') != std::string::npos; }

std::string TmuxSession::wait_for(const std::string& text, std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
        std::string screen = capture();
        if (screen.find(text) != std::string::npos) {
            // Half a frame (the title redrawn, the rows below not yet) passes in milliseconds; a frame whole on the
            // screen stays. A live screen may never hold still: then the last one that shows the text.
            for (int i = 0; i < 8; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(40));
                std::string again = capture();
                if (again == screen || again.find(text) == std::string::npos) break;
                screen = std::move(again);
            }
            return screen;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(30));
    }
    return "";
}

}  // namespace msmon::test
