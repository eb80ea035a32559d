// The live UI: the ingest thread follows the job and wakes the loop (an eventfd) on every commit; the loop sleeps
// in poll() on the keyboard and that wake-up, collects and composes at most 20 frames a second, and ends on q, a
// signal, or a terminal that went away.
#include <poll.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/notify/incident_hooks.hpp"
#include "core/signals/stop_request.hpp"
#include "core/text/display_escape.hpp"
#include "core/text/number_text.hpp"
#include "store/derived_reader.hpp"
#include "store/ingest_session.hpp"
#include "tui/idle_report.hpp"
#include "tui/launch_options.hpp"
#include "tui/models/backfill_text.hpp"
#include "tui/notification.hpp"
#include "tui/terminal.hpp"
#include "tui/terminfo_fallback.hpp"

namespace msmon::tui {

namespace {

// SIGTERM/SIGHUP/SIGINT end the loop like `q` does: the terminal is restored and the demo cleaned up.
// The handler may run on any thread: the wake descriptor is atomic (lock-free, so safe in a handler), and it is one
// eventfd for the whole process, never closed, since a handler may be writing to it on another thread as a loop ends.
std::atomic<bool> g_quit{false};
std::atomic<int> g_wake_fd{-1};

int process_wake_fd() {
    static const int fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    return fd;
}

extern "C" void on_quit_signal(int) {
    g_quit.store(true);
    request_stop();
    if (const int fd = g_wake_fd.load(); fd >= 0) {
        std::uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);
    }
}

struct QueuedKey {
    int key;
    MouseEvent mouse;
};

// ClickHouse is read on a helper thread while keys are read here: a ClickHouse that stopped answering held the
// screen, q included, until the query's timeout (30 s). A key that quits (or a signal, or the terminal gone) asks
// every request to give up (core/signals): false, and msmon-tui is gone within a second. Other keys wait in `keys`.
bool collect_while_reading_keys(App& app, std::string& failure, Terminal& term, std::deque<QueuedKey>& keys) {
    const std::vector<int> quit_keys = app.quit_keys();  // before the app is read on the other thread
    std::atomic<bool> done{false};
    std::thread collector([&] {
        collect_safely(app, failure);
        done.store(true);
    });
    bool quit = false;
    while (!done.load()) {
        pollfd p{term.input_fd(), POLLIN, 0};
        ::poll(&p, 1, 20);
        if (g_quit.load() || (p.revents & (POLLHUP | POLLERR | POLLNVAL))) quit = true;
        MouseEvent mouse;
        for (int key; !quit && (key = term.read_key(mouse)) != kKeyNone;) {
            if (std::find(quit_keys.begin(), quit_keys.end(), key) != quit_keys.end()) quit = true;
            else keys.push_back({key, mouse});
        }
        if (quit) request_stop();
    }
    collector.join();
    return !quit;
}

constexpr auto kIncidentNoticeTime = std::chrono::seconds(20);
// New incidents, announced: the bell and a desktop notification through the terminal, a notice on the status line,
// the user's --on-incident command. Incidents the store held before ingest caught up with the job are the
// backlog, known already: only what arrives while watching is news.
class IncidentAnnouncer {
public:
    // `said`: what the user should see of the command (it failed, hung, was dropped): the status line's notice.
    IncidentAnnouncer(const LaunchOptions& o, const std::string& store, std::function<void(const std::string&)> said)
        : target_(notify_target_from_env(o.bell, o.desktop_notify)),
          hooks_(kIncidentSettle,
                 IncidentCommand{o.on_incident, std::chrono::milliseconds(o.on_incident_timeout_ms),
                                 o.dir.empty() ? std::vector<std::string>{} : job_folders_of({o.dir}), store},
                 std::move(said)) {}  // `said` on the runner's thread; the runner logs it too
    // Quitting gives a command still running what is left of the stop's grace (0.8 s), then ends it with all it
    // started: msmon-tui is gone within 2 s.
    ~IncidentAnnouncer() { hooks_.finish(stop_grace_left()); }
    // A new incident waits to settle: read again soon even when nothing else changes.
    bool pending() const { return hooks_.pending(); }
    std::optional<NewIncidents::Clock::time_point> next_due() const { return hooks_.next_due(); }
    // Notifications written to the terminal so far.
    std::uint64_t notified() const { return notified_; }

