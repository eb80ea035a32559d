// A layout's numeric ops (the ops of a row's values, in slot order): its ops without shape and dtype.
#pragma once

#include <string>
#include <vector>

namespace msmon {

inline std::vector<std::string> numeric_ops(const std::string& layout) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (start <= layout.size()) {
        const auto comma = layout.find(',', start);
        std::string op = layout.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (op != "shape" && op != "dtype") out.push_back(std::move(op));
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return out;
}

}  // namespace msmon
