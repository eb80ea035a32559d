#include "tui/models/module_filter.hpp"

#include <charconv>

#include "tui/models/layer_rows.hpp"

namespace msmon::tui {

namespace {

bool parse_int(std::string_view s, int& out) {
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && end == s.data() + s.size() && out >= 0;
}

// The parts of a name between dots ("module.layers.0.fc1.output" -> module, layers, 0, fc1, output).
template <class F>
bool any_part(std::string_view name, F&& f) {
    std::size_t start = 0;
    while (start <= name.size()) {
        const std::size_t dot = name.find('.', start);
        const std::size_t end = dot == std::string_view::npos ? name.size() : dot;
        if (f(name.substr(start, end - start))) return true;
        if (dot == std::string_view::npos) break;
        start = dot + 1;
    }
    return false;
}

}  // namespace

std::optional<ModuleFilter> ModuleFilter::parse(std::string_view text, std::string& error) {
    ModuleFilter f;
    f.text_ = std::string(text);
    std::size_t i = 0;
    while (i < text.size()) {
        while (i < text.size() && text[i] == ' ') ++i;
        const std::size_t end = std::min(text.find(' ', i), text.size());
        const std::string_view term = text.substr(i, end - i);
        i = end;
        if (term.empty()) continue;
        if (term.starts_with("layer=")) {
            const std::string_view range = term.substr(6);
            const std::size_t dash = range.find('-');
            LayerRange r{};
            const bool ok = dash == std::string_view::npos
                                ? parse_int(range, r.lo) && parse_int(range, r.hi)
                                : parse_int(range.substr(0, dash), r.lo) && parse_int(range.substr(dash + 1), r.hi);
            if (!ok || r.hi < r.lo) {
                error = "layer= takes a layer number or a range such as layer=2-5 (not " + std::string(range) + ")";
                return std::nullopt;
            }
            f.layers_.push_back(r);
        } else if (term.starts_with("type=")) {
            if (term.size() == 5) {
                error = "type= takes a part of a module's name, such as type=fc1 or type=norm";
                return std::nullopt;
            }
            f.types_.emplace_back(term.substr(5));
        } else if (term.starts_with("io=")) {
            const std::string_view side = term.substr(3);
            if (side != "input" && side != "output") {
                error = "io= is input or output (not " + std::string(side) + ")";
                return std::nullopt;
            }
            f.sides_.emplace_back(side);
        } else {
            std::string why;
            auto pattern = NamePattern::compile(term, why);
            if (!pattern) {
                error = "not a valid pattern: " + std::string(term) + " (" + why + ")";
                return std::nullopt;
            }
            f.patterns_.push_back(std::move(*pattern));
        }
    }
    return f;
}

bool ModuleFilter::matches(std::string_view name) const {
    if (!layers_.empty()) {
        const auto layer = layer_of(name);
        for (const auto& r : layers_)
            if (!layer || *layer < r.lo || *layer > r.hi) return false;
    }
    for (const auto& type : types_)
        if (!any_part(name, [&](std::string_view part) { return part.find(type) != std::string_view::npos; }))
            return false;
    for (const auto& side : sides_)
        if (!any_part(name, [&](std::string_view part) { return part == side; })) return false;
    for (const auto& p : patterns_)
        if (!p.search(name)) return false;
    return true;
}

}  // namespace msmon::tui
