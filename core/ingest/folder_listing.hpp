// Paths and folder listings as the engine needs them: a path's real form, its last part and its folder, whether it
// is a folder, and a folder's entries.
#pragma once

#include <string>
#include <vector>

namespace msmon {

// The path with links and dots resolved, or the path as given when that fails.
std::string canonical(const std::string& path);
std::string basename_of(const std::string& path);
std::string dirname_of(const std::string& path);
bool is_dir(const std::string& path);

struct DirEntry {
    std::string name;
    bool dir = false;  // a folder, or a link to one
};

// The entries of `dir` but . and ..; empty when it cannot be listed.
std::vector<DirEntry> list_dir(const std::string& dir);

}  // namespace msmon
