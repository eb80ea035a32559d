// tmux through popen: a private socket per session (-L) so tests never touch the user's tmux.
#include "tests/support/tmux_session.hpp"

#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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

std::chrono::milliseconds TmuxSession::exit_limit() {
#ifdef MSMON_SANITIZED
    return std::chrono::milliseconds(20000);
#else
    return std::chrono::milliseconds(5000);
#endif
}

std::chrono::milliseconds TmuxSession::settle_limit() {
#ifdef MSMON_SANITIZED
    return std::chrono::milliseconds(90000);
#else
    return std::chrono::milliseconds(30000);
#endif
}

TmuxSession::TmuxSession(const std::string& command, int width, int height,
                         const std::map<std::string, std::string>& env) {
    static int counter = 0;
    socket_ = "msmon-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
    std::map<std::string, std::string> all = env;
    if (command.find("msmon-tui") != std::string::npos) {
        // The program's report goes to a folder of the session's own (ProgramReport watches the folder).
        std::string tmpl = (std::filesystem::temp_directory_path() / "msmon-tmux-XXXXXX").string();
        if (::mkdtemp(tmpl.data())) {
            report_dir_ = tmpl;
            report_ = std::make_unique<ProgramReport>(report_dir_ + "/events");
            all["MSMON_TUI_EVENTS"] = report_->path();
        }
    }
    std::string env_prefix = "env";
    for (const auto& [k, v] : all) env_prefix += " " + k + "=" + shell_quote(v);
    tmux("-f /dev/null new-session -d -x " + std::to_string(width) + " -y " + std::to_string(height) + " " +
         shell_quote(env_prefix + " sh -c " + shell_quote(command)));
    tmux("set-option -g status off");
    tmux("set-option -g remain-on-exit on");
    pane_pid_ = std::atol(tmux("display-message -p -t 0 '#{pane_pid}'").c_str());
}

namespace {

// The processes of a process group that have not exited (zombies are exited).
std::vector<long> live_members(long pgid) {
    std::vector<long> out;
    DIR* d = ::opendir("/proc");
    if (!d) return out;
    while (dirent* e = ::readdir(d)) {
        const long pid = std::atol(e->d_name);
        if (pid <= 0) continue;
        std::ifstream in(std::string("/proc/") + e->d_name + "/stat");
        std::string stat;
        std::getline(in, stat);
        const auto close = stat.rfind(')');
        if (close == std::string::npos) continue;
        std::istringstream rest(stat.substr(close + 2));
        char state = 0;
        long ppid = 0, pgrp = 0;
        rest >> state >> ppid >> pgrp;
        if (pgrp == pgid && state != 'Z' && state != 'X') out.push_back(pid);
    }
    ::closedir(d);
    return out;
}

}  // namespace

