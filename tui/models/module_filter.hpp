// The Layers view's `/` filter: which tensors to list, by name and by label. Terms separated by spaces, every one
// of which a tensor must meet:
//   layer=N, layer=N-M   its layer number (layer_of): layers.N
//   type=T               a part of its name between dots contains T: type=norm finds input_layernorm and
//                        final_norm, type=attention self_attention, type=fc1 fc1
//   io=input, io=output  an activation's side: a part of its name is exactly "input" or "output"
//   anything else        a pattern (RE2, as `--name`) searched anywhere in the name
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/text/name_pattern.hpp"

namespace msmon::tui {

class ModuleFilter {
public:
    // Empty with `error` set (which term, and why) when a term is not valid.
    static std::optional<ModuleFilter> parse(std::string_view text, std::string& error);
    bool matches(std::string_view name) const;
    const std::string& text() const { return text_; }

private:
    struct LayerRange {
        int lo, hi;
    };
    std::vector<LayerRange> layers_;  // every one must hold (a tensor has one layer)
    std::vector<std::string> types_;
    std::vector<std::string> sides_;
    std::vector<NamePattern> patterns_;
    std::string text_;
};

}  // namespace msmon::tui
