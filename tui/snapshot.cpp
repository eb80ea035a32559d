// --snapshot VIEW: ingest once (or read the store given), compose one frame of VIEW, print it as text.
#include <cstdio>

#include "core/text/display_escape.hpp"
#include "store/derived_reader.hpp"
#include "store/ingest_session.hpp"
#include "tui/launch_options.hpp"
#include "tui/tab_table.hpp"

namespace msmon::tui {

namespace {

int fail(const std::string& why) {
    std::fprintf(stderr, "msmon-tui: %s\n", escape_for_terminal(why).c_str());
    return 1;
}

// The reader the frame is drawn from: ClickHouse's, or the SQLite store after one ingest of DIR.
std::unique_ptr<Reader> snapshot_reader(const LaunchOptions& o, std::string& error) {
    if (!o.store.empty()) return open_store_reader(o, error);
    if (!o.store_only()) {
        IngestOptions io;
        io.roots = {o.dir};
        IngestSession::OpenStatus status;
        auto session = IngestSession::open(o.db, io, status, error, "", o.store_access);
        if (session && !session->engine().run(error)) return nullptr;
        // Another msmon holds the store: draw what it has stored.
        if (!session && status != IngestSession::OpenStatus::locked) return nullptr;
        error.clear();
    }
    try {
        return with_derived_kinds(open_sqlite_reader(o.db, o.store_access));
    } catch (const std::exception& e) {
        error = e.what();
        return nullptr;
    }
}

}  // namespace

int run_snapshot(const LaunchOptions& o) {
    std::string error;
    auto reader = snapshot_reader(o, error);
    if (!reader) return fail(error);
    App app(std::move(reader), ConfigTarget(o.config_path, o.follow_config_link));
    if (!prepare_app(o, app, error)) return fail(error);
    if (!app.select_view(o.snapshot)) {
        std::fprintf(stderr, "msmon-tui: no view named '%s' (%s)\n", escape_for_terminal(o.snapshot).c_str(),
                     tab_names().c_str());
        return 2;
    }
    app.status().source = !o.store.empty() ? o.store : o.store_only() ? o.db : o.dir;
    app.status().watch = "snapshot";
    std::string failure;
    collect_safely(app, failure);
    if (!failure.empty()) return fail(failure);
    ScreenBuffer buf(o.width, o.height);
    Glyphs glyphs;
    glyphs.unicode = utf8_locale();
    app.compose(buf, glyphs);
    if (app.visible_view_wants_reload()) {  // the chart now knows its width
        collect_safely(app, failure);
        if (!failure.empty()) return fail(failure);
        app.compose(buf, glyphs);
    }
    // Without a UTF-8 locale every cell shows its ASCII stand-in (text from the data in other scripts as '?'),
    // as the terminal would: never raw bytes.
    const std::string text = buf.to_text(glyphs.unicode);
    std::printf("%s\n", text.c_str());
    return 0;
}

}  // namespace msmon::tui
