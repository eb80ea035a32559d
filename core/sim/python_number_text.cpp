// Number text exactly as Python and numpy print it: float32 scalars and arrays, %-formats, timedeltas.
#include "core/sim/python_number_text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace msmon {

std::string f32_text(float v, std::chars_format fmt, int precision) {
    char buf[128];
    const auto r = precision < 0 ? std::to_chars(buf, buf + sizeof buf, v, fmt)
                                 : std::to_chars(buf, buf + sizeof buf, v, fmt, precision);
    return std::string(buf, r.ptr);
}

std::string non_finite_text(double v) {
    return std::isnan(v) ? "nan" : (v < 0 ? "-inf" : "inf");
}

std::string np_scalar(float v) {
    if (!std::isfinite(v)) return non_finite_text(v);
    const double a = std::fabs(static_cast<double>(v));
    if (a == 0 || (a >= 1e-4 && a < 1e16)) {
        std::string s = f32_text(v, std::chars_format::fixed);
        if (s.find('.') == std::string::npos) s += ".0";
        return s;
    }
    return f32_text(v, std::chars_format::scientific);
}

std::string np_element(float v) {
    if (!std::isfinite(v)) return non_finite_text(v);
    const double a = std::fabs(static_cast<double>(v));
    const bool scientific = a != 0 && (a >= 1e8 || a < 1e-4);
    std::string s = f32_text(v, scientific ? std::chars_format::scientific : std::chars_format::fixed);
    const auto e = scientific ? s.find('e') : s.size();
    const auto dot = s.find('.');
    if (dot != std::string::npos && e - dot - 1 > 8) {  // more than 8 decimals: round to 8, trim zeros
        s = f32_text(v, scientific ? std::chars_format::scientific : std::chars_format::fixed, 8);
        const auto e8 = scientific ? s.find('e') : s.size();
        std::size_t keep = e8;
        while (keep > 0 && s[keep - 1] == '0') --keep;
        s.erase(keep, e8 - keep);
        return s;
    }
    if (dot == std::string::npos) s.insert(e, ".");
    return s;
}

std::string np_array1(float v) {
    return "[" + np_element(v) + "]";
}

std::string np_array_scientific(const std::vector<float>& values) {
    int digits = 0;
    for (float v : values) {
        if (!std::isfinite(v)) continue;
        const std::string s = f32_text(v, std::chars_format::scientific);
        const auto dot = s.find('.'), e = s.find('e');
        if (dot != std::string::npos) digits = std::max(digits, static_cast<int>(e - dot - 1));
    }
    digits = std::min(digits, 8);
    std::vector<std::string> words;
    std::size_t width = 0;
    for (float v : values) {
        words.push_back(std::isfinite(v) ? f32_text(v, std::chars_format::scientific, digits) : non_finite_text(v));
        width = std::max(width, words.back().size());
    }
    std::string out = "[", line = "[";
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::string word = std::string(width - words[i].size(), ' ') + words[i];
        const std::size_t tail = i + 1 == words.size() ? 1 : 0;  // the closing bracket
        if (i > 0 && line.size() + 1 + word.size() + tail > 75) {
            out += "\n ";
            line = " ";
        } else if (i > 0) {
            out += ' ';
            line += ' ';
        }
        out += word;
        line += word;
    }
    return out + "]";
}

std::string py_fixed(double v, int width, int precision) {
    char buf[64];
    if (std::isfinite(v)) std::snprintf(buf, sizeof buf, "%*.*f", width, precision, v);
    else std::snprintf(buf, sizeof buf, "%*s", width, non_finite_text(v).c_str());
    return buf;
}

std::string timedelta_text(std::int64_t seconds) {
    const std::int64_t days = seconds / 86400, rest = seconds % 86400;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(rest / 3600),
                  static_cast<long long>(rest / 60 % 60), static_cast<long long>(rest % 60));
    if (days == 0) return buf;
    return std::to_string(days) + (days == 1 ? " day, " : " days, ") + buf;
}

std::string printf_text(const char* fmt, double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

}  // namespace msmon
