// NamePattern: RE2, compiled once, shared by copies.
#include "core/text/name_pattern.hpp"

#include <re2/re2.h>

#include <stdexcept>

namespace msmon {

std::optional<NamePattern> NamePattern::compile(std::string_view pattern, std::string& error) {
    RE2::Options options;
    options.set_log_errors(false);
    // Bytes, not UTF-8: names from files may hold any byte (a drill-down's exact-name pattern carries them), and a
    // typed UTF-8 literal still matches its bytes.
    options.set_encoding(RE2::Options::EncodingLatin1);
    options.set_max_mem(64 << 20);  // a pathological pattern is refused, not a memory hog
    auto re = std::make_shared<const RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
    if (!re->ok()) {
        error = re->error();
        return std::nullopt;
    }
    NamePattern p;
    p.re_ = std::move(re);
    p.text_ = std::string(pattern);
    return p;
}

NamePattern NamePattern::compile_or_throw(std::string_view pattern) {
    std::string error;
    auto p = compile(pattern, error);
    if (!p) throw std::runtime_error("not a valid pattern '" + std::string(pattern) + "': " + error);
    return *p;
}

bool NamePattern::search(std::string_view name) const {
    return RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *re_);
}

std::string exact_name_pattern(const std::string& name) {
    std::string out = "^";
    for (char c : name) {
        if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out.push_back('\\');
        out.push_back(c);
    }
    return out + "$";
}

}  // namespace msmon
