// "1 incident", "2 incidents": a count with its noun, singular for one.
#pragma once

#include <string>
#include <string_view>

namespace msmon {

// `noun` is the singular; the plural adds "s" (every noun msmon counts takes one), or `plural` when given.
inline std::string counted(std::size_t n, std::string_view noun, std::string_view plural = {}) {
    return std::to_string(n) + " " + std::string(n == 1 ? noun : plural.empty() ? std::string(noun) + "s" : plural);
}

}  // namespace msmon
