// msmon's settings file, JSON or the TOML subset: every entry checked, a wrong one reported with its line and left
// at its default while the rest apply.
#include "core/config/msmon_settings.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "tests/support/test_env.hpp"

namespace msmon {
namespace {

TEST(MsmonSettings, json_entries_apply_and_wrong_ones_are_named_with_their_line) {
    const auto loaded = parse_settings("/c/config.json",
                                       "{\n"
                                       "  \"notify\": {\"bell\": \"yes\",\n"
                                       "             \"desktop\": false},\n"
                                       "  \"them\": \"mono\",\n"
                                       "  \"on_incident\": {\"command\": \"notify-send msmon\", \"timeout_s\": 5}\n"
                                       "}\n");
    EXPECT_TRUE(loaded.settings.bell) << "a wrong value keeps its default";
    EXPECT_FALSE(loaded.settings.desktop_notify);
    EXPECT_EQ(loaded.settings.on_incident, "notify-send msmon");
    EXPECT_EQ(loaded.settings.on_incident_timeout_s, 5);
    EXPECT_EQ(loaded.settings.theme, "default");
    const auto messages = loaded.messages();
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[0], "/c/config.json line 2: notify.bell must be true or false");
    EXPECT_EQ(messages[1].rfind("/c/config.json line 4: unknown setting them (msmon knows notify.bell, ", 0), 0u)
        << messages[1];
}

// A file of 40,000 keys took 35 s to read (each key's line was searched for from the top), on every start of both
// programs. Read in one pass now: far below the bound, which only a search per key comes near.
TEST(MsmonSettings, forty_thousand_keys_are_read_in_one_pass_each_with_its_line) {
    std::string text = "{\n  \"keys\": {\n";
    constexpr int kKeys = 40000;
    for (int i = 0; i < kKeys; ++i)
        text += "    \"chart:k" + std::to_string(i) + "\": \"x\"" + (i + 1 < kKeys ? ",\n" : "\n");
    text += "  },\n  \"them\": 1\n}\n";
    const auto started = std::chrono::steady_clock::now();
    const auto loaded = parse_settings("/c/config.json", text);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    EXPECT_LT(seconds, 5.0) << "40,000 keys: a search per key took 35 s";
    ASSERT_EQ(loaded.settings.keys.size(), static_cast<std::size_t>(kKeys));
    const auto last = std::find_if(loaded.settings.keys.begin(), loaded.settings.keys.end(),
                                   [](const auto& k) { return k.key == "chart:k39999"; });
    ASSERT_NE(last, loaded.settings.keys.end());
    EXPECT_EQ(last->line, 40002);
    ASSERT_EQ(loaded.problems.size(), 1u);
    EXPECT_EQ(loaded.problems[0].line, 40004) << loaded.problems[0].message;
}

// [limits]: the bounds on what is read, in MiB; a wrong one is named and keeps its default.
TEST(MsmonSettings, limits_are_whole_mebibytes_and_a_wrong_one_keeps_its_default) {
    const auto loaded = parse_settings("/c/config.toml",
                                       "[limits]\njson_document_mib = 8\nprom_file_mib = 0\nevent_record_mib = 1.5\n");
    EXPECT_EQ(loaded.settings.limits.json_document, 8 * InputLimits::kMiB);
    EXPECT_EQ(loaded.settings.limits.prom_file, InputLimits{}.prom_file);
    EXPECT_EQ(loaded.settings.limits.event_record, InputLimits{}.event_record);
    const auto messages = loaded.messages();
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[0], "/c/config.toml line 4: limits.event_record_mib must be a whole number of MiB, 1 to 65536");
    EXPECT_EQ(messages[1], "/c/config.toml line 3: limits.prom_file_mib must be a whole number of MiB, 1 to 65536");
}

TEST(MsmonSettings, json_that_does_not_parse_says_where) {
    const auto loaded = parse_settings("/c/config.json", "{\n  \"theme\": \"mono\",\n  \"notify\": {bell: true}\n}\n");
    ASSERT_EQ(loaded.problems.size(), 1u);
    EXPECT_EQ(loaded.problems[0].line, 3);
    EXPECT_NE(loaded.problems[0].message.find("not JSON"), std::string::npos);
    EXPECT_EQ(loaded.settings.theme, "default") << "nothing of a file that is not JSON applies";
}

