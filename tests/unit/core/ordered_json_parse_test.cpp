// parse_ordered_json gives exactly what nlohmann's ordered_json::parse gives (order, duplicate keys, numbers,
// errors), for the monitor configs msmon reads and rewrites.
#include "core/config/ordered_json_parse.hpp"

#include <gtest/gtest.h>

namespace msmon {
namespace {

using ojson = nlohmann::ordered_json;

void expect_same_as_nlohmann(const std::string& text) {
    ojson mine;
    std::string error;
    bool nl_ok = true;
    ojson theirs;
    std::string their_error;
    try {
        theirs = ojson::parse(text);
    } catch (const ojson::exception& e) {
        nl_ok = false;
        their_error = e.what();
    }
    EXPECT_EQ(parse_ordered_json(text, mine, error), nl_ok) << text;
    if (nl_ok) {
        EXPECT_EQ(mine.dump(), theirs.dump()) << text;  // dump keeps key order: the order is compared too
    } else {
        EXPECT_EQ(error, their_error) << text;
    }
}

TEST(OrderedJsonParse, gives_what_nlohmann_gives_for_configs_duplicates_numbers_and_errors) {
    for (const std::string text : {
             R"({"targets": {}, "dynamic_on": false, "collect_times": 1, "ops": ["norm", "min"], "eps": 1e-8})",
             R"({"z": 1, "a": 2, "m": {"y": [1, 2, {"b": null}], "x": true}})",
             R"({"a": 1, "b": 2, "a": 3})",  // the last value, at the first key's place
             R"({"k": -9223372036854775808, "u": 18446744073709551615, "f": 1.5e300, "s": "\u00e9\n"})",
             R"([1, [2, [3, []]], {}])",
             R"("just a string")",
             R"({"a": 1,})",
             R"({"a": [1, 2})",
             R"({"a": 1} trailing)",
             "",
         })
        expect_same_as_nlohmann(text);
}

TEST(OrderedJsonParse, twelve_thousand_targets_keep_their_order_and_duplicates_past_the_index_threshold) {
    std::string text = R"({"targets": {)";
    for (int i = 0; i < 12000; ++i) text += (i ? "," : "") + std::string("\"t") + std::to_string(i) + "\": {}";
    text += R"(, "t5": {"again": 1}, "t11999": [2]}, "ops": ["norm"]})";
    expect_same_as_nlohmann(text);
    ojson doc;
    std::string error;
    ASSERT_TRUE(parse_ordered_json(text, doc, error)) << error;
    ASSERT_EQ(doc["targets"].size(), 12000u);
    EXPECT_EQ(doc["targets"].begin().key(), "t0");
    EXPECT_EQ(doc["targets"]["t5"]["again"], 1);
    std::string last;
    for (auto it = doc["targets"].begin(); it != doc["targets"].end(); ++it) last = it.key();
    EXPECT_EQ(last, "t11999");
    EXPECT_EQ(doc["targets"]["t11999"], ojson::array({2}));
}

}  // namespace
}  // namespace msmon
