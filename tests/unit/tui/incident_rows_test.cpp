// The incidents list drawn by the Anomalies view from a real store: an expanded incident's anomalies show
// their value against the reference as whole numbers, with fewer digits when the column is short, never a
// number cut.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <sstream>

#include "store/sqlite_ingest_store.hpp"
#include "tests/support/test_env.hpp"
#include "tui/screen_buffer.hpp"
#include "tui/views/anomalies_view.hpp"

namespace msmon::test {
namespace {

TEST(IncidentRows, an_expanded_incident_shows_each_value_against_its_reference_as_whole_numbers) {
    TempDir tmp;
    const std::vector<std::pair<double, double>> values = {
        {1.234567e-05, 9.87654e-07}, {-3.5e+12, 2.25e-11}, {3.4e+38, 0.0123}, {0.1867, 0.001781}, {NAN, 0}, {42, 41.5}};
    {
        SqliteIngestStore store(tmp / "s.db");
        RecordBatch b;
        for (std::size_t i = 0; i < values.size(); ++i) {
            AnomalyRecord a;
            a.source = "detected";
            a.rule = "Jump";
            a.rank = static_cast<int>(i);
            a.step = 7;
            a.kind = "grad_reduced";
            a.name = "layers.0.fc1.weight";
            a.op = "norm";
            a.value = values[i].first;
            a.reference = values[i].second;
            a.tag_name = a.name + "/rank" + std::to_string(i);
            a.key = a.tag_name;
            a.message = "m";
            a.score = 80;
            b.anomalies.push_back(a);
        }
        store.commit(b);
    }
    auto reader = open_sqlite_reader(tmp / "s.db");
    tui::SharedSelection shared;
    IncidentIndex incidents;
    tui::AnomaliesView view(shared, incidents, [] {});
    view.collect(*reader);
    tui::Reaction r = tui::Reaction::none;
    ASSERT_TRUE(tui::dispatch(view.keys(), ' ', r));
    tui::ScreenBuffer buf(100, 20);
    view.draw(buf, 0, 0, 100, 20, tui::Glyphs{false, true});
    static const std::regex member(
        R"(^[> ] [|`] +7 +(\d+) grad_reduced +Jump +(\S+) vs (\S+) +layers\.0\.fc1\.weight$)");
    std::istringstream in(buf.to_text());
    std::size_t seen = 0;
    for (std::string l; std::getline(in, l);) {
        l.erase(l.find_last_not_of(' ') + 1);
        std::smatch m;
        if (!std::regex_match(l, m, member)) continue;
        ++seen;
        const auto& [value, reference] = values[std::stoul(m[1])];
        for (const auto& [text, expected] : {std::pair{m[2].str(), value}, std::pair{m[3].str(), reference}}) {
            std::size_t used = 0;
            const double shown = std::stod(text, &used);
            EXPECT_EQ(used, text.size()) << "not a whole number: " << l;
            if (std::isnan(expected)) {
                EXPECT_TRUE(std::isnan(shown)) << l;
                continue;
            }
            if (expected == 0) {
                EXPECT_EQ(shown, 0) << l;
                continue;
            }
            // Rounded, not cut: within half a unit of the last digit shown.
            const std::string mantissa = text.substr(0, text.find('e'));
            int digits = 0;
            for (char c : mantissa)
                if (c >= '0' && c <= '9' && (digits > 0 || c != '0')) ++digits;
            const double unit = std::pow(10.0, std::floor(std::log10(std::abs(expected))) - std::max(digits, 1) + 1);
            EXPECT_LE(std::abs(shown - expected), unit * 0.5 * (1 + 1e-9)) << text << " for " << expected << ": " << l;
        }
    }
    EXPECT_EQ(seen, values.size()) << buf.to_text();
}

}  // namespace
}  // namespace msmon::test