TEST(MsmonSettings, the_toml_subset_reads_tables_strings_booleans_numbers_and_comments) {
    const auto loaded = parse_settings("/c/config.toml",
                                       "# mine\n"
                                       "theme = \"mono\"  # no colours\n"
                                       "[notify]\n"
                                       "bell = false\n"
                                       "desktop = true\n"
                                       "[on_incident]\n"
                                       "command = \"cat > \\\"/tmp/x y\\\"\"\n"
                                       "timeout_s = 2.5\n");
    EXPECT_TRUE(loaded.problems.empty()) << loaded.messages().front();
    EXPECT_EQ(loaded.settings.theme, "mono");
    EXPECT_FALSE(loaded.settings.bell);
    EXPECT_TRUE(loaded.settings.desktop_notify);
    EXPECT_EQ(loaded.settings.on_incident, "cat > \"/tmp/x y\"");
    EXPECT_EQ(loaded.settings.on_incident_timeout_s, 2.5);
}

TEST(MsmonSettings, toml_lines_it_cannot_read_are_problems_on_their_line) {
    const auto loaded = parse_settings("/c/config.toml",
                                       "[notify]\n"
                                       "bell = maybe\n"
                                       "this is not a setting\n"
                                       "[on_incident]\n"
                                       "timeout_s = 0\n"
                                       "[a.b]\n");
    const auto messages = loaded.messages();
    ASSERT_EQ(messages.size(), 4u);
    EXPECT_EQ(messages[0].rfind("/c/config.toml line 2: notify.bell: not a value msmon reads", 0), 0u) << messages[0];
    EXPECT_EQ(messages[1], "/c/config.toml line 3: not 'key = value': this is not a setting");
    EXPECT_EQ(messages[2].rfind("/c/config.toml line 6: a table header", 0), 0u) << messages[2];
    EXPECT_EQ(messages[3], "/c/config.toml line 5: on_incident.timeout_s must be a number of seconds, 0 < S <= 86400");
}

TEST(MsmonSettings, the_charts_x_axis_is_step_wall_or_elapsed) {
    EXPECT_EQ(parse_settings("/c/config.toml", "x_axis = \"wall\"\n").settings.x_axis, "wall");
    const auto wrong = parse_settings("/c/config.toml", "x_axis = \"sideways\"\n");
    EXPECT_EQ(wrong.settings.x_axis, "step");
    ASSERT_EQ(wrong.messages().size(), 1u);
    EXPECT_EQ(wrong.messages()[0], "/c/config.toml line 1: x_axis must be \"step\", \"wall\" or \"elapsed\"");
}

TEST(MsmonSettings, key_overrides_are_read_from_json_and_toml_with_their_lines) {
    auto loaded =
        parse_settings("/c/config.json", "{\n  \"keys\": {\n    \"chart:w\": \"W\",\n    \"layers:a\": 1\n  }\n}\n");
    ASSERT_EQ(loaded.settings.keys.size(), 1u);
    EXPECT_EQ(loaded.settings.keys[0].key, "chart:w");
    EXPECT_EQ(loaded.settings.keys[0].to, "W");
    EXPECT_EQ(loaded.settings.keys[0].line, 3);
    ASSERT_EQ(loaded.messages().size(), 1u);
    EXPECT_EQ(loaded.messages()[0], "/c/config.json line 4: keys.layers:a must be a string (the new key)");
    loaded = parse_settings("/c/config.toml", "[keys]\n\"chart:w\" = \"W\"\n'global:q' = \"Q\"\n");
    EXPECT_TRUE(loaded.problems.empty());
    ASSERT_EQ(loaded.settings.keys.size(), 2u);
    EXPECT_EQ(loaded.settings.keys[1].key, "global:q");
    EXPECT_EQ(loaded.settings.keys[1].line, 3);
}

TEST(MsmonSettings, msmon_config_names_the_file_or_none) {
    test::TempDir tmp;
    test::write_file(tmp / "s.json", "{\"theme\": \"mono\"}");
    ::setenv("MSMON_CONFIG", (tmp / "s.json").c_str(), 1);
    auto loaded = load_settings();
    EXPECT_EQ(loaded.path, tmp / "s.json");
    EXPECT_EQ(loaded.settings.theme, "mono");
    ::setenv("MSMON_CONFIG", "", 1);
    loaded = load_settings();
    EXPECT_TRUE(loaded.path.empty());
    EXPECT_EQ(loaded.settings.theme, "default");
    ::setenv("MSMON_CONFIG", (tmp / "missing.json").c_str(), 1);
    loaded = load_settings();
    ASSERT_EQ(loaded.problems.size(), 1u);
    EXPECT_NE(loaded.messages()[0].find("cannot be read"), std::string::npos);
    ::unsetenv("MSMON_CONFIG");
}

}  // namespace
}  // namespace msmon
