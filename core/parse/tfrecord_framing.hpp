// TFRecord framing of TensorBoard event files: uint64 length, masked CRC-32C of the length, data, masked CRC-32C
// of the data (all little-endian). Finds whole records in bytes read so far; checks both CRCs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace msmon {

// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78) of `data`, continuing from `crc` (0 to start).
std::uint32_t crc32c(const void* data, std::size_t len, std::uint32_t crc = 0);
// TensorFlow's mask: ((crc >> 15) | (crc << 17)) + 0xa282ead8.
std::uint32_t mask_crc(std::uint32_t crc);

inline constexpr std::size_t kTfRecordHeaderBytes = 12;  // length + its CRC
inline constexpr std::size_t kTfRecordFooterBytes = 4;   // data CRC

enum class FrameStatus {
    record,          // a whole record with valid CRCs: `data`, `size`
    incomplete,      // the bytes end inside a record (still being written): wait for more
    bad_length_crc,  // the length field's CRC fails: nothing after this point can be trusted
    bad_data_crc,    // the record is whole but its data CRC fails: `size` bytes can be skipped
};

struct Frame {
    FrameStatus status = FrameStatus::incomplete;
    std::string_view data;  // the record's payload (status record, or bad_data_crc)
    std::size_t size = 0;   // bytes of the whole record, header and footer included
    std::uint64_t length = 0;
};

// The record starting at the front of `bytes`. When the bytes end inside it, status is incomplete and, once the
// header is whole and valid, `size` and `length` say how big it will be (a caller can stream past a record too
// large to hold).
Frame next_frame(std::string_view bytes);

// One framed record around `data`, as a TensorFlow writer writes it.
std::string frame_record(std::string_view data);

}  // namespace msmon
