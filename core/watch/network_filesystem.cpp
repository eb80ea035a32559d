// statfs magic numbers of filesystems where inotify does not report writes made on other hosts.
#include <sys/vfs.h>

#include <cstdint>

#include "core/watch/change_watcher.hpp"

namespace msmon {

std::string network_filesystem_name(const std::string& path) {
    struct statfs fs {};
    if (::statfs(path.c_str(), &fs) != 0) return {};
    switch (static_cast<std::uint32_t>(fs.f_type)) {
        case 0x6969:
            return "nfs";
        case 0x0BD00BD0:
            return "lustre";
        case 0xFF534D42:
            return "cifs";
        case 0xFE534D42:
            return "smb2";
        case 0x517B:
            return "smb";
        case 0x00C36400:
            return "ceph";
        case 0x47504653:
            return "gpfs";
        case 0x65735546:
            return "fuse";
        case 0x013111A8:
            return "ibrix";
        case 0x61636673:
            return "acfs";
        case 0x5346414F:
            return "afs";
        case 0x01161970:
            return "gfs2";
        case 0x7461636F:
            return "ocfs2";
        default:
            return {};
    }
}

}  // namespace msmon
