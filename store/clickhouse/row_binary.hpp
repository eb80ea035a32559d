// ClickHouse's RowBinary format: little-endian fixed-width numbers, strings as a LEB128 length and bytes.
// Used both ways, so doubles (NaN, -0.0, infinities) cross exactly, with no text formatting in between.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace msmon {

class RowBinaryWriter {
public:
    void i32(std::int32_t v) { raw(&v, sizeof v); }
    void i64(std::int64_t v) { raw(&v, sizeof v); }
    void u8(std::uint8_t v) { raw(&v, sizeof v); }
    void u32(std::uint32_t v) { raw(&v, sizeof v); }
    void u64(std::uint64_t v) { raw(&v, sizeof v); }
    void f64(double v) { raw(&v, sizeof v); }
    void str(std::string_view s) {
        std::uint64_t n = s.size();
        do {
            std::uint8_t b = n & 0x7f;
            n >>= 7;
            if (n) b |= 0x80;
            out_.push_back(static_cast<char>(b));
        } while (n);
        out_.append(s);
    }
    const std::string& data() const { return out_; }
    std::size_t size() const { return out_.size(); }
    void clear() { out_.clear(); }

private:
    void raw(const void* p, std::size_t n) { out_.append(static_cast<const char*>(p), n); }  // x86/ARM: LE
    std::string out_;
};

// Reads RowBinary rows from the text it owns (a query's whole result); throws std::runtime_error on truncated
// input.
class RowBinaryReader {
public:
    explicit RowBinaryReader(std::string data) : data_(std::move(data)) {}
    RowBinaryReader(const RowBinaryReader&) = delete;
    RowBinaryReader& operator=(const RowBinaryReader&) = delete;
    bool at_end() const { return pos_ >= data_.size(); }
    std::int32_t i32() { return fixed<std::int32_t>(); }
    std::int64_t i64() { return fixed<std::int64_t>(); }
    std::uint8_t u8() { return fixed<std::uint8_t>(); }
    std::uint64_t u64() { return fixed<std::uint64_t>(); }
    double f64() { return fixed<double>(); }
    // A LEB128 length: of a string, or of an Array (its elements follow, each in its own type's encoding).
    std::uint64_t length() {
        std::uint64_t n = 0;
        for (int shift = 0;; shift += 7) {
            const auto b = fixed<std::uint8_t>();
            n |= static_cast<std::uint64_t>(b & 0x7f) << shift;
            if (!(b & 0x80)) break;
            if (shift > 56) throw std::runtime_error("RowBinary: bad length");
        }
        return n;
    }
    std::string str() {
        const std::uint64_t n = length();
        need(n);
        std::string s(data_, pos_, n);
        pos_ += n;
        return s;
    }

private:
    // GCC 12 reports the inlined std::string's SSO length as maybe-uninitialized here (a false positive of
    // the same family as bug 105329); the string is always constructed.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
    template <typename T>
    T fixed() {
        need(sizeof(T));
        T v;
        std::memcpy(&v, data_.data() + pos_, sizeof v);
        pos_ += sizeof v;
        return v;
    }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
    void need(std::uint64_t n) const {
        if (data_.size() - pos_ < n) throw std::runtime_error("RowBinary: truncated response");
    }
    std::string data_;
    std::size_t pos_ = 0;
};

}  // namespace msmon
