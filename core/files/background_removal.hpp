// Removing a large folder without making the person wait: a detached process (not msmon's child once it runs)
// deletes it while the shell prompt comes back. The demo's folder holds ~1 GB and 100k files after 15 minutes;
// removing it in the foreground took minutes on a busy disk.
#pragma once

#include <string>

namespace msmon {

// Starts removing `dir` and everything under it in a detached process (symbolic links are removed, never
// followed). Returns false if no process could be started (then nothing was removed).
bool remove_tree_in_background(const std::string& dir);

}  // namespace msmon
