// The parts of the ClickHouse path that need no server: URLs, gzip framing, RowBinary both ways.
#include "store/clickhouse/clickhouse_client.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "store/clickhouse/row_binary.hpp"

namespace msmon {
namespace {

TEST(ClickHouseUrl, host_port_and_database_are_parsed_and_bad_ones_refused) {
    std::string error;
    auto t = parse_clickhouse_url("clickhouse://ch.example:9123/msmon_1", error);
    ASSERT_TRUE(t) << error;
    EXPECT_EQ(t->host, "ch.example");
    EXPECT_EQ(t->port, 9123);
    EXPECT_EQ(t->database, "msmon_1");
    t = parse_clickhouse_url("clickhouse://[::1]/db", error);
    ASSERT_TRUE(t) << error;
    EXPECT_EQ(t->host, "::1");
    EXPECT_EQ(t->port, 8123);
    EXPECT_FALSE(parse_clickhouse_url("http://h:1/db", error));
    EXPECT_FALSE(parse_clickhouse_url("clickhouse://h:1", error));
    EXPECT_FALSE(parse_clickhouse_url("clickhouse://h:99999/db", error));
    EXPECT_FALSE(parse_clickhouse_url("clickhouse://h:1/db;DROP", error));
}

TEST(ClickHouseWire, gzip_round_trips_and_a_truncated_body_does_not_decompress) {
    std::string text;
    for (int i = 0; i < 10000; ++i) text += "row " + std::to_string(i) + "\n";
    const std::string z = gzip_compress(text);
    std::string back;
    ASSERT_TRUE(gunzip(z, back));
    EXPECT_EQ(back, text);
    std::string cut;
    EXPECT_FALSE(gunzip(std::string_view(z).substr(0, z.size() / 2), cut));
}

TEST(ClickHouseWire, row_binary_carries_nan_negative_zero_and_long_strings_exactly) {
    RowBinaryWriter w;
    w.f64(std::numeric_limits<double>::quiet_NaN());
    w.f64(-0.0);
    w.i64(-5);
    w.str(std::string(300, 'x'));
    w.u8(7);
    RowBinaryReader r(w.data());
    EXPECT_TRUE(std::isnan(r.f64()));
    const double z = r.f64();
    EXPECT_TRUE(z == 0 && std::signbit(z));
    EXPECT_EQ(r.i64(), -5);
    EXPECT_EQ(r.str(), std::string(300, 'x'));
    EXPECT_EQ(r.u8(), 7);
    EXPECT_TRUE(r.at_end());
    EXPECT_THROW(r.i32(), std::runtime_error);
    EXPECT_EQ(ch_quote("it's\\"), "'it\\'s\\\\'");
}

}  // namespace
}  // namespace msmon
