// Unit tests for core/text/number_text: exact parsing of msprobe's number text and shortest/Python printing.
#include "core/text/number_text.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace msmon {
namespace {

std::uint64_t bits_of(double v) {
    return std::bit_cast<std::uint64_t>(v);
}

// Exact equality including the sign of zero.
void expect_parses_to(std::string_view text, double expected) {
    auto v = parse_double(text);
    ASSERT_TRUE(v.has_value()) << "'" << text << "' was rejected";
    EXPECT_EQ(bits_of(*v), bits_of(expected)) << "'" << text << "' parsed to " << *v;
}

TEST(NumberText, parses_plain_decimals_exactly) {
    expect_parses_to("0.872913", 0.872913);
    expect_parses_to("-0.003447", -0.003447);
    expect_parses_to("0.41227", 0.41227);
    expect_parses_to("3.0", 3.0);
    expect_parses_to("1156.930447", 1156.930447);
    expect_parses_to("+2.5", 2.5);
}

TEST(NumberText, parses_python_exponent_forms) {
    expect_parses_to("1e-06", 1e-06);
    expect_parses_to("-9e-06", -9e-06);
    expect_parses_to("1.1e-05", 1.1e-05);
    expect_parses_to("1e+16", 1e16);
    expect_parses_to("1E+16", 1e16);
    expect_parses_to("2.5e300", 2.5e300);
}

TEST(NumberText, parses_integer_text_as_a_double) {
    expect_parses_to("17", 17.0);
    expect_parses_to("0", 0.0);
    expect_parses_to("-3", -3.0);
}

TEST(NumberText, parses_nan_and_infinities) {
    auto nan = parse_double("nan");
    ASSERT_TRUE(nan.has_value());
    EXPECT_TRUE(std::isnan(*nan));
    auto upper_nan = parse_double("NaN");
    ASSERT_TRUE(upper_nan.has_value());
    EXPECT_TRUE(std::isnan(*upper_nan));
    expect_parses_to("inf", std::numeric_limits<double>::infinity());
    expect_parses_to("-inf", -std::numeric_limits<double>::infinity());
    expect_parses_to("+inf", std::numeric_limits<double>::infinity());
}

TEST(NumberText, negative_zero_keeps_its_sign_bit) {
    auto v = parse_double("-0.0");
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(*v, 0.0);
    EXPECT_TRUE(std::signbit(*v));
    auto positive = parse_double("0.0");
    ASSERT_TRUE(positive.has_value());
    EXPECT_FALSE(std::signbit(*positive));
}

TEST(NumberText, rejects_text_that_is_not_one_whole_number) {
    for (const char* bad : {"", "1.2.3", "0x10", "1e", " 1", "1 ", "abc", "nan1", "-", "+", "--1", "+-1", "1,5", "infx",
                            "e5", "1e+", "0.5abc"}) {
        EXPECT_FALSE(parse_double(bad).has_value()) << "accepted '" << bad << "'";
    }
}

TEST(NumberText, parse_int_accepts_signed_decimal_integers) {
    EXPECT_EQ(parse_int("0"), 0);
    EXPECT_EQ(parse_int("17"), 17);
    EXPECT_EQ(parse_int("-1"), -1);
    EXPECT_EQ(parse_int("+5"), 5);
    EXPECT_EQ(parse_int("9223372036854775807"), std::numeric_limits<std::int64_t>::max());
    EXPECT_EQ(parse_int("-9223372036854775808"), std::numeric_limits<std::int64_t>::min());
}

TEST(NumberText, parse_int_rejects_non_integers_and_overflow) {
    for (const char* bad : {"", "1.0", "1e3", "abc", " 1", "1 ", "0x10", "+", "-", "12a", "nan", "9223372036854775808",
                            "-9223372036854775809"}) {
        EXPECT_FALSE(parse_int(bad).has_value()) << "accepted '" << bad << "'";
    }
}

TEST(NumberText, parse_int_rejects_a_second_sign_after_plus) {
    // "+-5" is not an integer; stripping the '+' must not let from_chars read "-5".
    EXPECT_FALSE(parse_int("+-5").has_value());
    EXPECT_FALSE(parse_int("++5").has_value());
}

TEST(NumberText, format_double_prints_shortest_text) {
    EXPECT_EQ(format_double(0.1), "0.1");
    EXPECT_EQ(format_double(0.41227), "0.41227");
    EXPECT_EQ(format_double(3.0), "3");
    EXPECT_EQ(format_double(-0.0), "-0");
    EXPECT_EQ(format_double(1e16), "1e+16");
    EXPECT_EQ(format_double(std::numeric_limits<double>::quiet_NaN()), "nan");
    EXPECT_EQ(format_double(std::numeric_limits<double>::infinity()), "inf");
    EXPECT_EQ(format_double(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(NumberText, append_double_appends_without_clearing) {
    std::string out = "x=";
    append_double(out, 1.5);
    append_double(out, -2.0);
    EXPECT_EQ(out, "x=1.5-2");
}

void expect_round_trips(double x) {
    const std::string text = format_double(x);
    auto back = parse_double(text);
    ASSERT_TRUE(back.has_value()) << "format_double gave unparsable '" << text << "' for bits " << std::hex
                                  << bits_of(x);
    if (std::isnan(x)) {
        EXPECT_TRUE(std::isnan(*back)) << text;
    } else {
        EXPECT_EQ(bits_of(*back), bits_of(x)) << "'" << text << "' for bits " << std::hex << bits_of(x);
    }
}

TEST(NumberText, format_then_parse_round_trips_edge_values_bitwise) {
    const double edges[] = {0.0,
                            -0.0,
                            1.0,
                            -1.0,
                            std::numeric_limits<double>::min(),
                            -std::numeric_limits<double>::min(),
                            std::numeric_limits<double>::denorm_min(),
                            -std::numeric_limits<double>::denorm_min(),
                            std::nextafter(std::numeric_limits<double>::min(), 0.0),  // largest subnormal
                            std::numeric_limits<double>::max(),
                            std::numeric_limits<double>::lowest(),
                            std::numeric_limits<double>::epsilon(),
                            std::numeric_limits<double>::infinity(),
                            -std::numeric_limits<double>::infinity(),
                            std::numeric_limits<double>::quiet_NaN(),
                            0.1,
                            1e-06,
                            1e16,
                            9007199254740993.0};
    for (double x : edges) expect_round_trips(x);
}

TEST(NumberText, format_then_parse_round_trips_random_doubles_bitwise) {
    std::mt19937_64 rng(20240601);
    for (int i = 0; i < 200000; ++i) expect_round_trips(std::bit_cast<double>(rng()));
}

TEST(NumberText, format_then_parse_round_trips_random_subnormals_bitwise) {
    std::mt19937_64 rng(7);
    for (int i = 0; i < 50000; ++i) {
        // Zero exponent field, random mantissa and sign: every one is subnormal (or zero).
        const std::uint64_t bits = rng() & 0x800FFFFFFFFFFFFFull;
        expect_round_trips(std::bit_cast<double>(bits));
    }
}

TEST(NumberText, format_then_parse_round_trips_random_decimals_of_six_places) {
    // What msprobe writes with ndigits=6: values rounded to six decimal places.
    std::mt19937_64 rng(42);
    std::uniform_int_distribution<std::int64_t> micro(-5000000000, 5000000000);
    for (int i = 0; i < 50000; ++i) expect_round_trips(static_cast<double>(micro(rng)) / 1e6);
}

TEST(NumberText, python_float_repr_matches_python_for_pandas_cells) {
    EXPECT_EQ(python_float_repr(0.0), "0.0");
    EXPECT_EQ(python_float_repr(-0.0), "-0.0");
    EXPECT_EQ(python_float_repr(1e-06), "1e-06");
    EXPECT_EQ(python_float_repr(-9e-06), "-9e-06");
    EXPECT_EQ(python_float_repr(1.1e-05), "1.1e-05");
    EXPECT_EQ(python_float_repr(0.0001), "0.0001");
    EXPECT_EQ(python_float_repr(123456.0), "123456.0");
    EXPECT_EQ(python_float_repr(1e16), "1e+16");
    EXPECT_EQ(python_float_repr(1234567890123456.0), "1234567890123456.0");
    EXPECT_EQ(python_float_repr(0.41227), "0.41227");
    EXPECT_EQ(python_float_repr(17.0), "17.0");
    EXPECT_EQ(python_float_repr(-2.015625), "-2.015625");
}

TEST(NumberText, python_float_repr_switches_notation_at_python_thresholds) {
    // Python: scientific when the decimal exponent is < -4 or >= 16.
    EXPECT_EQ(python_float_repr(0.00011), "0.00011");
    EXPECT_EQ(python_float_repr(9.9e-05), "9.9e-05");
    EXPECT_EQ(python_float_repr(1e15), "1000000000000000.0");
    EXPECT_EQ(python_float_repr(1.5e16), "1.5e+16");
    EXPECT_EQ(python_float_repr(1e100), "1e+100");
    EXPECT_EQ(python_float_repr(1e-100), "1e-100");
    EXPECT_EQ(python_float_repr(5e-324), "5e-324");
    EXPECT_EQ(python_float_repr(1.7976931348623157e308), "1.7976931348623157e+308");
    EXPECT_EQ(python_float_repr(-1e22), "-1e+22");
}

TEST(NumberText, python_float_repr_spells_non_finite_like_pandas) {
    EXPECT_EQ(python_float_repr(std::numeric_limits<double>::quiet_NaN()), "nan");
    EXPECT_EQ(python_float_repr(std::numeric_limits<double>::infinity()), "inf");
    EXPECT_EQ(python_float_repr(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(NumberText, python_float_repr_parses_back_to_the_same_double) {
    std::mt19937_64 rng(99);
    for (int i = 0; i < 50000; ++i) {
        const double x = std::bit_cast<double>(rng());
        if (!std::isfinite(x)) continue;
        auto back = parse_double(python_float_repr(x));
        ASSERT_TRUE(back.has_value()) << python_float_repr(x);
        EXPECT_EQ(bits_of(*back), bits_of(x)) << python_float_repr(x);
    }
}

}  // namespace
// The anomalies table's VALUE and REFERENCE columns are 14 wide: 0.014499999999999999 overflowed into the next.
TEST(NumberText, a_number_within_a_width_keeps_its_exact_text_when_it_fits_and_its_leading_digits_when_not) {
    EXPECT_EQ(format_double_within(0.25, 14), "0.25");
    EXPECT_EQ(format_double_within(0.014499999999999999, 14), "0.0145");
    EXPECT_EQ(format_double_within(-0.014499999999999999, 14), "-0.0145");
    EXPECT_EQ(format_double_within(123456789012345678.0, 14), "1.23456789e+17");
    EXPECT_EQ(format_double_within(1.0 / 3.0, 14), "0.333333333333");
    EXPECT_EQ(format_double_within(std::numeric_limits<double>::quiet_NaN(), 14), "nan");
    for (double v : {0.014499999999999999, 1.0 / 3.0, -2.0 / 7.0 * 1e-300, 6.02214076e23 + 1e9})
        EXPECT_LE(format_double_within(v, 14).size(), 14u) << v;
}

}  // namespace msmon
