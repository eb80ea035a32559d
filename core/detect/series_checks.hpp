// msmon's default checks on one series' own history, needing no msprobe alert rules:
// - non-finite: the series' `nans` count leaves 0, or its values become NaN/Inf after being finite. msprobe writes
//   all-NaN placeholder rows (NaN even in `nans`) for tensors it cannot measure; those never count.
// - jump: log|x| far from the median of the series' recent history, both by an absolute ratio and by a robust
//   z-score (MAD), with hysteresis: one finding per excursion, not one per step while it lasts.
// - drift: the median of the recent history grown far above the series' early level (the median of its first
//   full window), slowly enough that no single step jumps; one finding until it comes back below half the ratio.
//   Upwards only: gradients shrinking as training converges are no fault. A level a jump reached is not a drift
//   (the jump was found): a series whose median grew to within ×3 of where its last upward jump took it, and
//   stayed there, raises no drift (a one-step spike that came back leaves no such level).
// - dead: the series' `zeros` fraction reaches 1 (every element zero) from below one half: the module stopped
//   passing anything on. One finding until it comes back below one half.
// The state is small and text-encodable, persisted with the rows it was computed from.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace msmon {

struct SeriesCheckOptions {
    double jump_min_ratio = 10;    // |x| at least this many times (or 1/this) its recent median
    double jump_mad_k = 8;         // and this many robust standard deviations of log|x| away
    double jump_mad_floor = 0.05;  // log units: a series that never moved still needs a real jump
    int jump_window = 16;          // recent values kept (at most SeriesCheckState::kMaxWindow)
    int jump_min_history = 6;      // values needed before judging
    double drift_min_ratio = 20;   // the recent median this many times the series' early one (upwards only)
};

// Where the ops the checks read sit in a row (-1: the layout has no such op).
struct CheckSlots {
    int norm = -1, nans = -1, min = -1, max = -1, mean = -1, zeros = -1;
    static CheckSlots from_ops(const std::vector<std::string>& numeric_ops);
    static CheckSlots scalar() { return {0, -1, -1, -1, -1, -1}; }  // MindFormers: one value
};

struct NonFiniteFinding {
    int slot = -1;  // the op that shows it: the `nans` slot when the count left 0, else the first non-finite value
    double value = 0;
    double previous = 0;  // the op's value in the last finite row (NaN if none was seen)
};

struct JumpFinding {
    double value = 0;
    double median = 0;  // of the recent |x|
    double ratio = 0;   // value / median, > 0
};

class SeriesCheckState {
public:
    static constexpr int kMaxWindow = 64;
    std::optional<NonFiniteFinding> check_non_finite(const CheckSlots& slots, const double* values, int count);
    std::optional<JumpFinding> check_jump(const SeriesCheckOptions& o, double value);
    // After check_jump for the same row: value is the recent median, median the early level.
    std::optional<JumpFinding> check_drift(const SeriesCheckOptions& o);
    // The zeros fraction before it reached 1, when it just did.
    std::optional<double> check_dead(const CheckSlots& slots, const double* values, int count);

    std::string encode() const;
    static SeriesCheckState decode(std::string_view text);

private:
    enum class Finite : std::uint8_t { unknown, finite, non_finite };
    Finite finite_ = Finite::unknown;
    double last_finite_ = std::numeric_limits<double>::quiet_NaN();
    std::vector<float> history_;  // log|x|, oldest first (what is saved)
    std::vector<float> sorted_;   // the same values in order: the median without sorting per row
    bool in_jump_ = false;
    float early_ = std::numeric_limits<float>::quiet_NaN();  // log of the first full window's median
    bool in_drift_ = false;
    float jumped_to_ = std::numeric_limits<float>::quiet_NaN();  // log|x| of the last upward jump
    float last_zeros_ = std::numeric_limits<float>::quiet_NaN();
    bool dead_ = false;
};

}  // namespace msmon
