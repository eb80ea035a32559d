// Non-finite and jump checks on one series' own history (see the header for the rules).
#include "core/detect/series_checks.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "core/text/key_values.hpp"
#include "core/text/number_text.hpp"

namespace msmon {

namespace {

// Median of the first n values (reordered), as a double; n > 0.
double median_in_place(float* v, int n) {
    const int mid = n / 2;
    std::nth_element(v, v + mid, v + n);
    const double upper = v[mid];
    if (n % 2) return upper;
    return (static_cast<double>(*std::max_element(v, v + mid)) + upper) / 2;
}

// A float as its bits in hex: exact, and cheap enough to write for every series every batch.
std::string hex_float(float f) {
    static constexpr char kHex[] = "0123456789abcdef";
    const auto bits = std::bit_cast<std::uint32_t>(f);
    std::string out(8, '0');
    for (int i = 0; i < 8; ++i) out[static_cast<std::size_t>(i)] = kHex[(bits >> (28 - 4 * i)) & 0xf];
    return out;
}

float float_of_hex(std::string_view hex) {
    std::uint32_t bits = 0;
    for (char c : hex) bits = bits << 4 | static_cast<std::uint32_t>(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
    return std::bit_cast<float>(bits);
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
        else if (ops[i] == "zeros") s.zeros = k;
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
    const int window = std::clamp(o.jump_window, 1, kMaxWindow);
    std::optional<JumpFinding> out;
    const int n = static_cast<int>(history_.size());
    if (sorted_.size() != history_.size()) {  // decoded, or first use
        sorted_ = history_;
        std::sort(sorted_.begin(), sorted_.end());
    }
    if (n >= o.jump_min_history) {
        // Runs on every row of every series: the median from the kept sorted copy, the MAD only when the value is
        // not plainly normal (a jump needs at least jump_min_ratio, and leaving one half of that).
        const auto mid = static_cast<std::size_t>(n / 2);
        const double med = n % 2 ? sorted_[mid] : (static_cast<double>(sorted_[mid - 1]) + sorted_[mid]) / 2;
        const double dev = std::abs(y - med);
        const double floor = std::log(o.jump_min_ratio);
        double threshold = floor;
        if (dev >= floor / 2) {
            std::array<float, kMaxWindow> d;
            for (int i = 0; i < n; ++i)
                d[static_cast<std::size_t>(i)] =
                    static_cast<float>(std::abs(history_[static_cast<std::size_t>(i)] - med));
            const double mad = median_in_place(d.data(), n) * 1.4826;
            threshold = std::max(floor, o.jump_mad_k * std::max(mad, o.jump_mad_floor));
        }
        if (in_jump_) {
            if (dev < threshold / 2) {  // back within bounds: the next excursion is a new finding
                in_jump_ = false;
                // Back below the jump's level (a one-step spike), rather than the median catching up with a level
                // that stays: the jump no longer explains where the series is.
                if (!std::isnan(jumped_to_) && y < jumped_to_ - std::log(3.0))
                    jumped_to_ = std::numeric_limits<float>::quiet_NaN();
            }
        } else if (dev >= threshold) {
            in_jump_ = true;
            out = JumpFinding{value, std::exp(med), std::exp(y - med)};
            if (y > med) jumped_to_ = static_cast<float>(y);
        }
    }
    while (static_cast<int>(history_.size()) >= window) {  // the oldest leaves both copies
        sorted_.erase(std::lower_bound(sorted_.begin(), sorted_.end(), history_.front()));
        history_.erase(history_.begin());
    }
    const auto yf = static_cast<float>(y);
    history_.push_back(yf);
    sorted_.insert(std::upper_bound(sorted_.begin(), sorted_.end(), yf), yf);
    return out;
}

std::optional<JumpFinding> SeriesCheckState::check_drift(const SeriesCheckOptions& o) {
    const std::size_t n = sorted_.size();
    if (n == 0 || static_cast<int>(n) < std::clamp(o.jump_window, 1, kMaxWindow)) return std::nullopt;
    const double med = n % 2 ? sorted_[n / 2] : (static_cast<double>(sorted_[n / 2 - 1]) + sorted_[n / 2]) / 2;
    if (std::isnan(early_)) {
        early_ = static_cast<float>(med);
        return std::nullopt;
    }
    const double grown = med - early_, limit = std::log(o.drift_min_ratio);
    if (in_drift_) {
        if (grown < limit / 2) in_drift_ = false;
        return std::nullopt;
    }
    if (grown < limit) return std::nullopt;
    in_drift_ = true;
    if (!std::isnan(jumped_to_) && med >= jumped_to_ - std::log(3.0)) return std::nullopt;  // the jump's level
    return JumpFinding{std::exp(med), std::exp(static_cast<double>(early_)), std::exp(grown)};
}

std::optional<double> SeriesCheckState::check_dead(const CheckSlots& slots, const double* values, int count) {
    if (slots.zeros < 0 || slots.zeros >= count || !std::isfinite(values[slots.zeros])) return std::nullopt;
    const double zeros = values[slots.zeros];
    const float before = last_zeros_;
    last_zeros_ = static_cast<float>(zeros);
    if (zeros < 0.5) dead_ = false;
    if (dead_ || zeros < 1.0 || !(before < 0.5)) return std::nullopt;
    dead_ = true;
    return before;
}

std::string SeriesCheckState::encode() const {
    std::string out = "nf=" + std::to_string(static_cast<int>(finite_)) + ";lf=" + format_double(last_finite_) +
                      ";jx=" + (in_jump_ ? "1" : "0") + ";dx=" + (in_drift_ ? "1" : "0") + ";de=" + hex_float(early_) +
                      ";ju=" + hex_float(jumped_to_) + ";zl=" + hex_float(last_zeros_) + ";zd=" + (dead_ ? "1" : "0") +
                      ";jh=";
    // The history as the floats' bits in hex: exact, and cheap enough to write for every series every batch.
    for (float f : history_) out += hex_float(f);
    return out;
}

SeriesCheckState SeriesCheckState::decode(std::string_view text) {
    SeriesCheckState s;
    for_each_key_value(text, [&](std::string_view key, std::string_view value) {
        if (key == "nf") {
            const auto v = parse_int(value).value_or(0);
            s.finite_ = v == 1 ? Finite::finite : v == 2 ? Finite::non_finite : Finite::unknown;
        } else if (key == "lf") {
            s.last_finite_ = parse_double(value).value_or(std::numeric_limits<double>::quiet_NaN());
        } else if (key == "jx") {
            s.in_jump_ = value == "1";
        } else if (key == "dx") {
            s.in_drift_ = value == "1";
        } else if (key == "de") {
            if (value.size() == 8) s.early_ = float_of_hex(value);
        } else if (key == "ju") {
            if (value.size() == 8) s.jumped_to_ = float_of_hex(value);
        } else if (key == "zl") {
            if (value.size() == 8) s.last_zeros_ = float_of_hex(value);
        } else if (key == "zd") {
            s.dead_ = value == "1";
        } else if (key == "jh") {
            for (std::size_t at = 0; at + 8 <= value.size(); at += 8)
                s.history_.push_back(float_of_hex(value.substr(at, 8)));
        }
    });
    return s;
}

}  // namespace msmon
