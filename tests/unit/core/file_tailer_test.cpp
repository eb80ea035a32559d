// Unit tests for core/tail/file_tailer on real files: appends, truncation, replacement, in-place rewrites.
#include "core/tail/file_tailer.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <string>

#include "tests/support/test_env.hpp"

namespace msmon {
namespace {

using test::append_file;
using test::TempDir;
using test::write_file;

constexpr std::size_t kLarge = 1 << 20;

FileProgress progress_for(const std::string& path) {
    FileProgress p;
    p.path = path;
    return p;
}

// Reads and consumes everything new, as the ingest loop would after parsing complete records.
std::string read_and_consume(FileProgress& p, TailRead* result = nullptr) {
    std::string bytes;
    TailRead r = tail_file(p, bytes, kLarge);
    if (result) *result = r;
    if (r.status == TailStatus::data) advance_progress(p, bytes, bytes.size(), 1);
    return bytes;
}

TEST(FileTailer, new_file_is_read_from_the_start) {
    TempDir dir;
    const std::string path = dir / "grad_reduced_0-4.csv";
    write_file(path, "vpp_stage,name,step,norm\n0,w,0,1.5\n");
    FileProgress p = progress_for(path);
    std::string bytes;
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_EQ(r.status, TailStatus::data);
    EXPECT_FALSE(r.restarted);
    EXPECT_FALSE(r.more);
    EXPECT_EQ(bytes, "vpp_stage,name,step,norm\n0,w,0,1.5\n");
    EXPECT_EQ(p.offset, 0);
    struct stat st {};
    ASSERT_EQ(::stat(path.c_str(), &st), 0);
    EXPECT_EQ(p.ino, static_cast<std::uint64_t>(st.st_ino));
    EXPECT_EQ(p.dev, static_cast<std::uint64_t>(st.st_dev));
}

TEST(FileTailer, advance_progress_moves_offset_and_fingerprints_the_head) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "h\n1\n");
    FileProgress p = progress_for(path);
    std::string bytes;
    ASSERT_EQ(tail_file(p, bytes, kLarge).status, TailStatus::data);
    advance_progress(p, bytes, 2, 1);
    EXPECT_EQ(p.offset, 2);
    EXPECT_EQ(p.line, 1);
    EXPECT_EQ(p.fp_len, 2u);
    EXPECT_EQ(p.fp_hash, fingerprint_hash("h\n", 2));
}

TEST(FileTailer, appended_data_is_read_from_the_consumed_offset) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "h\n1\n");
    FileProgress p = progress_for(path);
    EXPECT_EQ(read_and_consume(p), "h\n1\n");
    append_file(path, "2\n3\n");
    TailRead r;
    EXPECT_EQ(read_and_consume(p, &r), "2\n3\n");
    EXPECT_EQ(r.status, TailStatus::data);
    EXPECT_FALSE(r.restarted);
    EXPECT_EQ(p.offset, 8);
}

TEST(FileTailer, unconsumed_partial_record_is_read_again) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "h\n1,");
    FileProgress p = progress_for(path);
    std::string bytes;
    ASSERT_EQ(tail_file(p, bytes, kLarge).status, TailStatus::data);
    advance_progress(p, bytes, 2, 1);  // only "h\n" is a complete record
    append_file(path, "2\n");
    ASSERT_EQ(tail_file(p, bytes, kLarge).status, TailStatus::data);
    EXPECT_EQ(bytes, "1,2\n");
}

TEST(FileTailer, nothing_new_is_unchanged) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "h\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    std::string bytes = "stale";
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_EQ(r.status, TailStatus::unchanged);
    EXPECT_FALSE(r.restarted);
    EXPECT_TRUE(bytes.empty());
    EXPECT_EQ(p.offset, 2);
}

TEST(FileTailer, empty_new_file_is_unchanged) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "");
    FileProgress p = progress_for(path);
    std::string bytes;
    EXPECT_EQ(tail_file(p, bytes, kLarge).status, TailStatus::unchanged);
    append_file(path, "h\n");
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_EQ(r.status, TailStatus::data);
    EXPECT_FALSE(r.restarted);
    EXPECT_EQ(bytes, "h\n");
}

TEST(FileTailer, truncation_below_the_offset_restarts_from_zero) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "header\nrow1\nrow2\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    p.header = share_text("header");
    ASSERT_EQ(p.offset, 17);
    write_file(path, "hdr\n");  // O_TRUNC: same inode, smaller than the offset
    std::string bytes;
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_EQ(r.status, TailStatus::data);
    EXPECT_TRUE(r.restarted);
    EXPECT_NE(r.restart_reason.find("truncated"), std::string::npos) << r.restart_reason;
    EXPECT_EQ(bytes, "hdr\n");
    EXPECT_EQ(p.offset, 0);
    EXPECT_EQ(p.line, 0);
    EXPECT_FALSE(p.header);
}

TEST(FileTailer, truncation_to_empty_restarts_with_nothing_to_read) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "header\nrow1\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    write_file(path, "");
    std::string bytes;
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_TRUE(r.restarted);
    EXPECT_EQ(r.status, TailStatus::unchanged);
    EXPECT_EQ(p.offset, 0);
}

TEST(FileTailer, replacement_by_rename_restarts_from_zero) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "header\nrow1\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    const std::uint64_t old_ino = p.ino;
    // Longer than the offset and with the same first bytes: only the inode tells it apart.
    write_file(dir / "new.csv", "header\nrow1\nrowX\n");
    ASSERT_EQ(std::rename((dir / "new.csv").c_str(), path.c_str()), 0);
    std::string bytes;
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_EQ(r.status, TailStatus::data);
    EXPECT_TRUE(r.restarted);
    EXPECT_NE(r.restart_reason.find("inode"), std::string::npos) << r.restart_reason;
    EXPECT_EQ(bytes, "header\nrow1\nrowX\n");
    EXPECT_EQ(p.offset, 0);
    EXPECT_NE(p.ino, old_ino);
}

