// How far one optimizer step moved each weight, and a step that moved most weights far more than their recent
// steps did: the optimizer's step itself changed (the learning rate, its schedule, the loss scale, the
// optimizer's state), not one layer.
//
// The ratio is msprobe's norms' view of an update: |‖param_updated‖ − ‖param_origin‖| / ‖param_origin‖ at one
// step, a lower bound of ‖Δw‖/‖w‖ (which needs the tensors). It is noisy per parameter — an update orthogonal to
// the weight barely moves its norm — so one parameter's jump says nothing; most parameters jumping together at
// one step on most ranks does.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

namespace msmon {

// The update ratio of one weight at one step; none when the weight has no size (a NaN norm gives NaN).
std::optional<double> update_ratio(double origin_norm, double updated_norm);

inline constexpr double kUpdateJumpRatio = 10;  // a parameter's ratio at least this many times its recent median
inline constexpr int kUpdateHistory = 8;        // recent ratios kept per parameter and rank
inline constexpr int kUpdateMinHistory = 4;     // kept before a ratio is judged

// One parameter's recent update ratios on one rank.
class UpdateHistory {
public:
    struct Verdict {
        bool judged = false;  // enough history, and a positive ratio
        bool jumped = false;  // at least kUpdateJumpRatio times the recent median
        double median = 0;    // of the recent ratios
    };
    // Judges `ratio` against the recent ones, then keeps it (a zero ratio is not kept: no log).
    Verdict add(double ratio);

private:
    std::array<float, kUpdateHistory> logs_{};
    int kept_ = 0, next_ = 0;
};

// One rank's parameters at one step.
struct RankUpdateTally {
    int rank = 0;
    int judged = 0, jumped = 0;
    std::vector<double> factors;  // ratio / median of each jumped parameter
    // The first jumped parameter in forward order: the anomaly's name, value and reference.
    std::int64_t first_order = 0;
    std::uint32_t first_name = 0;
    double first_ratio = 0, first_median = 0;
    bool has_first = false;
};

// Whether a step's tallies are an optimizer jump: most judged parameters jumped on a rank, on at least 3 of 4
// ranks that judged any. `open` is the check's hysteresis: set by a jump, cleared once fewer than a quarter of
// the ranks still jump, so that a lasting change is found once, at its first step. Returns the jumped ranks.
std::vector<const RankUpdateTally*> optimizer_jump(const std::vector<RankUpdateTally>& tallies, bool& open);

}  // namespace msmon
