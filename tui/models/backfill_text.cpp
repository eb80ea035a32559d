#include "tui/models/backfill_text.hpp"

#include <algorithm>

namespace msmon::tui {

std::string backfill_text(const BackfillProgress& p, bool unicode) {
    if (!p.active || p.files == 0) return "";
    const std::string dash = unicode ? "\u2013" : "-";
    const std::string sep = unicode ? " \u2014 " : " - ";
    const int percent = static_cast<int>(std::min<std::size_t>(99, p.files_fed * 100 / p.files));
    std::string s = "history: " + std::to_string(percent) + "%";
    if (p.first_step < 0) return s;
    const std::string range = std::to_string(p.first_step) + dash + std::to_string(p.last_step);
    const std::string ranks = std::to_string(p.folders) + (p.folders == 1 ? " rank" : " ranks");
    if (p.files_fed == p.files)  // every file read: the newest steps are being judged after their history
        return s + sep + "judging the newest steps of " + range + " on " + ranks;
    // No step of every rank read yet (the first block of 64 steps goes rank by rank).
    if (p.history_through < p.first_step) return s + sep + "reading " + range + " on " + ranks;
    return s + sep + "steps " + std::to_string(p.first_step) + dash + std::to_string(p.history_through) + " of " +
           range + " on " + ranks;
}

std::optional<std::pair<std::int64_t, std::int64_t>> unread_span(const BackfillProgress& p) {
    if (!p.active || p.unread_last <= p.history_through) return std::nullopt;
    return std::pair{p.history_through + 1, p.unread_last};
}

}  // namespace msmon::tui
