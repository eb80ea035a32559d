// Interned text: equal texts share one allocation. For texts many records carry and few distinct values exist,
// such as CSV header records (200,000 files under one root hold a handful of headers).
#pragma once

#include <memory>
#include <string>
#include <string_view>

namespace msmon {

using SharedText = std::shared_ptr<const std::string>;

// The pool's copy of `text` (thread-safe). Distinct texts stay for the life of the process.
SharedText share_text(std::string_view text);

// Never a null view: an absent text reads as "" (SQLite binds a null pointer as NULL).
inline std::string_view text_of(const SharedText& t) {
    return t ? std::string_view(*t) : std::string_view("");
}

}  // namespace msmon