TEST(FileTailer, in_place_rewrite_of_same_size_is_detected_by_fingerprint) {
    TempDir dir;
    const std::string path = dir / "anomaly.csv";
    write_file(path, "abc\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    const std::uint64_t ino = p.ino;
    write_file(path, "xyz\n");  // same inode, same size, different first bytes
    std::string bytes;
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_EQ(p.ino, ino);
    EXPECT_TRUE(r.restarted);
    EXPECT_NE(r.restart_reason.find("rewritten"), std::string::npos) << r.restart_reason;
    EXPECT_EQ(r.status, TailStatus::data);
    EXPECT_EQ(bytes, "xyz\n");
    EXPECT_EQ(p.offset, 0);
}

TEST(FileTailer, in_place_rewrite_that_grows_is_detected_by_fingerprint) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "h1\nr1\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    write_file(path, "H2\nr1\nr2\n");
    std::string bytes;
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_TRUE(r.restarted);
    EXPECT_EQ(bytes, "H2\nr1\nr2\n");
}

TEST(FileTailer, fingerprint_widens_as_more_of_the_file_is_consumed) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "ab\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    EXPECT_EQ(p.fp_len, 3u);
    append_file(path, "cd\n");
    read_and_consume(p);
    std::string bytes;
    EXPECT_EQ(tail_file(p, bytes, kLarge).status, TailStatus::unchanged);
    EXPECT_EQ(p.fp_len, 6u);
    EXPECT_EQ(p.fp_hash, fingerprint_hash("ab\ncd\n", 6));
}

TEST(FileTailer, fingerprint_stops_growing_at_its_limit) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    const std::string big(1000, 'x');
    write_file(path, big + "\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    EXPECT_EQ(p.fp_len, kFingerprintBytes);
    EXPECT_EQ(p.fp_hash, fingerprint_hash(big.data(), kFingerprintBytes));
    append_file(path, "y\n");
    EXPECT_EQ(read_and_consume(p), "y\n");
    EXPECT_EQ(p.fp_len, kFingerprintBytes);
}

TEST(FileTailer, rewrite_of_bytes_consumed_after_the_first_read_is_detected) {
    // The second read's bytes were consumed (advance_progress promises to fingerprint consumed bytes), so
    // rewriting them in place before the next poll must be seen as a restart, not silently adopted.
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "ab\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    append_file(path, "cd\n");
    read_and_consume(p);
    ASSERT_EQ(p.offset, 6);
    write_file(path, "ab\nXY\n");  // same inode, same size, bytes 3..5 differ
    std::string bytes;
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_TRUE(r.restarted);
    EXPECT_EQ(bytes, "ab\nXY\n");
}

TEST(FileTailer, missing_file_is_reported_and_progress_kept) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    FileProgress never = progress_for(path);
    std::string bytes;
    EXPECT_EQ(tail_file(never, bytes, kLarge).status, TailStatus::missing);

    write_file(path, "h\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    ASSERT_EQ(std::remove(path.c_str()), 0);
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_EQ(r.status, TailStatus::missing);
    EXPECT_FALSE(r.restarted);
    EXPECT_TRUE(bytes.empty());
    EXPECT_EQ(p.offset, 2);
}

TEST(FileTailer, file_recreated_after_delete_is_read_from_zero) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "header\nrow1\nrow2\n");
    FileProgress p = progress_for(path);
    read_and_consume(p);
    ASSERT_EQ(std::remove(path.c_str()), 0);
    std::string bytes;
    ASSERT_EQ(tail_file(p, bytes, kLarge).status, TailStatus::missing);
    write_file(path, "header\nrow9\n");  // new inode, or a reused one that is shorter than the offset
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_TRUE(r.restarted);
    EXPECT_EQ(r.status, TailStatus::data);
    EXPECT_EQ(bytes, "header\nrow9\n");
}

TEST(FileTailer, directory_path_is_an_error) {
    TempDir dir;
    FileProgress p = progress_for(dir.path());
    std::string bytes;
    TailRead r = tail_file(p, bytes, kLarge);
    EXPECT_EQ(r.status, TailStatus::error);
    EXPECT_FALSE(r.error.empty());
}

TEST(FileTailer, read_limited_by_max_bytes_sets_more) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "0123456789");
    FileProgress p = progress_for(path);
    std::string bytes;

    TailRead r = tail_file(p, bytes, 4);
    EXPECT_EQ(r.status, TailStatus::data);
    EXPECT_TRUE(r.more);
    EXPECT_EQ(bytes, "0123");
    advance_progress(p, bytes, bytes.size(), 0);

    r = tail_file(p, bytes, 4);
    EXPECT_TRUE(r.more);
    EXPECT_EQ(bytes, "4567");
    advance_progress(p, bytes, bytes.size(), 0);

    r = tail_file(p, bytes, 4);
    EXPECT_EQ(r.status, TailStatus::data);
    EXPECT_FALSE(r.more);
    EXPECT_EQ(bytes, "89");
    EXPECT_FALSE(r.restarted);
}

TEST(FileTailer, read_of_exactly_max_bytes_has_no_more) {
    TempDir dir;
    const std::string path = dir / "a.csv";
    write_file(path, "0123");
    FileProgress p = progress_for(path);
    std::string bytes;
    TailRead r = tail_file(p, bytes, 4);
    EXPECT_EQ(bytes, "0123");
    EXPECT_FALSE(r.more);
}

}  // namespace
}  // namespace msmon