void TmuxSession::end_program() {
    if (pane_pid_ <= 0) return;
    // tmux made the pane's shell the leader of its own process group; the program runs in it.
    if (live_members(pane_pid_).empty()) return;
    // A program the test asked to quit (q) may be in its exit already (a sanitizer's leak check): a signal in the
    // middle of that can hang it, so it gets a moment on its own first.
    const auto own_exit = std::chrono::steady_clock::now() + exit_limit() / 4;
    while (!live_members(pane_pid_).empty() && std::chrono::steady_clock::now() < own_exit)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // paces the look at /proc
    if (live_members(pane_pid_).empty()) return;
    ::kill(static_cast<pid_t>(-pane_pid_), SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + exit_limit();
    while (!live_members(pane_pid_).empty()) {
        if (std::chrono::steady_clock::now() > deadline) {
            std::string stuck;
            for (long pid : live_members(pane_pid_)) {
                std::ifstream cmd("/proc/" + std::to_string(pid) + "/cmdline");
                std::string argv0;
                std::getline(cmd, argv0, '\0');
                stuck += " " + std::to_string(pid) + " (" + argv0 + ")";
            }
            ::kill(static_cast<pid_t>(-pane_pid_), SIGKILL);
            ADD_FAILURE() << "the program in tmux did not exit within " << exit_limit().count()
                          << " ms of SIGTERM; killed:" << stuck;
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // paces the look at /proc
    }
}

TmuxSession::~TmuxSession() {
    end_program();
    tmux("kill-server");
    if (!report_dir_.empty()) {
        std::error_code ec;
        std::filesystem::remove_all(report_dir_, ec);
    }
}

std::string TmuxSession::settled(Wait what) const {
    if (!settle(what)) ADD_FAILURE() << wait_error_;
    return capture();
}

std::string TmuxSession::settled_styled(Wait what) const {
    if (!settle(what)) ADD_FAILURE() << wait_error_;
    return capture_styled();
}

bool TmuxSession::next_frame(std::chrono::milliseconds timeout) const {
    if (!report_) return true;
    if (!settle(Wait::input, timeout)) return false;
    if (report_->wait_frame_after(report_->frames(), std::chrono::steady_clock::now() + timeout)) return true;
    wait_error_ = "msmon-tui drew no frame within " + std::to_string(timeout.count()) + " ms";
    return false;
}

std::optional<IdlePoint> TmuxSession::idle_point() const {
    return report_ ? report_->last_idle() : std::nullopt;
}

bool TmuxSession::terminal_shows(std::uint64_t sync, std::uint64_t frames,
                                 std::chrono::steady_clock::time_point deadline) const {
    const std::string want = "msmon-sync-";
    while (true) {
        const std::string title = tmux("display-message -p -t 0 '#{pane_title}'");
        if (title.rfind(want, 0) == 0) {
            char* end = nullptr;
            const std::uint64_t shown_sync = std::strtoull(title.c_str() + want.size(), &end, 10);
            const auto at = title.find(" frame-");
            const std::uint64_t shown_frames =
                at == std::string::npos ? 0 : std::strtoull(title.c_str() + at + 7, nullptr, 10);
            if (shown_sync >= sync && shown_frames >= frames) return true;
        }
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));  // paces the look: tmux reads the pty soon
    }
}

bool TmuxSession::settle(Wait what, std::chrono::milliseconds timeout) const {
    if (!report_) return true;
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + timeout;
    const long long since = std::chrono::duration_cast<std::chrono::nanoseconds>(start.time_since_epoch()).count();
    tmux("send-keys -t 0 C-]");
    const std::uint64_t k = ++syncs_sent_;
    const auto ok = [&](const IdlePoint& p) {
        return p.sync >= k && (what == Wait::keys || p.ingest == -1 || p.ingest >= since) &&
               (what != Wait::timers || (p.held == -1 && p.settle == -1));
    };
    while (true) {
        // In slices: a program that exited writes nothing more, and its last screen is what there is.
        const auto slice = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(500));
        if (const auto idle = report_->wait_idle(ok, slice)) {
            if (terminal_shows(k, idle->frames, deadline)) return true;
            wait_error_ =
                "msmon-tui was idle after sync " + std::to_string(k) + " but the terminal's title never showed it";
            return false;
        }
        // A program that quit draws nothing more: its last screen (or the shell's after it) is what there is.
        if (!alive() || report_->ended()) return true;
        if (std::chrono::steady_clock::now() >= deadline) break;
    }
    const auto last = report_->last_idle();
    wait_error_ = "msmon-tui did not settle within " + std::to_string(timeout.count()) + " ms (sync " +
                  std::to_string(k) + ", files since " + std::to_string(since) + "); its last idle point: " +
                  (last ? "sync " + std::to_string(last->sync) + " ingest " + std::to_string(last->ingest) + " held " +
                              std::to_string(last->held) + " settle " + std::to_string(last->settle)
                        : std::string(report_->started() ? "none" : "it never opened its report"));
    return false;
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

std::optional<std::string> TmuxSession::output_after_quit(const std::string& path) {
    send_keys("q", true);
    if (!wait_exit()) {
        wait_error_ = "the program did not exit on q within " + std::to_string(exit_limit().count()) + " ms";
        return std::nullopt;
    }
    // tmux passes the last bytes on through pipe-pane's own process: they reach the file a moment later.
    const auto ended = [&] { return read_file(path).find("\x1b[?1049l") != std::string::npos; };
    if (wait_until(ended, std::chrono::milliseconds(5000)).count() < 0) {
        const std::string bytes = read_file(path);
        wait_error_ = "the recording never showed the terminal given back; its last bytes: " +
                      bytes.substr(bytes.size() > 120 ? bytes.size() - 120 : 0);
        return std::nullopt;
    }
    return without_sync_markers(read_file(path));
}

