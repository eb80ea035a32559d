// Unit tests for core/text/csv_record: record boundaries in a growing buffer, record walking, field
// splitting.
#include "core/text/csv_record.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace msmon {
namespace {

std::vector<std::string> split(std::string_view record, bool& ok) {
    std::vector<std::string_view> fields;
    std::string scratch;
    ok = split_csv_fields(record, fields, scratch);
    return {fields.begin(), fields.end()};
}

std::vector<std::string> split_ok(std::string_view record) {
    bool ok = false;
    auto out = split(record, ok);
    EXPECT_TRUE(ok) << "rejected: " << record;
    return out;
}

struct Walked {
    std::string record;
    std::size_t lines;
};

std::vector<Walked> walk(std::string_view data) {
    CsvRecordCursor cursor(data);
    std::vector<Walked> out;
    std::string_view record;
    std::size_t lines = 0;
    while (cursor.next(record, lines)) out.push_back({std::string(record), lines});
    return out;
}

TEST(CsvRecord, complete_length_covers_every_terminated_line) {
    EXPECT_EQ(complete_records_length("a,b\nc,d\n"), 8u);
    EXPECT_EQ(complete_records_length(""), 0u);
    EXPECT_EQ(complete_records_length("\n"), 1u);
}

TEST(CsvRecord, keeps_partial_last_line_until_newline) {
    const std::string data = "h1,h2\n1,2\n3,";
    EXPECT_EQ(complete_records_length(data), 10u);
    EXPECT_EQ(complete_records_length("no newline yet"), 0u);
}

TEST(CsvRecord, newline_inside_quoted_field_is_not_a_record_end) {
    const std::string data = "a,\"line1\nline2\"\nb,c\n";
    EXPECT_EQ(complete_records_length(data), data.size());
    // The same record cut before its closing quote: nothing is complete, not even up to the inner newline.
    EXPECT_EQ(complete_records_length("a,\"line1\nline2"), 0u);
    EXPECT_EQ(complete_records_length("x\na,\"line1\nli"), 2u);
}

TEST(CsvRecord, quoted_field_closed_but_line_unterminated_waits) {
    EXPECT_EQ(complete_records_length("x\n0,\"[16, 8]\""), 2u);
}

TEST(CsvRecord, doubled_quotes_do_not_confuse_record_ends) {
    const std::string data = "\"say \"\"hi\"\"\nthere\",1\n2,\"\"\"\"\n";
    EXPECT_EQ(complete_records_length(data), data.size());
    EXPECT_EQ(complete_records_length("\"a\"\"\n"), 0u);  // "" is an escaped quote: still inside the field
}

TEST(CsvRecord, crlf_lines_end_at_the_lf) {
    EXPECT_EQ(complete_records_length("a,b\r\nc,d\r\n"), 10u);
    EXPECT_EQ(complete_records_length("a,b\r\nc,d\r"), 5u);
}

TEST(CsvRecord, record_end_finds_the_first_unquoted_newline_from_an_offset) {
    const std::string data = "a\n\"b\nc\"\nd";
    EXPECT_EQ(csv_record_end(data, 0), 2u);
    EXPECT_EQ(csv_record_end(data, 2), 8u);
    EXPECT_EQ(csv_record_end(data, 8), std::string_view::npos);
}

TEST(CsvRecord, cursor_yields_records_without_terminators) {
    auto records = walk("h1,h2\n1,2\r\n\n3,4\n");
    ASSERT_EQ(records.size(), 4u);
    EXPECT_EQ(records[0].record, "h1,h2");
    EXPECT_EQ(records[1].record, "1,2");
    EXPECT_EQ(records[2].record, "");
    EXPECT_EQ(records[3].record, "3,4");
    for (const auto& r : records) EXPECT_EQ(r.lines, 1u);
}

TEST(CsvRecord, cursor_keeps_multi_line_quoted_record_whole_and_counts_physical_lines) {
    const std::string data =
        "module_name,stack_info\n"
        "0:mlp,\"File a.py, line 1, in f, \n x = 1 \nFile b.py, line 2, in g, \n y() \n\"\n"
        "0:attn,\"one\"\n";
    auto records = walk(data);
    ASSERT_EQ(records.size(), 3u);
    EXPECT_EQ(records[0].record, "module_name,stack_info");
    EXPECT_EQ(records[0].lines, 1u);
    EXPECT_EQ(records[1].record, "0:mlp,\"File a.py, line 1, in f, \n x = 1 \nFile b.py, line 2, in g, \n y() \n\"");
    EXPECT_EQ(records[1].lines, 5u);
    EXPECT_EQ(records[2].record, "0:attn,\"one\"");
    EXPECT_EQ(records[2].lines, 1u);
}

TEST(CsvRecord, cursor_keeps_carriage_return_inside_quotes) {
    auto records = walk("\"a\r\"\r\n");
    ASSERT_EQ(records.size(), 1u);
    EXPECT_EQ(records[0].record, "\"a\r\"");
}

TEST(CsvRecord, cursor_walks_exactly_the_complete_prefix) {
    const std::string data = "a,1\nb,\"x\ny\"\nc,\"unfinished\n";
    auto records = walk(std::string_view(data).substr(0, complete_records_length(data)));
    ASSERT_EQ(records.size(), 2u);
    EXPECT_EQ(records[1].record, "b,\"x\ny\"");
    EXPECT_EQ(records[0].lines + records[1].lines, 3u);
}

TEST(CsvRecord, cursor_on_empty_buffer_yields_nothing) {
    EXPECT_TRUE(walk("").empty());
}

TEST(CsvRecord, splits_quoted_shape_as_one_field) {
    auto f = split_ok("0,w,0,0.87,\"[16, 8]\",torch.float32");
    ASSERT_EQ(f.size(), 6u);
    EXPECT_EQ(f[4], "[16, 8]");
    EXPECT_EQ(f[5], "torch.float32");
}

TEST(CsvRecord, unquotes_doubled_quotes) {
    auto f = split_ok("\"a\"\"b\",\"\"\"\",c");
    ASSERT_EQ(f.size(), 3u);
    EXPECT_EQ(f[0], "a\"b");
    EXPECT_EQ(f[1], "\"");
    EXPECT_EQ(f[2], "c");
}

TEST(CsvRecord, keeps_empty_fields) {
    EXPECT_EQ(split_ok("a,,b"), (std::vector<std::string>{"a", "", "b"}));
    EXPECT_EQ(split_ok(",3,x"), (std::vector<std::string>{"", "3", "x"}));
    EXPECT_EQ(split_ok(","), (std::vector<std::string>{"", ""}));
    EXPECT_EQ(split_ok(""), (std::vector<std::string>{""}));
    EXPECT_EQ(split_ok("\"\",x"), (std::vector<std::string>{"", "x"}));
}

TEST(CsvRecord, trailing_comma_gives_an_empty_last_field) {
    EXPECT_EQ(split_ok("a,b,"), (std::vector<std::string>{"a", "b", ""}));
    EXPECT_EQ(split_ok("\"a\","), (std::vector<std::string>{"a", ""}));
}

TEST(CsvRecord, quoted_fields_may_hold_commas_and_newlines) {
    auto f = split_ok("\"a,b\",\"c\nd\",\"e\"");
    EXPECT_EQ(f, (std::vector<std::string>{"a,b", "c\nd", "e"}));
}

TEST(CsvRecord, field_views_stay_valid_across_many_quoted_fields) {
    std::string record;
    std::vector<std::string> expected;
    for (int i = 0; i < 200; ++i) {
        const std::string value = "v\"" + std::to_string(i) + ",";
        expected.push_back(value);
        if (i) record += ",";
        append_csv_field(record, value);
    }
    EXPECT_EQ(split_ok(record), expected);
}

TEST(CsvRecord, malformed_quotes_are_rejected) {
    for (const char* bad : {"\"abc", "a,\"b", "\"a\"b,c", "a\"b,c", "x,y\"", "\"a\" ,b", "\"a\"\"", "a,\"b\"c"}) {
        bool ok = true;
        split(bad, ok);
        EXPECT_FALSE(ok) << "accepted: " << bad;
    }
}

TEST(CsvRecord, split_reuses_output_vectors) {
    std::vector<std::string_view> fields;
    std::string scratch;
    ASSERT_TRUE(split_csv_fields("\"a,b\",c,d", fields, scratch));
    ASSERT_TRUE(split_csv_fields("x", fields, scratch));
    ASSERT_EQ(fields.size(), 1u);
    EXPECT_EQ(fields[0], "x");
}

TEST(CsvRecord, append_field_leaves_plain_text_bare) {
    std::string out;
    append_csv_field(out, "torch.float32");
    out += ",";
    append_csv_field(out, "");
    out += ",";
    append_csv_field(out, "[1024]");
    EXPECT_EQ(out, "torch.float32,,[1024]");
}

TEST(CsvRecord, append_field_quotes_per_rfc4180) {
    auto quoted = [](std::string_view field) {
        std::string out;
        append_csv_field(out, field);
        return out;
    };
    EXPECT_EQ(quoted("[16, 8]"), "\"[16, 8]\"");
    EXPECT_EQ(quoted("say \"hi\""), "\"say \"\"hi\"\"\"");
    EXPECT_EQ(quoted("a\nb"), "\"a\nb\"");
    EXPECT_EQ(quoted("a\rb"), "\"a\rb\"");
    EXPECT_EQ(quoted("\""), "\"\"\"\"");
}

TEST(CsvRecord, appended_fields_split_back_to_the_originals) {
    const std::vector<std::string> fields = {"0", "", "a,b", "\"q\"", "multi\nline\r\n", "[4096, 1, 1024]", "plain"};
    std::string record;
    for (std::size_t i = 0; i < fields.size(); ++i) {
        if (i) record += ",";
        append_csv_field(record, fields[i]);
    }
    record += "\n";
    EXPECT_EQ(complete_records_length(record), record.size());
    EXPECT_EQ(split_ok(std::string_view(record).substr(0, record.size() - 1)), fields);
}

}  // namespace
}  // namespace msmon
