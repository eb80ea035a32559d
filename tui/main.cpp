// msmon-tui: the terminal UI over a live job, a demo run, or one rendered frame (--snapshot) for scripts.
#include <langinfo.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <clocale>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>

#include <spdlog/spdlog.h>

#include "core/config/config_file.hpp"
#include "core/log/logging.hpp"
#include "core/sim/mindformers_simulator.hpp"
#include "core/sim/msprobe_simulator.hpp"
#include "core/text/number_text.hpp"
#include "store/clickhouse/clickhouse_reader.hpp"
#include "store/ingest_session.hpp"
#include "store/reader.hpp"
#include "tui/app.hpp"
#include "tui/terminal.hpp"

using namespace msmon;
using namespace msmon::tui;

namespace {

constexpr const char* kUsage =
    "usage: msmon-tui [DIR] [--db PATH] [--config PATH] [--poll-ms N] [--demo] [--snapshot VIEW --size WxH]\n"
    "       msmon-tui --db PATH [--snapshot VIEW --size WxH]\n"
    "       msmon-tui --store clickhouse://HOST:PORT/DB [--job ID] [--snapshot VIEW --size WxH]\n"
    "\n"
    "Follows a training job's msprobe and MindFormers output live and shows every rank.\n"
    "  DIR                the job folder (or monitor_output/, or one rank folder)\n"
    "  --db PATH          the store (default: $XDG_CACHE_HOME/msmon/<hash of DIR>.db); without DIR, shows this\n"
    "                     existing store read-only, following no folder (as msmon query --db reads it)\n"
    "  --store URL        show the whole job from ClickHouse (clickhouse://HOST:PORT/DB), every node's ranks, as the\n"
    "                     agents (msmon ingest --sink) ship it; --job ID picks the job (default: the latest)\n"
    "  --poll-ms N        poll every N ms instead of inotify\n"
    "  --config PATH      the msprobe monitor config the job reads (the Config tab edits it; the job must run\n"
    "                     with DYNAMIC_MONITOR=True to pick edits up while training)\n"
    "  --demo             run the built-in simulator live (8 ranks, a loss spike at step 20, a NaN on rank 3 at\n"
    "                     step 35, found by msmon's own detectors; TensorBoard event files with the run config and MoE\n"
    "                     expert load, expert 3 of layer_1 taking most tokens from step 10) and open on it\n"
    "  --demo-step-ms MS  the demo's pace (default 500 ms per step)\n"
    "  --snapshot VIEW    ingest, print one frame of VIEW (overview, chart, anomalies, health, config, experts) as text, exit\n"
    "  --size WxH         the snapshot's size (default 120x40)\n"
    "Inside: ? lists every key of the current view.\n";

// The demo job's monitor config: no alert rules, as most jobs run (msprobe's turbulence rule fires on every mean
// near zero); msmon's own detectors find the planted events.
constexpr const char* kDemoMonitorConfig =
    R"({"targets": {}, "wg_distribution": true, "mv_distribution": true, "param_distribution": true, "format": "csv",
 "ops": ["min", "max", "norm", "mean", "nans", "zeros"]})";

// The demo's planted routing collapse (the Experts tab flags it): from this step on, layer_1's expert 3 takes most
// tokens. Early, so that the tab has something to show within seconds.
constexpr std::int64_t kDemoCollapseStep = 10;

// SIGTERM/SIGHUP/SIGINT end the loop like `q` does: the terminal is restored and the demo cleaned up.
std::atomic<bool> g_quit{false};
int g_wake_fd = -1;

extern "C" void on_quit_signal(int) {
    g_quit.store(true);
    if (g_wake_fd >= 0) {
        std::uint64_t one = 1;
        [[maybe_unused]] auto n = ::write(g_wake_fd, &one, sizeof one);
    }
}

struct Options {
    std::string dir, db, snapshot, monitor_config, config_path, store, job;
    int width = 120, height = 40, poll_ms = 0, demo_step_ms = 500;
    bool demo = false;
};

