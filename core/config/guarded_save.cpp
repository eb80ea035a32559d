// Quiet-wait, atomic write, settle-watch, re-apply.
#include "core/config/guarded_save.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <thread>

#include "core/config/config_text_edit.hpp"

namespace msmon {

namespace {

using json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

double now_seconds() {
    timespec t{};
    ::clock_gettime(CLOCK_REALTIME, &t);
    return mtime_as_python_float(t);
}

void sleep_ms(double ms) {
    if (ms > 0) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<long long>(ms * 1000)));
}

// Waits until the file's mtime is `quiet_ms` old (a write-back burst of several ranks is over). Returns the time
// waited in ms; -1 if it never went quiet within max_wait_ms.
double wait_for_quiet(const PinnedFile& file, const SaveTiming& timing) {
    const auto start = Clock::now();
    while (true) {
        const FileStamp s = stamp_of(file);
        const double age_ms = (now_seconds() - mtime_as_python_float(s.mtime)) * 1000.0;
        // A missing file, or an mtime in the future (clock skew): nothing to wait for.
        if (s.size < 0 || age_ms >= timing.quiet_ms || age_ms < -1000.0)
            return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
        if (std::chrono::duration<double, std::milli>(Clock::now() - start).count() > timing.max_wait_ms) return -1;
        sleep_ms(std::min<double>(timing.quiet_ms - age_ms + 1, 50));
    }
}

// Keeps the replaced file open across the rename, to see a write-back that lands on it.
struct OpenedFile {
    std::string ignored;
    InputFile in;
    int fd;
    explicit OpenedFile(const PinnedFile& file) : in(file.open_for_reading(ignored)), fd(in.fd()) {}
};

std::string what_changed(const json& ours, const json& now) {
    const ConfigPatch back = diff_configs(ours, now);
    if (back.empty()) return "same content, new mtime";
    std::string text;
    for (const auto& line : describe_patch(ours, back)) text += (text.empty() ? "" : ", ") + line;
    return text;
}

}  // namespace

std::string clock_text(const timespec& t) {
    std::tm tm{};
    const time_t secs = t.tv_sec;
    ::localtime_r(&secs, &tm);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03ld", tm.tm_hour, tm.tm_min, tm.tm_sec, t.tv_nsec / 1000000);
    return buf;
}

SaveReport guarded_save(const ConfigTarget& target, const ConfigPatch& patch, const SaveVeto& veto,
                        const SaveTiming& timing) {
    SaveReport report;
    const std::string& path = target.path;
    auto pinned = pin_monitor_config(target, report.error);
    if (!pinned) return report;
    const PinnedFile& file = *pinned;
    for (int attempt = 0;; ++attempt) {
        if (wait_for_quiet(file, timing) < 0)
            report.notices.push_back("the config kept changing for " + std::to_string(timing.max_wait_ms / 1000) +
                                     " s (the trainer rewriting it?); writing anyway");
        const ConfigRead read = read_monitor_config(file);
        if (read.status != ConfigRead::Status::ok) {
            report.error = "cannot read " + path + ": " + read.error;
            return report;
        }
        if (attempt == 0) report.replaced = read.doc;
        if (!read.doc.is_object()) {
            report.error = path + " does not hold a JSON object (msprobe would crash on it); fix it by hand first";
            return report;
        }
        const json doc = apply_patch(read.doc, patch);
        if (veto)
            if (std::string why = veto(read.doc, doc); !why.empty()) {
                report.error = why;
                return report;
            }
        if (timing.before_write) timing.before_write();
        OpenedFile old(file);
        const FileStamp old_before = old.fd >= 0 ? stamp_of_fd(old.fd) : FileStamp{};
        FileStamp ours;
        std::string error;
        // Only the changed values' text is rewritten: the user's layout, number spelling and key order stay.
        if (!write_monitor_config_text(file, edit_config_text(read.text, read.doc, doc), error, &ours,
                                       timing.before_rename)) {
            report.error = error;
            return report;
        }
        report.writes.push_back(ours);
        timespec renamed{};
        ::clock_gettime(CLOCK_REALTIME, &renamed);
        report.written_at.push_back(renamed);
        report.saved = doc;
        // Settle: is our file still the file, untouched, and was the replaced one left alone?
        const auto written_at = Clock::now();
        const json* was_on = find_path(read.doc, {"dynamic_on"});
        const bool collection_may_run = was_on && was_on->is_boolean() && was_on->get<bool>();
        const int settle_ms =
            std::max(timing.settle_ms, collection_may_run && timing.step_ms > 0 ? timing.step_ms + 20 : 0);
        bool external = false, old_touched = false;
        while (std::chrono::duration<double, std::milli>(Clock::now() - written_at).count() < settle_ms) {
            sleep_ms(timing.poll_ms);
            if (!(stamp_of(file) == ours)) {
                external = true;
                break;
            }
            if (old.fd >= 0 && !(stamp_of_fd(old.fd) == old_before)) old_touched = true;
        }
        if (!external && !old_touched) {
            report.in_effect = true;
            return report;
        }
        const double after_ms = std::chrono::duration<double, std::milli>(Clock::now() - written_at).count();
        std::string what;
        if (external) {
            const ConfigRead now = read_monitor_config(file);
            what = "the config was rewritten " + std::to_string(static_cast<int>(after_ms)) +
                   " ms after msmon's save (" +
                   (now.status == ConfigRead::Status::ok ? what_changed(doc, now.doc) : "unreadable: " + now.error) +
                   ") — a trainer write-back racing the save";
        } else {
            what =
                "a trainer write-back racing the save landed on the replaced file, so a rank may have recorded the "
                "new mtime without reading it";
        }
        if (attempt >= timing.max_reapply) {
            report.notices.push_back(what + "; gave up after " + std::to_string(attempt + 1) +
                                     " saves: the change may NOT be in effect — check the file and save again");
            report.error = "the change could not be saved without a racing rewrite";
            return report;
        }
        report.notices.push_back(what + "; saved the change again on top of it");
    }
}

}  // namespace msmon
