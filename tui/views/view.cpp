#include "tui/views/view.hpp"

#include "core/text/name_pattern.hpp"

namespace msmon::tui {

std::optional<std::string> View::check_filter(const std::string& text) const {
    std::string why;
    if (NamePattern::compile(text, why)) return std::nullopt;
    return "not a valid pattern: " + text + " (" + why + ")";
}

}  // namespace msmon::tui
