// Kinds msprobe's users compute by hand, computed when read from the kinds stored, so every view and `msmon query`
// offers them next to the stored ones. Their names start with "derived.":
//   derived.update_ratio  per parameter and step, op "ratio": | ‖param_updated‖ − ‖param_origin‖ | / ‖param_origin‖,
//                         where both are collected (msprobe's param_origin / param_updated, norm): how far one
//                         optimizer step moved a weight relative to its size (from the norms: a lower bound of
//                         ‖Δw‖/‖w‖, which needs the tensors themselves).
//   derived.layer_grad    per layer and step, op "norm": the gradient norm of the layer's parameters together,
//                         √(Σ ‖g‖²) over the names in one layers.N (grad_reduced, else grad_unreduced); the name is
//                         the layer's ("module.decoder.layers.3").
// A reader without the kinds a derived kind needs does not list it. Stored kinds pass through untouched.
#pragma once

#include <memory>
#include <string_view>

#include "store/reader.hpp"

namespace msmon {

inline constexpr std::string_view kDerivedPrefix = "derived.";
inline bool is_derived_kind(std::string_view kind) {
    return kind.starts_with(kDerivedPrefix);
}

std::unique_ptr<Reader> with_derived_kinds(std::unique_ptr<Reader> base);

}  // namespace msmon
