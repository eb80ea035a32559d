// useradd once, fork + setuid per action.
#include "tests/support/second_user.hpp"

#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>
#include <vector>

#include "tests/support/test_env.hpp"

namespace msmon::test {

namespace {

constexpr const char* kName = "msmon-trainer";

std::optional<SecondUser> look_up() {
    passwd pw{}, *found = nullptr;
    std::vector<char> buf(16384);
    if (::getpwnam_r(kName, &pw, buf.data(), buf.size(), &found) != 0 || !found) return std::nullopt;
    return SecondUser{kName, found->pw_uid, found->pw_gid};
}

}  // namespace

std::optional<SecondUser> second_user(std::string& why) {
    if (::geteuid() != 0) {
        why = "needs root: the test plays a second user on a shared node (CI runs as root)";
        return std::nullopt;
    }
    const std::string useradd = ::access("/usr/sbin/useradd", X_OK) == 0 ? "/usr/sbin/useradd" : "useradd";
    std::string last;
    for (int attempt = 0; attempt < 100; ++attempt) {
        if (auto user = look_up()) return user;
        // Tests run in parallel: another may hold /etc/passwd's lock (useradd then fails; the user appears soon).
        const auto r =
            run({useradd, "--system", "--no-create-home", "--user-group", "--shell", "/usr/sbin/nologin", kName});
        if (auto user = look_up()) return user;
        last = r.err;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    why = std::string("cannot create the user ") + kName + " with useradd: " + last;
    return std::nullopt;
}

bool as_user(const SecondUser& user, const std::function<bool()>& act) {
    const pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) {
        if (::setgroups(0, nullptr) != 0 || ::setgid(user.gid) != 0 || ::setuid(user.uid) != 0) ::_exit(3);
        ::_exit(act() ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

void give_to(const SecondUser& user, const std::string& path) {
    namespace fs = std::filesystem;
    ::lchown(path.c_str(), user.uid, user.gid);
    std::error_code ec;
    if (!fs::is_directory(fs::symlink_status(path, ec))) return;
    for (auto it = fs::recursive_directory_iterator(path, ec); !ec && it != fs::recursive_directory_iterator();
         it.increment(ec))
        ::lchown(it->path().c_str(), user.uid, user.gid);
}

}  // namespace msmon::test
