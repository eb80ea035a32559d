// A pattern a person typed to pick tensors by name (`--name`, the TUI's `/`, `:name`): RE2 syntax, searched anywhere
// in the name, in time linear in the name and without recursion (std::regex crashed on a 30 kB name with `.*x`).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace re2 {
class RE2;
}

namespace msmon {

class NamePattern {
public:
    // Empty with `error` set (RE2's reason) if the pattern is not valid.
    static std::optional<NamePattern> compile(std::string_view pattern, std::string& error);
    // True if the pattern matches anywhere in `name`.
    bool search(std::string_view name) const;
    const std::string& text() const { return text_; }
    // As compile, but an invalid pattern throws std::runtime_error with RE2's reason.
    static NamePattern compile_or_throw(std::string_view pattern);

private:
    std::shared_ptr<const re2::RE2> re_;
    std::string text_;
};

// A pattern matching exactly `name` and nothing else ("^layers\\.0\\.fc1$"): a drill-down onto one tensor.
std::string exact_name_pattern(const std::string& name);

}  // namespace msmon
