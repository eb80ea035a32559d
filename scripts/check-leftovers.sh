#!/usr/bin/env bash
# After a test stage: no process the tests started may still run. Looks for processes whose program was built
# here (build*/msmon, msmon-tui, msmon_test_trainer, the test programs) or whose environment carries
# MSMON_TEST_TREE=<a build folder here> (ctest gives it to every test, and every process a test starts inherits it:
# the clickhouse-server, tmux servers and shells), prints each, kills it (so that the next stage is not slowed by
# it) and exits 1. Exits 0 when none. Another checkout's tests are not this one's.
#   scripts/check-leftovers.sh [STAGE]
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd -P)
stage=${1:-tests}
found=()
for proc in /proc/[0-9]*; do
  pid=${proc#/proc/}
  [ "$pid" = "$$" ] || [ "$pid" = "$PPID" ] && continue
  exe=$(readlink "$proc/exe" 2>/dev/null) || continue
  state=$(awk '{print $3}' "$proc/stat" 2>/dev/null)
  [ "$state" = Z ] && continue
  case "$exe" in "$repo"/build*) found+=("$pid") && continue ;; esac
  tr '\0' '\n' < "$proc/environ" 2>/dev/null | grep -q "^MSMON_TEST_TREE=$repo/build" && found+=("$pid")
done
[ ${#found[@]} -eq 0 ] && exit 0
echo "check-leftovers: ${#found[@]} process(es) the $stage left running:" >&2
for pid in "${found[@]}"; do
  echo "  $pid $(readlink "/proc/$pid/exe" 2>/dev/null): $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | cut -c1-200)" >&2
done
kill -KILL "${found[@]}" 2>/dev/null
exit 1
