// Which msmon this is: the version, the git commit it was built from and the build date (cmake/build_info.cmake
// writes them into the build at build time). `--version` prints them; a store records the version that wrote it.
#pragma once

#include <string>
#include <string_view>

namespace msmon {

struct BuildInfo {
    const char* version;  // "0.1.0": the project's version in CMakeLists.txt
    const char* commit;   // "26ed498abc12", "-dirty" appended for uncommitted changes, or "unknown"
    const char* date;     // "2026-11-26" (UTC)
};

const BuildInfo& build_info();

// "msmon 0.1.0 (commit 26ed498abc12, built 2026-11-26)"
std::string version_line(std::string_view program);

}  // namespace msmon
