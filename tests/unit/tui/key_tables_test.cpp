// Input is data: in every mode of msmon-tui (each tab, Config's form / typing / review, Health's run config page,
// the filter and command lines, help) every key binding is listed by help with its text, and no binding is shadowed:
// the key reaches it through the tables the app consults, in their order. Then every bound key is pressed once in
// that mode, on a real store: nothing throws and the app keeps running unless the key is quit.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>

#include "store/reader.hpp"
#include "tests/support/e2e_support.hpp"
#include "tests/support/test_env.hpp"
#include "tui/app.hpp"

namespace msmon::test {
namespace {

using tui::App;

class KeyTables : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tmp_ = new TempDir;
        const auto env = isolated_env(*tmp_);
        auto sim =
            run({program("msmon"), "simulate", *tmp_ / "job", "--ranks", "4", "--steps", "30", "--faults", "spike@20"},
                env);
        ASSERT_EQ(sim.exit_code, 0) << sim.err;
        auto ingest = run({program("msmon"), "ingest", *tmp_ / "job", "--db", *tmp_ / "store.db"}, env);
        ASSERT_EQ(ingest.exit_code, 0) << ingest.err;
        write_file(*tmp_ / "config.json",
                   R"({"targets": {}, "wg_distribution": true, "dynamic_on": false, "collect_times": 3})");
    }
    static void TearDownTestSuite() {
        delete tmp_;
        tmp_ = nullptr;
    }
    // A fresh app brought into a mode by `keys` pressed on `tab`.
    static std::unique_ptr<App> app_in(const std::string& tab, const std::vector<int>& keys) {
        auto app = std::make_unique<App>(open_sqlite_reader(*tmp_ / "store.db"), *tmp_ / "config.json");
        EXPECT_TRUE(app->select_view(tab));
        app->collect();
        for (int k : keys) press(*app, k);
        return app;
    }
    static bool press(App& app, int key) {
        bool reload = false, redraw = false;
        const bool running = app.handle_key(key, 0, 0, reload, redraw);
        if (reload) app.collect();
        tui::ScreenBuffer buf(100, 30);
        app.compose(buf, tui::Glyphs{});
        return running;
    }
    static TempDir* tmp_;
};

TempDir* KeyTables::tmp_ = nullptr;

struct ModeCase {
    std::string name, tab;
    std::vector<int> keys;  // pressed to enter the mode
};

TEST_F(KeyTables, help_lists_every_binding_of_every_mode_and_every_binding_is_reached_by_its_keys) {
    const std::vector<ModeCase> modes = {
        {"Overview", "overview", {}},
        {"Chart", "chart", {}},
        {"Anomalies", "anomalies", {}},
        {"Health", "health", {}},
        {"Health: run config", "health", {'c'}},
        {"Config: form", "config", {}},
        {"Config: typing a value", "config", {tui::kKeyDown, tui::kKeyDown, tui::kKeyDown, tui::kKeyEnter}},
        {"Config: collect_times", "config", {'c'}},
        {"Config: review", "config", {'s'}},
        {"Experts", "experts", {}},
        {"the / filter", "overview", {'/'}},
        {"the : command line", "overview", {':'}},
        {"help", "anomalies", {'?'}},
    };
    std::size_t bindings = 0;
    for (const ModeCase& mode : modes) {
        SCOPED_TRACE(mode.name);
        auto app = app_in(mode.tab, mode.keys);
        const auto chain = app->dispatch_chain();
        ASSERT_FALSE(chain.empty());
        const auto help = app->help_lines();
        std::set<int> earlier;  // keys bound by a table before, or a binding before in the same table
        std::vector<int> keys_of_mode;
        for (const auto& m : chain) {
            std::set<int> in_table;
            for (const auto& b : *m.keys) {
                ++bindings;
                EXPECT_NE(std::find(help.begin(), help.end(), std::make_pair(b.label, b.help)), help.end())
                    << m.name << ": help does not list " << b.label << " (" << b.help << ")";
                EXPECT_FALSE(b.keys.empty()) << b.label;
                for (int k : b.keys) {
                    EXPECT_FALSE(earlier.count(k) || in_table.count(k))
                        << m.name << ": " << b.label << " is shadowed: key " << k << " is bound before it";
                    in_table.insert(k);
                    keys_of_mode.push_back(k);
                }
            }
            earlier.insert(in_table.begin(), in_table.end());
        }
        // Press each bound key once, in a fresh app in this mode.
        for (int k : keys_of_mode) {
            auto fresh = app_in(mode.tab, mode.keys);
            bool running = true;
            EXPECT_NO_THROW(running = press(*fresh, k)) << "key " << k;
            const bool quits = k == 'q' && mode.name != "the / filter" && mode.name != "the : command line" &&
                               mode.name.rfind("Config: typing", 0) != 0 && mode.name != "Config: collect_times";
            EXPECT_EQ(running, !quits) << "key " << k;
        }
    }
    EXPECT_GT(bindings, 150u) << "every mode's table was walked";
}

TEST_F(KeyTables, help_lists_every_command_of_the_view_and_of_the_app) {
    auto app = app_in("anomalies", {});
    const auto help = app->help_lines();
    for (const tui::CommandTable* table : {&app->view(tui::TabId::anomalies).commands(), &app->commands()})
        for (const auto& c : *table) {
            if (c.verb == "q") continue;  // quit's short form, listed with it
            const std::string label = c.verb + (c.args.empty() ? "" : " " + c.args);
            EXPECT_NE(std::find(help.begin(), help.end(), std::make_pair(label, c.help)), help.end()) << label;
        }
}

}  // namespace
}  // namespace msmon::test
