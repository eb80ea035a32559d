#include "core/model/threshold_use.hpp"

#include "core/text/number_text.hpp"

namespace msmon {

std::string encode_threshold_uses(const std::vector<ThresholdUse>& uses) {
    std::string out;
    for (const auto& u : uses)
        out += u.key + "\t" + (u.value ? format_double(*u.value) : std::string()) + "\t" + u.source + "\n";
    return out;
}

std::vector<ThresholdUse> decode_threshold_uses(const std::string& text) {
    std::vector<ThresholdUse> uses;
    std::size_t start = 0;
    while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        const std::string line = text.substr(start, end - start);
        start = end + 1;
        const auto a = line.find('\t'), b = a == std::string::npos ? a : line.find('\t', a + 1);
        if (b == std::string::npos) continue;
        ThresholdUse u;
        u.key = line.substr(0, a);
        if (b > a + 1) u.value = parse_double(line.substr(a + 1, b - a - 1));
        u.source = line.substr(b + 1);
        uses.push_back(std::move(u));
    }
    return uses;
}

}  // namespace msmon
