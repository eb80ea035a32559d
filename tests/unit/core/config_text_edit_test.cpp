// A save rewrites only the text of the values that changed: a hand-formatted config keeps its indentation, its
// one-line lists, its number spelling and its final newline; added keys go last in the file's own style.
#include "core/config/config_text_edit.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "core/config/config_patch.hpp"
#include "core/config/ordered_json_parse.hpp"

namespace msmon {
namespace {

using json = nlohmann::ordered_json;

const char* kHandWritten =
    "{\n"
    "    \"targets\": {\n"
    "        \"module.layers.0\": {}\n"
    "    },\n"
    "    \"dynamic_on\": false,\n"
    "    \"collect_times\": 3,\n"
    "    \"ops\": [\"min\", \"max\", \"norm\"],\n"
    "    \"eps\": 1e-3,\n"
    "    \"alert\": {\"rules\": [{\"rule_name\": \"AnomalyTurbulence\", \"args\": {\"threshold\": 0.5}}], "
    "\"dump\": false}\n"
    "}\n";

json parsed(std::string_view text) {
    json doc;
    std::string error;
    EXPECT_TRUE(parse_ordered_json(text, doc, error)) << error;
    return doc;
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
}

// The lines that differ, as "-old" / "+new" pairs (same line count on both sides).
std::vector<std::string> changed_lines(const std::string& a, const std::string& b) {
    const auto x = lines_of(a), y = lines_of(b);
    EXPECT_EQ(x.size(), y.size()) << b;
    std::vector<std::string> out;
    for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i)
        if (x[i] != y[i]) {
            out.push_back("-" + x[i]);
            out.push_back("+" + y[i]);
        }
    return out;
}

json edited(const json& doc, const ConfigPatch& patch) {
    return apply_patch(doc, patch);
}

TEST(ConfigTextEdit, enabling_a_collection_changes_only_the_two_values_lines) {
    const json before = parsed(kHandWritten);
    const json after = edited(before, {{{"dynamic_on"}, json(true)}, {{"collect_times"}, json(5)}});
    const std::string out = edit_config_text(kHandWritten, before, after);
    EXPECT_EQ(changed_lines(kHandWritten, out),
              (std::vector<std::string>{"-    \"dynamic_on\": false,", "+    \"dynamic_on\": true,",
                                        "-    \"collect_times\": 3,", "+    \"collect_times\": 5,"}));
    EXPECT_EQ(parsed(out), after);
    EXPECT_NE(out.find("\"eps\": 1e-3,"), std::string::npos) << "the number's spelling was kept";
    EXPECT_EQ(out.back(), '\n');
}

TEST(ConfigTextEdit, a_one_line_list_stays_on_one_line_and_a_nested_value_is_changed_in_place) {
    const json before = parsed(kHandWritten);
    const json after = edited(before, {{{"ops"}, json::array({"min", "max"})}, {{"alert", "dump"}, json(true)}});
    const std::string out = edit_config_text(kHandWritten, before, after);
    const auto diff = changed_lines(kHandWritten, out);
    ASSERT_EQ(diff.size(), 4u) << out;
    EXPECT_EQ(diff[1], "+    \"ops\": [\"min\", \"max\"],");
    EXPECT_NE(diff[3].find("\"args\": {\"threshold\": 0.5}}], \"dump\": true}"), std::string::npos) << diff[3];
    EXPECT_EQ(parsed(out), after);
}

TEST(ConfigTextEdit, an_added_key_goes_last_in_the_files_indentation_and_a_removed_one_leaves_no_trace) {
    const json before = parsed(kHandWritten);
    json after = edited(before, {{{"ops"}, std::nullopt}, {{"start_step"}, json(100)}});
    const std::string out = edit_config_text(kHandWritten, before, after);
    EXPECT_EQ(out.find("ops"), std::string::npos);
    EXPECT_NE(out.find("\"dump\": false},\n    \"start_step\": 100\n}\n"), std::string::npos) << out;
    EXPECT_EQ(parsed(out), after);
    // The first key removed, and every key of a nested object removed.
    after = edited(
        before, {{{"targets"}, std::nullopt}, {{"alert", "rules"}, std::nullopt}, {{"alert", "dump"}, std::nullopt}});
    const std::string out2 = edit_config_text(kHandWritten, before, after);
    EXPECT_EQ(out2.rfind("{\n    \"dynamic_on\": false,\n", 0), 0u) << out2;
    EXPECT_NE(out2.find("\"alert\": {}\n}"), std::string::npos) << out2;
    EXPECT_EQ(parsed(out2), after);
}

TEST(ConfigTextEdit, a_value_changing_shape_is_written_in_the_files_style) {
    const json before = parsed(kHandWritten);
    const json after = edited(before, {{{"collect_times"}, json::object({{"a", 1}, {"b", json::array({1, 2})}})}});
    const std::string out = edit_config_text(kHandWritten, before, after);
    EXPECT_NE(out.find("    \"collect_times\": {\n        \"a\": 1,\n        \"b\": [\n            1,\n"),
              std::string::npos)
        << out;
    EXPECT_EQ(parsed(out), after);
}

TEST(ConfigTextEdit, nothing_changed_is_the_same_bytes_and_1_to_1_0_is_a_change) {
    const json before = parsed(kHandWritten);
    EXPECT_EQ(edit_config_text(kHandWritten, before, before), kHandWritten);
    json three = before;
    three["collect_times"] = 3LL;  // typed in: a signed integer, where the file's 3 is read unsigned
    EXPECT_TRUE(same_config_value(before["collect_times"], three["collect_times"]));
    EXPECT_TRUE(diff_configs(before, three).empty()) << "3 → 3 is no change";
    json float_eps = before;
    float_eps["ndigits"] = 1.0;
    json int_eps = before;
    int_eps["ndigits"] = 1;
    EXPECT_FALSE(diff_configs(int_eps, float_eps).empty()) << "1 → 1.0 is a change for msprobe";
}

TEST(ConfigTextEdit, crlf_a_missing_final_newline_and_a_bom_are_handled) {
    const std::string text = "\xEF\xBB\xBF{\r\n\t\"dynamic_on\": false,\r\n\t\"ops\": [\"min\"]\r\n}";
    const json before = parsed(text.substr(3));
    const json after = edited(before, {{{"dynamic_on"}, json(true)}, {{"collect_times"}, json(2)}});
    const std::string out = edit_config_text(text, before, after);
    EXPECT_EQ(out, "{\r\n\t\"dynamic_on\": true,\r\n\t\"ops\": [\"min\"],\r\n\t\"collect_times\": 2\r\n}");
}

TEST(ConfigTextEdit, a_repeated_key_or_a_root_that_is_no_object_is_written_whole_and_still_right) {
    const std::string text = "{\"a\": 1, \"a\": 2, \"b\": 3}";
    const json before = parsed(text);
    const json after = edited(before, {{{"b"}, json(4)}});
    const std::string out = edit_config_text(text, before, after);
    EXPECT_EQ(parsed(out), after);
    EXPECT_EQ(out.back(), '\n') << "rendered whole";
    // Escapes in keys and strings are found as keys, not cut in the middle.
    const std::string esc = "{\"k\\\"ey\": \"a,}\\\"]\", \"n\": 1}";
    const json b2 = parsed(esc);
    const json a2 = edited(b2, {{{"n"}, json(2)}});
    EXPECT_EQ(edit_config_text(esc, b2, a2), "{\"k\\\"ey\": \"a,}\\\"]\", \"n\": 2}");
}

// Past kVerifiedEditBytes the edit is not parsed back (a config of 300,000 targets took a third parse): it must be
// right by itself. 100,000 targets, 3.5 MB.
TEST(ConfigTextEdit, a_large_config_is_edited_in_place_without_being_parsed_back) {
    std::string text = "{\n    \"targets\": {";
    for (int i = 0; i < 100000; ++i)
        text += std::string(i ? "," : "") + "\n        \"module.layers." + std::to_string(i) + ".mlp\": {}";
    text += "\n    },\n    \"dynamic_on\": false,\n    \"collect_times\": 1\n}\n";
    ASSERT_GT(text.size(), kVerifiedEditBytes);
    const json before = parsed(text);
    const json after = edited(before, {{{"dynamic_on"}, json(true)}, {{"collect_times"}, json(3)}});
    std::string expected = text;
    expected.replace(expected.find("\"dynamic_on\": false"), 19, "\"dynamic_on\": true");
    expected.replace(expected.find("\"collect_times\": 1"), 18, "\"collect_times\": 3");
    EXPECT_EQ(edit_config_text(text, before, after), expected);
    EXPECT_EQ(edit_config_text_in_place(kHandWritten, parsed(kHandWritten), parsed(kHandWritten)), kHandWritten);
}

}  // namespace
}  // namespace msmon
