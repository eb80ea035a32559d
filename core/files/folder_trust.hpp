// Whether anyone but this process's user and root can change a folder (and so plant or swap names in it), as ssh's
// StrictModes asks of ~/.ssh: on a shared node, msmon trusts a file only when nobody else could have put it there.
#pragma once

#include <sys/stat.h>

#include <string>

namespace msmon {

// "trainer (uid 1001)", or "uid 1001" when the passwd database does not know it.
std::string user_text(uid_t uid);
// The effective user or root: the owners whose folders and links msmon trusts.
bool trusted_owner(uid_t uid);

// "" when the effective user or root owns `st` and nobody else can write it; else why not ("is owned by trainer
// (uid 1001)", "is writable by its group proj (mode 2775)"). Group write counts as nobody else's only for the
// owner's own private group (named as the owner, no other member). `sticky_ok`: a world-writable root folder with
// the sticky bit (/tmp) is fine — for a folder above, where others cannot rename what is ours.
std::string owner_or_write_problem(const struct stat& st, bool sticky_ok = false);

// The first folder from `real_dir` up to `stop_after` (inclusive; "/" by default) that someone else can change,
// with why and how to fix it; "" when none. `real_dir` should hold no links (realpath it first).
std::string folder_trust_problem(const std::string& real_dir, const std::string& stop_after = "/");

}  // namespace msmon

namespace msmon {

enum class TrustedRead { ok, missing, refused };

// Reads a file whose content makes msmon act (a settings file that names commands): only when the file, and every
// folder above it up to `home` (up to / for a file outside it), can be changed by nobody but the effective user or
// root. A link is read through only when it, and its folders, pass the same test and its target does too. A FIFO or
// a device is refused, not opened. `refused` with `error` (not naming `path`): which folder or target, why, and the
// fix.
TrustedRead read_trusted_file(const std::string& path, const std::string& home, std::string& text, std::string& error);

}  // namespace msmon
