// PinnedFile: how a path is walked (".." and relative paths, your own links, loops), and what reading refuses.
#include "core/files/pinned_file.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "tests/support/test_env.hpp"

namespace msmon::test {
namespace {

namespace fs = std::filesystem;

std::optional<PinnedFile> pin(const std::string& path, LinkPolicy links, std::string& error) {
    return PinnedFile::pin(path, links, "--follow", error);
}

TEST(PinnedFile, dot_dot_and_your_own_links_in_the_folders_resolve_to_the_real_folder) {
    TempDir tmp;
    fs::create_directories(tmp / "a/b");
    fs::create_directories(tmp / "real");
    write_file(tmp / "real/config.json", "{}");
    fs::create_directory_symlink(tmp / "real", tmp / "a/b/mine");
    std::string error;
    const auto p = pin(tmp / "a/b/../b/./mine/config.json", LinkPolicy::trusted_folders, error);
    ASSERT_TRUE(p) << error;
    EXPECT_EQ(p->real_path(), tmp / "real/config.json");
    EXPECT_EQ(p->name(), "config.json");
    struct stat st {};
    EXPECT_TRUE(p->stat_now(st));
}

TEST(PinnedFile, the_last_component_as_a_link_is_refused_or_followed_as_the_policy_says) {
    TempDir tmp;
    write_file(tmp / "real.json", "{}");
    fs::create_symlink("real.json", tmp / "config.json");
    std::string error;
    EXPECT_FALSE(pin(tmp / "config.json", LinkPolicy::trusted_folders, error));
    EXPECT_NE(error.find("is a symbolic link (to real.json)"), std::string::npos) << error;
    EXPECT_NE(error.find("--follow"), std::string::npos) << error;
    for (LinkPolicy links : {LinkPolicy::trusted, LinkPolicy::any}) {
        const auto p = pin(tmp / "config.json", links, error);
        ASSERT_TRUE(p) << error;
        EXPECT_EQ(p->real_path(), tmp / "real.json");
    }
}

TEST(PinnedFile, a_loop_of_links_ends_with_a_message_and_a_missing_file_can_be_pinned) {
    TempDir tmp;
    fs::create_symlink("b", tmp / "a");
    fs::create_symlink("a", tmp / "b");
    std::string error;
    EXPECT_FALSE(pin(tmp / "a/x.json", LinkPolicy::any, error));
    EXPECT_NE(error.find("more than 40 links"), std::string::npos) << error;
    EXPECT_FALSE(pin(tmp / "a", LinkPolicy::any, error));
    EXPECT_NE(error.find("more than 40 links"), std::string::npos) << error;
    const auto missing = pin(tmp / "new.json", LinkPolicy::trusted_folders, error);
    ASSERT_TRUE(missing) << error;
    struct stat st {};
    EXPECT_FALSE(missing->stat_now(st));
    EXPECT_FALSE(pin(tmp.path() + "/", LinkPolicy::any, error));
    EXPECT_NE(error.find("names a folder"), std::string::npos) << error;
}

TEST(PinnedFile, reading_refuses_a_fifo_a_folder_and_a_device_without_blocking) {
    TempDir tmp;
    ASSERT_EQ(::mkfifo((tmp / "fifo.json").c_str(), 0600), 0);
    fs::create_directories(tmp / "dir.json");
    const std::pair<std::string, std::string> cases[] = {
        {tmp / "fifo.json", "a FIFO"}, {tmp / "dir.json", "a folder"}, {"/dev/zero", "a device"}};
    for (const auto& [path, what] : cases) {
        std::string error;
        const auto p = pin(path, LinkPolicy::trusted_folders, error);
        ASSERT_TRUE(p) << path << ": " << error;
        EXPECT_FALSE(p->open_for_reading(error).ok()) << path;
        EXPECT_EQ(error, path + " is " + what + ", not a regular file");
    }
}

}  // namespace
}  // namespace msmon::test