int usage_error(const std::string& msg) {
    std::fprintf(stderr, "msmon-tui: %s\n%s", msg.c_str(), kUsage);
    return 2;
}

bool utf8_locale() {
    std::setlocale(LC_ALL, "");
    const char* cs = nl_langinfo(CODESET);
    return cs && (std::strcmp(cs, "UTF-8") == 0 || std::strcmp(cs, "utf8") == 0);
}

// The whole job from ClickHouse: nothing to ingest here, the agents ship it.
std::unique_ptr<Reader> open_store_reader(const Options& o, std::string& error) {
    const auto target = parse_clickhouse_url(o.store, error);
    if (!target) return nullptr;
    try {
        return open_clickhouse_reader(*target, o.job);
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

// Collects the model; a remote store that fails leaves the last frame up with the reason in the status line.
void collect_safely(App& app, std::string& failure) {
    try {
        app.collect();
        failure.clear();
    } catch (const std::exception& e) {
        failure = e.what();
    }
}

// No DIR, only --db: an existing store, shown as it is (nothing ingests, nothing is written).
bool store_only(const Options& o) { return o.dir.empty() && o.store.empty(); }

int run_snapshot(const Options& o) {
    if (!o.store.empty()) {
        std::string error;
        auto reader = open_store_reader(o, error);
        if (!reader) {
            std::fprintf(stderr, "msmon-tui: %s\n", error.c_str());
            return 1;
        }
        App app(std::move(reader), o.config_path);
        if (!app.select_view(o.snapshot)) return usage_error("no view named '" + o.snapshot + "'");
        app.status().source = o.store;
        app.status().watch = "snapshot";
        std::string failure;
        collect_safely(app, failure);
        if (!failure.empty()) {
            std::fprintf(stderr, "msmon-tui: %s\n", failure.c_str());
            return 1;
        }
        ScreenBuffer buf(o.width, o.height);
        Glyphs glyphs;
        glyphs.unicode = utf8_locale();
        app.compose(buf, glyphs);
        if (app.visible_view_wants_reload()) {  // the chart now knows its width
            collect_safely(app, failure);
            app.compose(buf, glyphs);
        }
        std::printf("%s\n", buf.to_text().c_str());
        return 0;
    }
    if (!store_only(o)) {
        IngestOptions io;
        io.roots = {o.dir};
        std::string error;
        IngestSession::OpenStatus status;
        auto session = IngestSession::open(o.db, io, status, error);
        if (session && !session->engine().run(error)) {
            std::fprintf(stderr, "msmon-tui: %s\n", error.c_str());
            return 1;
        }
        if (!session && status != IngestSession::OpenStatus::locked) {
            std::fprintf(stderr, "msmon-tui: %s\n", error.c_str());
            return 1;
        }
    }
    std::unique_ptr<Reader> reader;
    try {
        reader = open_sqlite_reader(o.db);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "msmon-tui: %s\n", e.what());
        return 1;
    }
    App app(std::move(reader), o.config_path);
    if (!app.select_view(o.snapshot)) return usage_error("no view named '" + o.snapshot + "'");
    app.status().source = store_only(o) ? o.db : o.dir;
    app.status().watch = "snapshot";
    app.collect();
    ScreenBuffer buf(o.width, o.height);
    Glyphs glyphs;
    glyphs.unicode = utf8_locale();
    app.compose(buf, glyphs);
    if (app.visible_view_wants_reload()) {  // the chart now knows its width
        app.collect();
        app.compose(buf, glyphs);
    }
    std::string text = buf.to_text();
    if (!glyphs.unicode) {
        // Without a UTF-8 locale, text from the data (names in other scripts) is shown as '?', never as raw bytes.
        std::string ascii;
        for (std::size_t i = 0; i < text.size(); ++i) {
            const auto c = static_cast<unsigned char>(text[i]);
            if (c < 0x80) ascii.push_back(static_cast<char>(c));
            else if ((c & 0xC0) != 0x80) ascii.push_back('?');
        }
        text = std::move(ascii);
    }
    std::printf("%s\n", text.c_str());
    return 0;
}

int run_live(const Options& o) {
    IngestOptions io;
    io.roots = {o.dir};
    io.follow = true;
    io.poll_ms = o.poll_ms;
    if (!o.monitor_config.empty()) io.detectors.monitor_config_text = o.monitor_config;
    std::string error;
    IngestSession::OpenStatus status;
    std::unique_ptr<IngestSession> session;
    if (o.store.empty() && !store_only(o)) {
        session = IngestSession::open(o.db, io, status, error);
        if (!session && status != IngestSession::OpenStatus::locked) {
            std::fprintf(stderr, "msmon-tui: %s\n", error.c_str());
            return 1;
        }
    }
    const int wake = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    g_wake_fd = wake;
    struct sigaction sa {};
    sa.sa_handler = on_quit_signal;
    sigemptyset(&sa.sa_mask);
    for (int sig : {SIGTERM, SIGHUP, SIGINT}) sigaction(sig, &sa, nullptr);
    std::mutex notice_mu;
    std::string notice = session || !o.store.empty() || store_only(o) ? "" : error + " (read only)";
    std::atomic<long long> last_commit_ns{0};
    std::thread engine_thread;
    if (session) {
        IngestEngine& engine = session->engine();
        engine.on_commit = [wake, &last_commit_ns](const CommitInfo& info) {
            last_commit_ns.store(info.committed_at.time_since_epoch().count());
            std::uint64_t one = 1;
            [[maybe_unused]] auto n = ::write(wake, &one, sizeof one);
        };
        engine.on_notice = [&](const std::string& m) {
            std::lock_guard lock(notice_mu);
            notice = m;
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
        for (int i = 0; i < 200 && !std::filesystem::exists(o.db); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::unique_ptr<Reader> reader;
    if (!o.store.empty()) reader = open_store_reader(o, error);
    // A store that ingest is creating may take a moment to open; an existing one given alone opens or does not.
    const int attempts = store_only(o) ? 1 : 100;
    for (int i = 0; i < attempts && !reader && o.store.empty(); ++i) {
        try {
            reader = open_sqlite_reader(o.db);
        } catch (const std::exception& e) {
            error = e.what();
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }
    if (!reader) {
        std::fprintf(stderr, "msmon-tui: %s\n", error.c_str());
        if (session) session->engine().stop();
        if (engine_thread.joinable()) engine_thread.join();
        return 1;
    }
    App app(std::move(reader), o.config_path);
    app.status().source = !o.store.empty() ? o.store : store_only(o) ? o.db : o.dir;
    std::string store_failure;
    {
        Terminal term;
        using Clock = std::chrono::steady_clock;
        const auto frame = std::chrono::milliseconds(50);  // at most 20 frames a second
        auto last_frame = Clock::now() - std::chrono::seconds(1);
        auto rate_time = Clock::now();
        std::uint64_t rate_values = 0;
        bool reload = true, redraw = true, running = true;
        while (running) {
            const auto now = Clock::now();
            if ((reload || redraw) && now - last_frame >= frame) {
                if (reload) collect_safely(app, store_failure);
                AppStatus& st = app.status();
                if (session) {
                    const auto& c = session->engine().counters();
                    st.watch = session->engine().watch_mode();
                    st.values = c.values.load();
                    st.malformed = c.issues.load();
                    if (const long long t = last_commit_ns.load(); t != 0)
                        st.seconds_since_data = std::chrono::duration<double>(
                                                    now.time_since_epoch() - Clock::duration(t)).count();
                    const double dt = std::chrono::duration<double>(now - rate_time).count();
                    if (dt >= 1.0) {
                        st.values_per_second = static_cast<double>(st.values - rate_values) / dt;
                        rate_values = st.values;
                        rate_time = now;
                    }
                    std::lock_guard lock(notice_mu);
                    if (!notice.empty()) st.notice = notice;
                } else {
                    st.watch = !o.store.empty() ? "clickhouse"
                               : store_only(o)     ? "store, read only, not following"
                                                   : "read only";
                    st.notice = store_failure.empty() ? notice : store_failure;
                }
                ScreenBuffer buf(term.width(), term.height());
                app.compose(buf, term.glyphs());
                term.present(buf);
                last_frame = now;
                reload = redraw = false;
                if (app.visible_view_wants_reload()) reload = true;  // drawn on a new size: read for it next frame
            }
            int timeout = -1;  // nothing to do: sleep until a key or new data
            if (reload || redraw)
                timeout = static_cast<int>(std::max<long long>(
                    0, std::chrono::duration_cast<std::chrono::milliseconds>(last_frame + frame - Clock::now()).count()));
            // Idle: wake every 2 s only to age "data Ns ago" (a redraw from the cached model, no store read);
            // another msmon writing the store: look for its new data every second.
            // The Config tab watches its file (the trainer's write-back): re-read it every second.
            const bool watch_files = app.visible_view_watches_files();
            const int idle_ms = session && !watch_files ? 2000 : 1000;
            if (timeout < 0) timeout = idle_ms;
            pollfd fds[2] = {{term.input_fd(), POLLIN, 0}, {wake, POLLIN, 0}};
            const int ready = ::poll(fds, 2, timeout);
            if (ready == 0 && timeout == idle_ms) (session && !watch_files ? redraw : reload) = true;
            if (fds[1].revents & POLLIN) {
                std::uint64_t v;
                [[maybe_unused]] auto n = ::read(wake, &v, sizeof v);
                reload = true;
            }
            if (g_quit.load()) break;
            MouseEvent mouse;
            for (int key; (key = term.read_key(mouse)) != kKeyNone;)
                if (!app.handle_key(key, mouse.x, mouse.y, reload, redraw)) {
                    running = false;
                    break;
                }
        }
    }
    if (session) session->engine().stop();
    if (engine_thread.joinable()) engine_thread.join();
    g_wake_fd = -1;
    ::close(wake);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&](const char* name) -> const char* {
            if (i + 1 >= argc) return nullptr;
            (void)name;
            return argv[++i];
        };
        if (a == "-h" || a == "--help") {
            std::fputs(kUsage, stdout);
            return 0;
        } else if (a == "--demo") {
            o.demo = true;
        } else if (a == "--demo-step-ms") {
            const char* v = value("--demo-step-ms");
            auto n = v ? parse_int(v) : std::nullopt;
            if (!n || *n < 10 || *n > 60000) return usage_error("--demo-step-ms takes 10..60000");
            o.demo_step_ms = static_cast<int>(*n);
        } else if (a == "--db") {
            const char* v = value("--db");
            if (!v) return usage_error("--db needs a PATH");
            o.db = v;
        } else if (a == "--store") {
            const char* v = value("--store");
            if (!v) return usage_error("--store needs a URL");
            o.store = v;
        } else if (a == "--job") {
            const char* v = value("--job");
            if (!v) return usage_error("--job needs an ID");
            o.job = v;
        } else if (a == "--config") {
            const char* v = value("--config");
            if (!v) return usage_error("--config needs a PATH");
            o.config_path = v;
        } else if (a == "--poll-ms") {
            const char* v = value("--poll-ms");
            auto n = v ? parse_int(v) : std::nullopt;
            if (!n || *n <= 0) return usage_error("--poll-ms takes a number of milliseconds");
            o.poll_ms = static_cast<int>(*n);
        } else if (a == "--snapshot") {
            const char* v = value("--snapshot");
            if (!v) return usage_error("--snapshot needs a VIEW");
            o.snapshot = v;
        } else if (a == "--size") {
            const char* v = value("--size");
            unsigned w = 0, h = 0;
            if (!v || std::sscanf(v, "%ux%u", &w, &h) != 2 || w < 20 || h < 6 || w > 1000 || h > 500)
                return usage_error("--size takes WxH, e.g. 80x24");
            o.width = static_cast<int>(w);
            o.height = static_cast<int>(h);
        } else if (!a.empty() && a[0] == '-') {
            return usage_error("unknown option '" + a + "'");
        } else if (o.dir.empty()) {
            o.dir = a;
        } else {
            return usage_error("more than one DIR");
        }
    }
    init_logging("msmon-tui", false);
    std::atomic<bool> sim_stop{false};
    std::thread sim;
    std::string demo_dir;
    if (o.demo) {
        std::string tmpl = std::filesystem::temp_directory_path().string() + "/msmon-demo-XXXXXX";
        if (!::mkdtemp(tmpl.data())) return usage_error("cannot create a demo folder");
        demo_dir = tmpl;
        o.dir = demo_dir + "/job";
        if (o.db.empty()) o.db = demo_dir + "/store.db";
        std::filesystem::create_directories(o.dir);
        o.monitor_config = kDemoMonitorConfig;
        // The demo's monitor config, as a job would have it on disk: the Config tab edits it.
        if (o.config_path.empty()) {
            o.config_path = demo_dir + "/monitor_config.json";
            std::string werr;
            auto doc = nlohmann::ordered_json::parse(kDemoMonitorConfig);
            doc["dynamic_on"] = false;
            doc["collect_times"] = 100;
            write_monitor_config(o.config_path, doc, werr);
        }
        sim = std::thread([&] {
            SimOptions s;
            s.outdir = o.dir;
            s.ranks = 8;
            s.params = 16;
            s.steps = 100000;
            s.step_ms = o.demo_step_ms;
            std::string err;
            s.faults = *parse_fault_list("spike@20,nan@35:r3", err);
            // MindFormers logs, the health file and TensorBoard event files beside msprobe's output, as a real
            // job writes them; the event files carry MoE expert load whose router collapses onto one expert.
            MindFormersOptions mf;
            mf.logs = true;
            mf.health = true;
            mf.tensorboard = true;
            mf.collapse_step = kDemoCollapseStep;
            mf.stop_on_spikes = false;  // the demo keeps running after its spike
            const MindFormersPlan plan = plan_mindformers_run(s, mf);
            MindFormersResult mf_result;
            std::string mf_err;
            std::thread logs([&] { run_mindformers_simulation(s, mf, plan, sim_stop, mf_result, mf_err); });
            SimResult result;
            run_msprobe_simulation(msprobe_options_for(s, plan), sim_stop, result, err);
            logs.join();
        });
    }
    if (!o.store.empty()) {
        if (!o.dir.empty() || o.demo || !o.db.empty()) return usage_error("--store shows a whole job: no DIR, --db or --demo");
        std::string error;
        if (!parse_clickhouse_url(o.store, error)) return usage_error(error);
        return o.snapshot.empty() ? run_live(o) : run_snapshot(o);
    }
    if (!o.job.empty()) return usage_error("--job goes with --store");
    if (o.dir.empty() && o.db.empty()) return usage_error("give the job folder DIR, a store (--db PATH), or --demo");
    if (store_only(o)) {
        // Checked here: opening would fail anyway, but nothing may create an empty store in its place.
        std::error_code ec;
        if (!std::filesystem::is_regular_file(o.db, ec)) {
            std::fprintf(stderr, "msmon-tui: no store at '%s'\n", o.db.c_str());
            return 1;
        }
        return o.snapshot.empty() ? run_live(o) : run_snapshot(o);
    }
    if (!std::filesystem::is_directory(o.dir)) {
        std::fprintf(stderr, "msmon-tui: '%s' is not a folder\n", o.dir.c_str());
        return 1;
    }
    if (o.db.empty()) o.db = default_store_path({o.dir});
    int rc = o.snapshot.empty() ? run_live(o) : run_snapshot(o);
    sim_stop.store(true);
    if (sim.joinable()) sim.join();
    if (!demo_dir.empty()) std::filesystem::remove_all(demo_dir);
    return rc;
}
