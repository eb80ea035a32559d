// The "key=value;key=value" text msmon saves its readers' and detectors' state in: each item to `f(key, value)`, in
// order. Items without '=' are skipped (a state written by another version reads as far as it can).
#pragma once

#include <string_view>

namespace msmon {

template <typename F>
void for_each_key_value(std::string_view text, F&& f) {
    while (!text.empty()) {
        const auto semi = text.find(';');
        const std::string_view item = text.substr(0, semi);
        text = semi == std::string_view::npos ? std::string_view() : text.substr(semi + 1);
        const auto eq = item.find('=');
        if (eq != std::string_view::npos) f(item.substr(0, eq), item.substr(eq + 1));
    }
}

}  // namespace msmon
