// A second, unprivileged user for the shared-node tests (docs/reliability.md, "Threat model"): the trainer who owns
// a training folder and plants links or FIFOs in it while root runs msmon. Created once, by useradd, when the tests
// run as root (CI does); where they cannot, the test says why through MSMON_SKIP_UNLESS_REQUIRED.
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

namespace msmon::test {

struct SecondUser {
    std::string name;  // "msmon-trainer"
    uid_t uid = 0;
    gid_t gid = 0;
};

// The user (made if missing: useradd --system, no home, no login shell). nullopt with `why` when the tests do not
// run as root or the user cannot be made.
std::optional<SecondUser> second_user(std::string& why);

// Runs `act` in a child process that has become `user` (no supplementary groups). True when it returned true.
bool as_user(const SecondUser& user, const std::function<bool()>& act);

// chown -R to the user.
void give_to(const SecondUser& user, const std::string& path);

}  // namespace msmon::test

// The second user, or skip (fail under MSMON_TEST_REQUIRE_ALL) saying why.
#define MSMON_SECOND_USER_OR_SKIP(var)                            \
    std::string var##_why;                                        \
    const auto var##_opt = ::msmon::test::second_user(var##_why); \
    if (!var##_opt) MSMON_SKIP_UNLESS_REQUIRED(var##_why);        \
    const ::msmon::test::SecondUser& var = *var##_opt
