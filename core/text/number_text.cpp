// Exact number text: std::from_chars / std::to_chars, which are exact and locale-independent.
#include "core/text/number_text.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>

namespace msmon {

namespace {

bool equals_ignore_case(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        if (c != b[i]) return false;
    }
    return true;
}

}  // namespace

std::optional<double> parse_double(std::string_view text) {
    if (text.empty()) return std::nullopt;
    bool negative = false;
    std::string_view body = text;
    if (body.front() == '+' || body.front() == '-') {
        negative = body.front() == '-';
        body.remove_prefix(1);
        if (body.empty()) return std::nullopt;
    }
    // from_chars accepts "nan"/"inf" too, but spell them out so the accepted set is explicit.
    if (equals_ignore_case(body, "nan")) return std::numeric_limits<double>::quiet_NaN();
    if (equals_ignore_case(body, "inf") || equals_ignore_case(body, "infinity"))
        return negative ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    if (!((body.front() >= '0' && body.front() <= '9') || body.front() == '.')) return std::nullopt;
    double value = 0;
    auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), value);
    if (ec != std::errc() || end != body.data() + body.size()) return std::nullopt;
    return negative ? -value : value;
}

std::optional<std::int64_t> parse_int(std::string_view text) {
    if (text.empty()) return std::nullopt;
    if (text.front() == '+') {
        text.remove_prefix(1);
        if (text.empty() || text.front() == '-') return std::nullopt;
    }
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return value;
}

std::optional<int> parse_rank(std::string_view text) {
    const auto n = parse_int(text);
    if (!n || *n < 0 || *n > std::numeric_limits<std::int32_t>::max()) return std::nullopt;
    return static_cast<int>(*n);
}

std::string rank_refusal(std::string_view option, std::string_view text) {
    return std::string(option) + " takes a rank, a whole number from 0 to 2147483647: " + std::string(text) +
           " is not one";
}

void append_double(std::string& out, double value) {
    if (std::isnan(value)) {
        out += "nan";
        return;
    }
    if (std::isinf(value)) {
        out += value < 0 ? "-inf" : "inf";
        return;
    }
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, end);
}

std::string format_double(double value) {
    std::string out;
    append_double(out, value);
    return out;
}

std::string format_double_within(double value, int width) {
    std::string exact = format_double(value);
    if (static_cast<int>(exact.size()) <= width) return exact;
    char buf[64];
    for (int digits = 16; digits >= 1; --digits) {
        const int n = std::snprintf(buf, sizeof buf, "%.*g", digits, value);
        if (n > 0 && n <= width) return std::string(buf, static_cast<std::size_t>(n));
    }
    return exact;  // no width fits even one digit: the exact text, wider than asked
}

namespace {

std::string with_digits(double value, int digits) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
    char buf[64];
    const int n = std::snprintf(buf, sizeof buf, "%.*g", digits, value);
    return std::string(buf, static_cast<std::size_t>(std::max(n, 0)));
}

}  // namespace

std::string format_short(double value) {
    return with_digits(value, 4);
}

std::pair<std::string, std::string> format_apart(double a, double b) {
    for (int digits = 4; digits < 17; ++digits) {
        std::string x = with_digits(a, digits), y = with_digits(b, digits);
        if (x != y || a == b || (std::isnan(a) && std::isnan(b))) return {std::move(x), std::move(y)};
    }
    return {format_double(a), format_double(b)};
}

std::string python_float_repr(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
    if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
    // Shortest round-trip digits in scientific form tell us the decimal exponent.
    char sci[64];
    auto [end, ec] = std::to_chars(sci, sci + sizeof sci, value, std::chars_format::scientific);
    std::string_view s(sci, static_cast<std::size_t>(end - sci));
    const auto epos = s.find('e');
    const int exponent = std::stoi(std::string(s.substr(epos + 1)));
    if (exponent < -4 || exponent >= 16) {
        // Python: mantissa as shortest digits, exponent with sign and at least two digits.
        std::string mantissa(s.substr(0, epos));
        char ebuf[16];
        std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
        return mantissa + ebuf;
    }
    char fixed[400];
    auto [fend, fec] = std::to_chars(fixed, fixed + sizeof fixed, value, std::chars_format::fixed);
    std::string out(fixed, fend);
    if (out.find('.') == std::string::npos) out += ".0";
    return out;
}

}  // namespace msmon