    // After a collect: `live` once the backlog is read. Returns what the status line says of the newest incident
    // announced ("nan in grad_reduced at step 30, rank 1"), or "".
    // `progress`: where ingest's reading stood before the store was read (null: not ingesting here).
    std::string update(const IncidentIndex& index, bool live, Terminal& term, const ReadProgress* progress) {
        if (!index.grouped()) return "";
        // The first read once live holds the whole backlog (ingest had committed it before it said so).
        const bool first_live = live && !was_live_;
        was_live_ = live;
        if (!first_live && index.generation() == generation_ && !hooks_.pending()) return "";
        generation_ = index.generation();
        const auto set = index.set();
        if (!live || first_live) {
            hooks_.prime(set->anomalies);
            // Findings about steps every rank had written by then are backlog too, however late they are judged: a
            // replica check waiting on its window was judged on the idle timer after the catch-up and rang the bell
            // on opening a finished run (sdc-grad's fixture).
            if (first_live && progress && progress->all_ranks_at != INT64_MAX)
                backlog_through_ = progress->all_ranks_at;
            return "";
        }
        std::string last;
        for (const std::size_t i : hooks_.take(set->anomalies, set->incidents, NewIncidents::Clock::now(), progress)) {
            const Incident& inc = set->incidents[i];
            if (backlog_through_ && inc.first_step <= *backlog_through_) continue;
            hooks_.announce(set->anomalies, inc);
            if (target_.bell || target_.desktop) {
                term.write_raw(notification_bytes(incident_headline(set->anomalies, inc), target_));
                ++notified_;
            }
            const AnomalyRecord& o = set->anomalies[inc.origin];
            last = escape_for_display(origin_value_text(o) + " in " + o.kind, 48) + " at step " +
                   std::to_string(o.step) + ", rank " + std::to_string(o.rank);
        }
        return last;
    }

private:
    NotifyTarget target_;
    IncidentHooks hooks_;
    std::uint64_t generation_ = 0;
    std::uint64_t notified_ = 0;
    bool was_live_ = false;
    std::optional<std::int64_t> backlog_through_;  // every rank had written this step when ingest caught up
};

// What ingest has caught up to, for the idle report: every change made before `seen` was in the store once
// `batches` batches were committed.
struct QuietPoint {
    std::mutex mu;
    IdleReport::Clock::time_point seen{};
    std::optional<IdleReport::Clock::time_point> held_until;
    std::uint64_t batches = 0;
};

int new_eventfd_or(bool wanted) {
    return wanted ? ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC) : -1;
}

void wake_fd(int fd) {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);
}

}  // namespace

