// At 80 columns no view cuts a word without saying so: every line of every view's snapshot of real runs that
// reaches the 80th column ends with the cut mark ("…", "~" in ASCII), with a character that is not a letter or
// digit, or with a whole word: one the same view at 200 columns shows as a whole field, or followed by the word
// that starts the next line (wrapped).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/text/utf8.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tests/support/view_snapshots.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

bool letter_or_digit(char32_t c) {
    return (c >= U'a' && c <= U'z') || (c >= U'A' && c <= U'Z') || (c >= U'0' && c <= U'9');
}

std::string utf8(const std::u32string& s) {
    std::string out;
    for (const char32_t c : s) append_utf8(out, c);
    return out;
}

// The first word of `line` (after its indent), or "".
std::u32string first_word(const std::u32string& line) {
    const std::size_t from = line.find_first_not_of(U' ');
    if (from == std::u32string::npos) return {};
    const std::size_t to = line.find(U' ', from);
    return line.substr(from, to == std::u32string::npos ? std::u32string::npos : to - from);
}

// `word` stands whole somewhere in `frame`: after the start of a line or a blank, and before the end of the line,
// two blanks (a field's end; one blank and more text is a sentence going on), or one blank and `next` (the text
// goes on with the word that starts the next line: a line wrapped at a space).
bool whole_word(const std::vector<std::u32string>& frame, const std::u32string& word, const std::u32string& next) {
    for (const auto& line : frame) {
        for (std::size_t p = line.find(word); p != std::u32string::npos; p = line.find(word, p + 1)) {
            const std::size_t end = p + word.size();
            const bool starts = p == 0 || line[p - 1] == U' ';
            const bool field_ends =
                end == line.size() || (line[end] == U' ' && (end + 1 == line.size() || line[end + 1] == U' '));
            const bool wraps = !next.empty() && end < line.size() && line[end] == U' ' &&
                               line.compare(end + 1, next.size(), next) == 0;
            if (starts && (field_ends || wraps)) return true;
        }
    }
    return false;
}

// The MindFormers job of the rendered fixtures, laid out as MindFormers writes it, ingested: its store's path.
std::string ingest_mindformers_job(const TempDir& tmp) {
    const std::string src = shared_dir() + "/fixtures/mindformers-rendered", out = tmp / "mf-job/output";
    fs::create_directories(out + "/log/rank_7");
    fs::create_directories(out + "/msrun_log");
    fs::copy_file(src + "/rank_7_info.log", out + "/log/rank_7/info.log");
    fs::copy_file(src + "/worker_0.log", out + "/msrun_log/worker_0.log");
    fs::copy_file(src + "/health_ckpts.json", out + "/health_ckpts.json");
    const std::string db = tmp / "mf.db";
    const auto r = run({program("msmon"), "ingest", tmp / "mf-job", "--db", db}, isolated_env(tmp));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return db;
}

TEST(SnapshotCuts, at_80_columns_no_view_cuts_a_word_without_the_cut_mark) {
    TempDir tmp;
    if (shared_dir().empty()) MSMON_SKIP_UNLESS_REQUIRED("../shared/fixtures is absent: no real runs to draw");
    // A config whose path and a running collection make the Config tab's top lines long.
    const std::string config = tmp / "monitor_config_of_the_job.json";
    write_file(config,
               "{\"targets\": {}, \"dynamic_on\": true, \"collect_times\": 3, \"xy_distribution\": true, "
               "\"format\": \"csv\", \"ops\": [\"min\", \"max\", \"norm\"]}\n");
    std::vector<std::pair<std::string, std::string>> stores;  // name, store
    for (const std::string fixture : {"nan", "lr-blowup", "sdc-grad", "dead-layer"})
        stores.emplace_back(fixture, ingest_msprobe_fault_run(tmp, fixture));
    stores.emplace_back("mindformers-rendered", ingest_mindformers_job(tmp));
    int lines_checked = 0;
    for (const auto& [fixture, db] : stores) {
        for (const std::string& view : view_names()) {
            for (const std::string locale : {"C.UTF-8", "C"}) {
                const char32_t mark = locale == "C" ? U'~' : U'\u2026';
                const CommandResult narrow = view_snapshot(tmp, db, config, view, "80x24", locale);
                const CommandResult wide = view_snapshot(tmp, db, config, view, "200x24", locale);
                ASSERT_EQ(narrow.exit_code, 0) << narrow.err;
                ASSERT_EQ(wide.exit_code, 0) << wide.err;
                const auto lines = frame_cells(narrow.out), wide_lines = frame_cells(wide.out);
                for (std::size_t y = 0; y < lines.size(); ++y) {
                    const std::u32string& line = lines[y];
                    ASSERT_LE(line.size(), 80u) << utf8(line);
                    if (line.size() < 80) continue;
                    ++lines_checked;
                    const char32_t last = line.back();
                    if (last == mark || !letter_or_digit(last)) continue;
                    const std::size_t blank = line.rfind(U' ');
                    const std::u32string word = line.substr(blank == std::u32string::npos ? 0 : blank + 1);
                    const std::u32string next = y + 1 < lines.size() ? first_word(lines[y + 1]) : std::u32string();
                    EXPECT_TRUE(whole_word(wide_lines, word, next))
                        << fixture << " " << view << " " << locale << ": '" << utf8(word)
                        << "' ends the line at column 80 cut without a mark:\n"
                        << utf8(line) << "\nat 80 columns:\n"
                        << narrow.out << "at 200 columns:\n"
                        << wide.out;
                }
            }
        }
    }
    EXPECT_GT(lines_checked, 0) << "no line reached column 80: nothing was checked";
}

}  // namespace
}  // namespace msmon::test
