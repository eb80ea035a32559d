// A rank's weights between two of its steps. msprobe's param_updated at step t is the weights right after that
// step's optimizer update; its param_origin at step t+1 is the weights step t+1 starts from. Nothing changes a
// weight in between, so the two rows are statistics of the same tensor and print the same values. On one rank
// alone, with no replica beside it, a difference means the copy was altered between the steps (silent data
// corruption: memory, a bad write, a broken collective). Only steps collected back to back are compared.
//
// Each of the two series keeps its recent rows that found no partner yet (a catch-up reads the two kinds' files
// in any order); a row is compared once, with the one row it pairs with, and then forgotten.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace msmon {

struct HeldParamRow {
    std::int64_t step = 0;
    std::int32_t layout_id = -1;
    std::vector<double> values;  // the row's numeric values, in its layout's order
};

// param_origin and param_updated pair with each other; anything else has no partner.
bool has_continuity_partner(std::string_view kind);
std::string_view continuity_partner(std::string_view kind);
// The partner's step that a row of `kind` at `step` pairs with.
std::int64_t continuity_partner_step(std::string_view kind, std::int64_t step);

// Where the two rows disagree: the op that shows it best (norm first, else the first op in the updated row's
// order that differs), its value after the update (`updated`) and at the next step (`origin`).
struct ContinuityBreak {
    std::string op;
    double updated = 0, origin = 0;
    int ops_differing = 0, ops_compared = 0;
};
// Compares the ops both layouts have, by name (NaN equals NaN: the same placeholder printed twice).
std::optional<ContinuityBreak> compare_param_rows(const std::vector<std::string>& updated_ops,
                                                  const std::vector<double>& updated,
                                                  const std::vector<std::string>& origin_ops,
                                                  const std::vector<double>& origin);

// Keeps at most kMaxHeldParamRows rows, the newest (a safety net: files are read in step order, so only the last
// few steps wait for their partner).
inline constexpr std::size_t kMaxHeldParamRows = 64;
// With no partner series at all (the other kind not collected), only the newest few.
inline constexpr std::size_t kMaxHeldParamRowsAlone = 4;
void hold_param_row(std::vector<HeldParamRow>& held, HeldParamRow row, std::size_t max = kMaxHeldParamRows);

// "12@3:1.5,2,nan/13@3:..." (layout id after the step); decode skips what it cannot read.
std::string encode_held_params(const std::vector<HeldParamRow>& held);
std::vector<HeldParamRow> decode_held_params(std::string_view text);

}  // namespace msmon
