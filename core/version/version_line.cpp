#include "core/version/build_info.hpp"

namespace msmon {

std::string version_line(std::string_view program) {
    const BuildInfo& b = build_info();
    return std::string(program) + " " + b.version + " (commit " + b.commit + ", built " + b.date + ")";
}

}  // namespace msmon
