#include "core/parse/job_threshold_text.hpp"

#include <cctype>
#include <string>

#include "core/text/number_text.hpp"

namespace msmon {

namespace {

// The number after `key` at `at` (its first byte): an optional closing quote, ':' or '=', spaces, the number.
std::optional<double> value_after(std::string_view text, std::size_t at, std::size_t key_size) {
    std::size_t i = at + key_size;
    if (i < text.size() && (text[i] == '\'' || text[i] == '"')) ++i;
    while (i < text.size() && text[i] == ' ') ++i;
    if (i >= text.size() || (text[i] != ':' && text[i] != '=')) return std::nullopt;
    ++i;
    while (i < text.size() && text[i] == ' ') ++i;
    std::size_t end = i;
    while (end < text.size() && (std::isdigit(static_cast<unsigned char>(text[end])) || text[end] == '.' ||
                                 text[end] == 'e' || text[end] == 'E' || text[end] == '-' || text[end] == '+'))
        ++end;
    if (end == i) return std::nullopt;
    return parse_double(text.substr(i, end - i));
}

// `key` stands alone at `at`: not the tail of a longer name ("health_checkpoint.x" is fine, "my_x" is not).
bool starts_a_name(std::string_view text, std::size_t at) {
    if (at == 0) return true;
    const unsigned char before = static_cast<unsigned char>(text[at - 1]);
    return !std::isalnum(before) && before != '_';
}

}  // namespace

std::vector<ThresholdInText> thresholds_in_text(std::string_view text) {
    std::vector<ThresholdInText> found;
    if (text.find("_threshold") == std::string_view::npos) return found;
    for (const char* key : {kSpikeThresholdKey, kSpikeCountThresholdKey, kEmbeddingThresholdKey}) {
        const std::string_view k(key);
        for (std::size_t at = text.find(k); at != std::string_view::npos; at = text.find(k, at + 1)) {
            if (!starts_a_name(text, at)) continue;
            if (auto v = value_after(text, at, k.size())) {
                found.push_back({key, *v});
                break;
            }
        }
    }
    return found;
}

}  // namespace msmon
