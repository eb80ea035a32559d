// TFRecord framing: table-driven CRC-32C and the length/data checks (tensorflow/core/lib/io/record_writer.cc).
#include "core/parse/tfrecord_framing.hpp"

#include <array>
#include <cstring>

namespace msmon {

namespace {

constexpr std::array<std::uint32_t, 256> make_table() {
    std::array<std::uint32_t, 256> t{};
    for (std::uint32_t i = 0; i < 256; ++i) {
        std::uint32_t c = i;
        for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        t[i] = c;
    }
    return t;
}

constexpr std::array<std::uint32_t, 256> kTable = make_table();

std::uint32_t load32(const char* p) {
    std::uint32_t v;
    std::memcpy(&v, p, 4);
    return v;  // the formats are little-endian, as is every machine msmon runs on
}

std::uint64_t load64(const char* p) {
    std::uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
}

void store32(std::string& out, std::uint32_t v) {
    char b[4];
    std::memcpy(b, &v, 4);
    out.append(b, 4);
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t len, std::uint32_t crc) {
    const auto* p = static_cast<const unsigned char*>(data);
    crc = ~crc;
    for (std::size_t i = 0; i < len; ++i) crc = kTable[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}

std::uint32_t mask_crc(std::uint32_t crc) {
    return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

Frame next_frame(std::string_view bytes) {
    Frame f;
    if (bytes.size() < kTfRecordHeaderBytes) return f;
    if (mask_crc(crc32c(bytes.data(), 8)) != load32(bytes.data() + 8)) {
        f.status = FrameStatus::bad_length_crc;
        return f;
    }
    f.length = load64(bytes.data());
    if (f.length > (std::uint64_t{1} << 40)) {  // a CRC-valid absurd length: treat as corrupt
        f.status = FrameStatus::bad_length_crc;
        return f;
    }
    f.size = kTfRecordHeaderBytes + static_cast<std::size_t>(f.length) + kTfRecordFooterBytes;
    if (bytes.size() < f.size) return f;  // incomplete, size known
    f.data = bytes.substr(kTfRecordHeaderBytes, static_cast<std::size_t>(f.length));
    const std::uint32_t want = load32(bytes.data() + kTfRecordHeaderBytes + f.length);
    f.status = mask_crc(crc32c(f.data.data(), f.data.size())) == want ? FrameStatus::record : FrameStatus::bad_data_crc;
    return f;
}

std::string frame_record(std::string_view data) {
    std::string out;
    out.reserve(data.size() + kTfRecordHeaderBytes + kTfRecordFooterBytes);
    const std::uint64_t len = data.size();
    char b[8];
    std::memcpy(b, &len, 8);
    out.append(b, 8);
    store32(out, mask_crc(crc32c(b, 8)));
    out.append(data);
    store32(out, mask_crc(crc32c(data.data(), data.size())));
    return out;
}

}  // namespace msmon