std::string TmuxSession::capture() const {
    return whole_frame("");
}

std::string TmuxSession::whole_frame(const std::string& options) const {
    const std::string command = "capture-pane -p " + options + "-t 0";
    if (!report_ || !report_->started()) return tmux(command);
    const auto deadline = std::chrono::steady_clock::now() + settle_limit();
    while (true) {
        report_->refresh();
        const std::uint64_t drawn = report_->frames(), begun = report_->frames_begun();
        // Nothing drawn yet, or the program quit: the terminal as it is.
        if (begun == 0 || report_->ended()) return tmux(command);
        const auto slice = std::min(deadline, std::chrono::steady_clock::now() + std::chrono::milliseconds(500));
        if (begun > drawn) {
            report_->wait_frame_after(drawn, slice);  // a frame on its way to the terminal: its end
        } else if (terminal_shows(0, drawn, slice)) {
            std::string screen = tmux(command);
            report_->refresh();
            if (report_->frames_begun() == begun) return screen;  // no byte of another frame came before it
        }
        // A program that ended (or never drew) leaves its last screen as it is.
        if (!alive() || std::chrono::steady_clock::now() >= deadline) return tmux(command);
    }
}

std::string TmuxSession::capture_styled() const {
    return whole_frame("-e ");
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

std::vector<long> TmuxSession::processes() const {
    return pane_pid_ > 0 ? live_members(pane_pid_) : std::vector<long>{};
}

bool TmuxSession::wait_exit(std::chrono::milliseconds timeout) const {
    if (pane_pid_ <= 0) return !alive();
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!live_members(pane_pid_).empty()) {
        if (std::chrono::steady_clock::now() > deadline) return false;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));  // paces the look at /proc
    }
    return true;
}

std::string without_sync_markers(const std::string& bytes) {
    static const std::string open = "\x1b]2;msmon-sync-", close = "\x1b\\";
    std::string out;
    std::size_t from = 0;
    for (std::size_t at; (at = bytes.find(open, from)) != std::string::npos;) {
        const std::size_t end = bytes.find(close, at);
        if (end == std::string::npos) break;
        out.append(bytes, from, at - from);
        from = end + close.size();
    }
    out.append(bytes, from);
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
    if (report_) {
        // Settled, the screen is whole; if it is not yet what the test waits for, each new frame is looked at.
        while (true) {
            // Once msmon-tui quit, what follows it in the pane (a shell's output) is looked at as any program's.
            if (report_->ended()) return poll_screen(ok, deadline);
            const auto left =
                std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
            if (!settle(Wait::keys, std::max(left, std::chrono::milliseconds(0)))) return capture();
            const std::uint64_t frames = report_->frames();
            screen = capture();
            if (ok(screen) || !alive() || std::chrono::steady_clock::now() >= deadline) return screen;
            report_->wait_frame_after(frames, deadline);
        }
    }
    return poll_screen(ok, deadline);
}

std::string TmuxSession::busy_screen_with(const std::string& text, std::chrono::milliseconds timeout) const {
    const std::string screen = poll_screen([&](const std::string& s) { return s.find(text) != std::string::npos; },
                                           std::chrono::steady_clock::now() + timeout);
    return screen.find(text) == std::string::npos ? "" : screen;
}

// Another program reports nothing, and a busy one is looked at as it is: the screen is taken as tmux holds it
// (not a whole frame, capture()) until it shows what is waited for and holds still.
std::string TmuxSession::poll_screen(const std::function<bool(const std::string&)>& ok,
                                     std::chrono::steady_clock::time_point deadline) const {
    std::string screen;
    while (std::chrono::steady_clock::now() < deadline) {
        screen = tmux("capture-pane -p -t 0");
        if (ok(screen)) {
            // Half a frame (the title redrawn, the rows below not yet) passes in milliseconds; a frame whole
            // on the screen stays. A live screen may never hold still: then the last one on which `ok` holds.
            for (int i = 0; i < 8; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(40));  // paces the look: did it hold still?
                std::string again = tmux("capture-pane -p -t 0");
                if (again == screen || !ok(again)) break;
                screen = std::move(again);
            }
            return screen;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(30));  // paces the look at the screen
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
