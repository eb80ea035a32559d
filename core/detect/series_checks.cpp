// Non-finite and jump checks on one series' own history (see the header for the rules).
#include "core/detect/series_checks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/text/number_text.hpp"

namespace msmon {

namespace {

double median_in_place(std::vector<double>& v) {
    const std::size_t mid = v.size() / 2;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
    const double upper = v[mid];
    if (v.size() % 2) return upper;
    return (*std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

}  // namespace

CheckSlots CheckSlots::from_ops(const std::vector<std::string>& ops) {
    CheckSlots s;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        const int k = static_cast<int>(i);
        if (ops[i] == "norm") s.norm = k;
        else if (ops[i] == "nans") s.nans = k;
        else if (ops[i] == "min") s.min = k;
        else if (ops[i] == "max") s.max = k;
        else if (ops[i] == "mean") s.mean = k;
    }
    return s;
}

std::optional<NonFiniteFinding> SeriesCheckState::check_non_finite(const CheckSlots& slots, const double* values,
                                                                   int count) {
    auto has = [count](int slot) { return slot >= 0 && slot < count; };
    const bool has_nans = has(slots.nans);
    const double nans = has_nans ? values[slots.nans] : 0.0;
    const bool counted = has_nans && std::isfinite(nans) && nans > 0;
    int bad_slot = -1, any_value = -1;
    for (int slot : {slots.norm, slots.max, slots.min, slots.mean}) {
        if (!has(slot)) continue;
        if (any_value < 0) any_value = slot;
        if (bad_slot < 0 && !std::isfinite(values[slot])) bad_slot = slot;
    }
    // A placeholder row: msprobe could not measure the tensor and wrote NaN everywhere, its count included.
    if (has_nans && std::isnan(nans)) return std::nullopt;
    if (!counted && bad_slot < 0) {
        finite_ = Finite::finite;
        if (any_value >= 0) last_finite_ = values[slots.norm >= 0 && has(slots.norm) ? slots.norm : any_value];
        return std::nullopt;
    }
    const Finite before = finite_;
    finite_ = Finite::non_finite;
    if (before == Finite::non_finite || (!counted && before != Finite::finite)) return std::nullopt;
    NonFiniteFinding f;
    if (counted) {
        f.slot = slots.nans;
        f.value = nans;
        f.previous = 0;
    } else {
        f.slot = bad_slot;
        f.value = values[bad_slot];
        f.previous = last_finite_;
    }
    return f;
}

std::optional<JumpFinding> SeriesCheckState::check_jump(const SeriesCheckOptions& o, double value) {
    if (!std::isfinite(value) || value == 0) return std::nullopt;
    const double y = std::log(std::abs(value));
    std::optional<JumpFinding> out;
    if (static_cast<int>(history_.size()) >= o.jump_min_history) {
        std::vector<double> h(history_.begin(), history_.end());
        const double med = median_in_place(h);
        for (auto& v : h) v = std::abs(v - med);
        const double mad = median_in_place(h) * 1.4826;
        const double dev = std::abs(y - med);
        const double threshold = std::max(std::log(o.jump_min_ratio), o.jump_mad_k * std::max(mad, o.jump_mad_floor));
        if (in_jump_) {
            if (dev < threshold / 2) in_jump_ = false;  // back within bounds: the next excursion is a new finding
        } else if (dev >= threshold) {
            in_jump_ = true;
            out = JumpFinding{value, std::exp(med), std::exp(y - med)};
        }
    }
    history_.push_back(static_cast<float>(y));
    if (static_cast<int>(history_.size()) > o.jump_window)
        history_.erase(history_.begin(), history_.end() - o.jump_window);
    return out;
}

std::string SeriesCheckState::encode() const {
    std::string out = "nf=" + std::to_string(static_cast<int>(finite_)) + ";lf=" + format_double(last_finite_) +
                      ";jx=" + (in_jump_ ? "1" : "0") + ";jh=";
    char buf[32];
    for (std::size_t i = 0; i < history_.size(); ++i) {
        std::snprintf(buf, sizeof buf, i ? ",%.9g" : "%.9g", static_cast<double>(history_[i]));  // floats: exact
        out += buf;
    }
    return out;
}

SeriesCheckState SeriesCheckState::decode(std::string_view text) {
    SeriesCheckState s;
    while (!text.empty()) {
        const auto semi = text.find(';');
        const std::string_view item = text.substr(0, semi);
        text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
        const auto eq = item.find('=');
        if (eq == std::string_view::npos) continue;
        const std::string_view key = item.substr(0, eq), value = item.substr(eq + 1);
        if (key == "nf") {
            const auto v = parse_int(value).value_or(0);
            s.finite_ = v == 1 ? Finite::finite : v == 2 ? Finite::non_finite : Finite::unknown;
        } else if (key == "lf") {
            s.last_finite_ = parse_double(value).value_or(std::numeric_limits<double>::quiet_NaN());
        } else if (key == "jx") {
            s.in_jump_ = value == "1";
        } else if (key == "jh") {
            std::string_view list = value;
            while (!list.empty()) {
                const auto comma = list.find(',');
                if (auto v = parse_double(list.substr(0, comma))) s.history_.push_back(static_cast<float>(*v));
                list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
            }
        }
    }
    return s;
}

}  // namespace msmon
