// --steps LIST: comma-separated steps and inclusive ranges ("12,20", "0-99", "5,10-20").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace msmon {

class StepList {
public:
    // Parses LIST; nullopt with `error` set when it is not of that form.
    static std::optional<StepList> parse(std::string_view text, std::string& error);
    bool contains(std::int64_t step) const;
    std::int64_t min() const { return ranges_.front().first; }
    std::int64_t max() const { return ranges_.back().second; }
    const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges() const { return ranges_; }

private:
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges_;  // sorted, merged, inclusive
};

}  // namespace msmon