int run_live(const LaunchOptions& o) {
    // ncurses on a file or /dev/null would read EOF forever (100% CPU) and draw into a file.
    if (!::isatty(STDIN_FILENO) || !::isatty(STDOUT_FILENO)) {
        std::fprintf(stderr,
                     "msmon-tui: needs a terminal (its %s is not one); run it in a terminal, or give "
                     "--snapshot VIEW to print one frame as text\n",
                     ::isatty(STDIN_FILENO) ? "output" : "input");
        return 1;
    }
    // Before anything starts: a terminal ncurses cannot describe is said now, not after the store was opened.
    TerminfoFallback terminfo;
    std::string terminfo_note, terminfo_error;
    if (!terminfo.prepare(terminfo_note, terminfo_error)) {
        std::fprintf(stderr, "msmon-tui: %s\n", escape_for_terminal(terminfo_error).c_str());
        return 1;
    }
    if (!terminfo_note.empty()) spdlog::warn("{}", terminfo_note);
    std::string report_error;
    const std::unique_ptr<IdleReport> report = IdleReport::from_environment(report_error);
    if (!report_error.empty()) {
        std::fprintf(stderr, "msmon-tui: %s\n", escape_for_terminal(report_error).c_str());
        return 1;
    }
    IngestOptions io;
    io.roots = {o.dir};
    io.follow = true;
    io.newest_first = true;  // every rank's present first, its history filled in behind
    // One batch waiting for the writer, not three: ~28 MB less at the peak of a 64-rank backlog (the bound is 200 MB
    // beside the views' reader), with the whole backlog read as fast (the writer is the slower side: the queue is
    // full either way).
    io.batches_waiting = 1;
    io.poll_ms = o.poll_ms;
    if (!o.monitor_config.empty()) io.detectors.monitor_config_text = o.monitor_config;
    std::string error;
    IngestSession::OpenStatus status;
    std::unique_ptr<IngestSession> session;
    if (o.store.empty() && !o.store_only()) {
        session = IngestSession::open(o.db, io, status, error, "", o.store_access);
        if (!session && status != IngestSession::OpenStatus::locked) {
            std::fprintf(stderr, "msmon-tui: %s\n", escape_for_terminal(error).c_str());
            return 1;
        }
    }
    const int wake = process_wake_fd();
    g_wake_fd = wake;
    // Ingest's quiet points wake the loop only to be reported (tests only): no reload.
    const int quiet = new_eventfd_or(report && session);
    QuietPoint quiet_point;
    struct sigaction sa {};
    sa.sa_handler = on_quit_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGTERM, SIGHUP, SIGINT}) sigaction(sig, &sa, nullptr);
    std::mutex notice_mu;
    std::string notice = session || !o.store.empty() || o.store_only() ? o.settings_notice : error + " (read only)";
    bool notice_news = false;  // said since the newest incident's notice began: shown beside it, not hidden for 20 s
    std::atomic<long long> last_commit_ns{0};
    std::thread engine_thread;
    if (session) {
        IngestEngine& engine = session->engine();
        engine.on_commit = [wake, &last_commit_ns](const CommitInfo& info) {
            last_commit_ns.store(info.committed_at.time_since_epoch().count());
            std::uint64_t one = 1;
            [[maybe_unused]] auto n = ::write(wake, &one, sizeof one);
        };
        if (quiet >= 0)
            engine.on_quiet = [&quiet_point, &engine, quiet](IdleReport::Clock::time_point seen,
                                                             std::optional<IdleReport::Clock::time_point> held) {
                {
                    std::lock_guard lock(quiet_point.mu);
                    quiet_point.seen = seen;
                    quiet_point.held_until = held;
                    quiet_point.batches = engine.counters().batches.load();
                }
                wake_fd(quiet);
            };
        engine.on_caught_up = [wake] {
            std::uint64_t one = 1;
            [[maybe_unused]] auto n = ::write(wake, &one, sizeof one);
        };
        engine.on_notice = [&](const std::string& m) {
            std::lock_guard lock(notice_mu);
            notice = m;
            notice_news = true;
        };
        engine_thread = std::thread([&engine, &notice, &notice_mu, wake] {
            std::string e;
            if (engine.run(e) || e.empty()) return;
            spdlog::error("{}", e);
            {  // reading stopped (the store refused a batch): the status line says why
                std::lock_guard lock(notice_mu);
                notice = e;
            }
            std::uint64_t one = 1;
            [[maybe_unused]] auto n = ::write(wake, &one, sizeof one);
        });
        // Wait for the store to exist before the reader opens it.
        for (int i = 0; i < 200 && !std::filesystem::exists(o.db); ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::unique_ptr<Reader> reader;
    if (!o.store.empty()) reader = open_store_reader(o, error);
    // A store that ingest is creating may take a moment to open; an existing one given alone opens or does not.
    const int attempts = o.store_only() ? 1 : 100;
    for (int i = 0; i < attempts && !reader && o.store.empty(); ++i) {
        try {
            reader = with_derived_kinds(open_sqlite_reader(o.db, o.store_access));
        } catch (const std::exception& e) {
            error = e.what();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    if (!reader) {
        std::fprintf(stderr, "msmon-tui: %s\n", escape_for_terminal(error).c_str());
        if (session) session->engine().stop();
        if (engine_thread.joinable()) engine_thread.join();
        if (quiet >= 0) ::close(quiet);
        return 1;
    }
    App app(std::move(reader), ConfigTarget(o.config_path, o.follow_config_link));
    if (!prepare_app(o, app, error)) {
        std::fprintf(stderr, "msmon-tui: %s\n", escape_for_terminal(error).c_str());
        if (session) session->engine().stop();
        if (engine_thread.joinable()) engine_thread.join();
        return 1;
    }
    app.status().source = !o.store.empty() ? o.store : o.store_only() ? o.db : o.dir;
    {  // what preparing the app found wrong (a settings key) stays on the status line until something newer
        std::lock_guard lock(notice_mu);
        if (notice.empty()) notice = app.status().notice;
    }
    std::string store_failure;
    std::deque<QueuedKey> typed;  // keys typed while ClickHouse was read, handled next
    IncidentAnnouncer announcer(o, o.store.empty() ? o.db : o.store,
                                [&notice, &notice_mu, &notice_news, wake](const std::string& m) {
                                    {
                                        std::lock_guard lock(notice_mu);
                                        notice = m;
                                        notice_news = true;
                                    }
                                    wake_fd(wake);
                                });
    {
        Terminal term(!o.mono);
        using Clock = std::chrono::steady_clock;
        const auto frame = std::chrono::milliseconds(50);  // at most 20 frames a second
        // While a backlog's history is read, new data is read for the screen twice a second: the views' queries
        // would otherwise take the CPU the reading needs (keys are still answered within a frame).
        const auto backlog_frame = std::chrono::milliseconds(500);
        bool data_news = false;  // committed since the last reload
        auto last_reload = Clock::now() - std::chrono::seconds(1);
        auto last_frame = Clock::now() - std::chrono::seconds(1);
        auto rate_time = Clock::now();
        std::uint64_t rate_values = 0;
        bool reload = true, redraw = true, running = true, announced_once = false;
        std::string incident_notice;
        Clock::time_point incident_notice_until{};
        std::uint64_t collected_batches = 0;  // batches committed before the last collect began
        // The last collect was live (ingest caught up and where it stood known): the incidents the announcer saw
        // then are the backlog. Until one is, the program is not idle (its next read would take a new incident for
        // backlog: CI's ASan run once wrote a NaN in the moment between the catch-up's read and the first live one).
        bool collected_live = false;
        Clock::time_point ingest_drawn{};             // the latest quiet point the screen shows
        std::optional<Clock::time_point> held_drawn;  // findings ingest held at that point
        // The idle report's state: everything that can still change the screen with no key and no new file.
        const auto idle_state = [&](Clock::time_point now) {
            IdleReport::State s;
            if (session) {
                std::lock_guard lock(quiet_point.mu);
                if (quiet_point.batches <= collected_batches && collected_live) {
                    ingest_drawn = std::max(ingest_drawn, quiet_point.seen);
                    held_drawn = quiet_point.held_until;
                }
                s.ingest_seen = ingest_drawn;
                s.held_until = held_drawn;
            }
            s.settle_due = announcer.next_due();
            if (now < incident_notice_until) s.notice_until = incident_notice_until;
            s.notified = announcer.notified();
            return s;
        };
        while (running) {
            const auto now = Clock::now();
            const bool backlog = session && session->engine().backfill().active;
            if (data_news && (!backlog || now - last_reload >= backlog_frame)) {
                reload = true;
                data_news = false;
            }
            if ((reload || redraw) && now - last_frame >= frame) {
                if (reload) {
                    last_reload = now;
                    if (session) collected_batches = session->engine().counters().batches.load();
                    // Where reading stands, taken before the store is read: what it says is in what is read next.
                    const std::optional<ReadProgress> progress =
                        session ? session->engine().read_progress() : std::nullopt;
                    // So is the backlog's unread span: the views draw it beside the data this read gets (a span
                    // taken later would leave the steps read in between as a gap, with the reads at 2 Hz).
                    if (session) app.shared().unread_steps = unread_span(session->engine().backfill());
                    if (o.store.empty()) {
                        collect_safely(app, store_failure);
                    } else if (!collect_while_reading_keys(app, store_failure, term, typed)) {
                        break;
                    }
                    // Not ingesting here (another msmon writes the store, or ClickHouse): what the first read
                    // found is the backlog.
                    // Live once caught up and where reading stands is known (the backlog's last step, below).
                    const bool live = session ? session->engine().caught_up() && progress.has_value() : announced_once;
                    collected_live = live;
                    announced_once = true;
                    const std::string said =
                        announcer.update(app.incidents(), live, term, progress ? &*progress : nullptr);
                    if (!said.empty()) {
                        incident_notice = "new incident: " + said;
                        incident_notice_until = now + kIncidentNoticeTime;
                        std::lock_guard lock(notice_mu);
                        notice_news = false;
                    }
                }
                AppStatus& st = app.status();
                if (session) {
                    const auto& c = session->engine().counters();
                    st.watch = session->engine().watch_mode();
                    const BackfillProgress backfill = session->engine().backfill();
                    st.history = backfill_text(backfill, term.glyphs().unicode);
                    st.values = c.values.load();
                    if (const long long t = last_commit_ns.load(); t != 0)
                        st.seconds_since_data =
                            std::chrono::duration<double>(now.time_since_epoch() - Clock::duration(t)).count();
                    const double dt = std::chrono::duration<double>(now - rate_time).count();
                    if (dt >= 1.0) {
                        st.values_per_second = static_cast<double>(st.values - rate_values) / dt;
                        rate_values = st.values;
                        rate_time = now;
                    }
                    std::lock_guard lock(notice_mu);
                    // A new incident is said for a while (the Anomalies tab keeps it), then the line is whole again.
                    st.notice = now >= incident_notice_until ? notice
                                : notice_news                ? incident_notice + "; " + notice
                                                             : incident_notice;
                    // Started before the job: what it waits for, until the first file is found.
                    st.waiting = c.files.load() != 0 || !session->engine().caught_up() ? std::string()
                                 : session->engine().roots_missing() != 0
                                     ? "waiting for " + o.dir + " to appear"
                                     : "nothing yet in " + o.dir + ": waiting for the job's output";
                    // The engine's own words for that wait ("'DIR' does not exist yet: waiting for it") are not
                    // said a second time beside it.
                    if (!st.waiting.empty() && session->engine().roots_missing() != 0) st.notice.clear();
                } else {
                    st.watch = !o.store.empty() ? "clickhouse"
                               : o.store_only() ? "store, read only, not following"
                                                : "read only";
                    std::lock_guard lock(notice_mu);
                    st.notice = store_failure.empty() ? notice : store_failure;
                }
                ScreenBuffer buf(term.width(), term.height());
                app.compose(buf, term.glyphs());
                if (report) report->frame_begins(now);
                term.present(buf);
                if (report) {
                    report->frame(now);
                    term.write_raw(report->terminal_marker());
                }
                last_frame = now;
                reload = redraw = false;
                if (app.visible_view_wants_reload()) reload = true;  // drawn on a new size: read for it next frame
                // The history is in: read once more, so that no step is left drawn unread.
                if (session && app.shared().unread_steps && !unread_span(session->engine().backfill())) reload = true;
            }
            int timeout = -1;  // nothing to do: sleep until a key or new data
            if (reload || redraw)
                timeout = static_cast<int>(std::max<long long>(
                    0,
                    std::chrono::duration_cast<std::chrono::milliseconds>(last_frame + frame - Clock::now()).count()));
            else if (data_news)  // the backlog's next reload
                timeout = static_cast<int>(std::max<long long>(
                    0, std::chrono::duration_cast<std::chrono::milliseconds>(last_reload + backlog_frame - Clock::now())
                           .count()));
            // Idle: wake every 2 s only to age "data Ns ago" (a redraw from the cached model, no store read);
            // another msmon writing the store: look for its new data every second.
            // The Config tab watches its file (the trainer's write-back): re-read it every second.
            const bool watch_files = app.visible_view_watches_files();
            const int idle_ms = session && !watch_files ? 2000 : 1000;
            const bool idle = timeout < 0;
            // The idle tick counts from the last frame: a wake-up that draws nothing does not put it off.
            Clock::time_point tick = last_frame + std::chrono::milliseconds(idle_ms);
            if (idle) {
                // An incident waiting to settle is looked at again when it is due.
                if (const auto due = announcer.next_due()) tick = std::min(tick, *due + std::chrono::milliseconds(1));
                timeout = static_cast<int>(std::clamp<long long>(
                    std::chrono::duration_cast<std::chrono::milliseconds>(tick - Clock::now()).count(), 0, idle_ms));
                if (report) {
                    term.write_raw(report->terminal_marker());
                    report->idle(idle_state(Clock::now()), Clock::now());
                }
            }
            pollfd fds[3] = {{term.input_fd(), POLLIN, 0}, {wake, POLLIN, 0}, {quiet, POLLIN, 0}};
            ::poll(fds, 3, typed.empty() ? timeout : 0);
            // The terminal went away (the SSH connection dropped, the tmux pane was killed) without a SIGHUP
            // reaching us: nothing more can be read or shown.
            if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) break;
            if (idle && Clock::now() >= tick)
                (session && !watch_files && !announcer.pending() ? redraw : reload) = true;
            if (fds[2].revents & POLLIN) {
                std::uint64_t v;
                [[maybe_unused]] auto n = ::read(quiet, &v, sizeof v);
                if (!collected_live) reload = true;  // caught up: the first live read takes the backlog as such
            }
            if (fds[1].revents & POLLIN) {
                std::uint64_t v;
                [[maybe_unused]] auto n = ::read(wake, &v, sizeof v);
                data_news = true;
            }
            if (g_quit.load()) break;
            MouseEvent mouse;
            for (int key; !typed.empty() || (key = term.read_key(mouse)) != kKeyNone;) {
                if (!typed.empty()) {  // typed while ClickHouse was read
                    key = typed.front().key;
                    mouse = typed.front().mouse;
                    typed.pop_front();
                }
                if (report && key == IdleReport::kSyncKey) {
                    report->sync_key();
                    continue;
                }
                if (!app.handle_key(key, mouse.x, mouse.y, reload, redraw)) {
                    running = false;
                    break;
                }
            }
        }
    }
    if (report) report->ended(std::chrono::steady_clock::now());  // the terminal is given back
    if (session) session->engine().stop();
    if (engine_thread.joinable()) engine_thread.join();
    if (quiet >= 0) ::close(quiet);
    return 0;
}

}  // namespace msmon::tui
