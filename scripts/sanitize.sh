#!/usr/bin/env bash
# Builds the tests and tools with sanitizers and runs every test through ctest:
#   address (default): AddressSanitizer + UndefinedBehaviorSanitizer (-DMSMON_SANITIZE=ON) into ./build-asan
#   thread:            ThreadSanitizer (-DMSMON_SANITIZE_THREAD=ON) into ./build-tsan
# No benchmarks. The programs the end-to-end tests spawn (msmon, msmon-tui, msmon_test_trainer) are
# instrumented too and inherit the options below: a finding aborts the process (SIGABRT), so a test that checks
# the child's exit fails. Every report, from any process, is also written to <build>/sanitizer-reports/, and any
# report there fails this script even if no test noticed it (a TUI under tmux, a child the test killed). Exits
# non-zero on a failed test or on any report.
#   scripts/sanitize.sh                          # everything, ASan + UBSan
#   scripts/sanitize.sh thread                   # everything, TSan
#   scripts/sanitize.sh address -R 'HugeLine'    # extra arguments go to ctest
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
mode=address
case "${1:-}" in
  address | thread) mode=$1; shift ;;
esac
if [ "$mode" = thread ]; then
  build=$repo/build-tsan
  flag=-DMSMON_SANITIZE_THREAD=ON
else
  build=$repo/build-asan
  flag=-DMSMON_SANITIZE=ON
fi
bash scripts/setup-deps.sh
# -O1: quicker to build than -O2 and clearer stacks; NDEBUG as in the Release build the other tests use.
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g -DNDEBUG" \
  "$flag" -DMSMON_BUILD_BENCH=OFF \
  -DMSMON_BUILD_TESTS=ON -DMSMON_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"

reports=$build/sanitizer-reports
rm -rf "$reports"
mkdir -p "$reports"
if [ "$mode" = thread ]; then
  # second_deadlock_stack: both stacks of a lock-order inversion. exitcode is moot with abort_on_error.
  export TSAN_OPTIONS="halt_on_error=1:abort_on_error=1:second_deadlock_stack=1:log_path=$reports/tsan:log_exe_name=1"
else
  leaks=1
  # LeakSanitizer stops the process with a fatal error when it runs under ptrace (strace, gdb, some sandboxes).
  # Probe once with a program that exits cleanly; if that is why it fails, run without leak detection and say so.
  probe=$(ASAN_OPTIONS=detect_leaks=1 "$build/msmon" --help 2>&1 >/dev/null || true)
  if grep -q "LeakSanitizer has encountered a fatal error\|does not work under ptrace" <<<"$probe"; then
    echo "sanitize: LeakSanitizer cannot run in this environment ($(grep -m1 -o 'HINT: LeakSanitizer.*' <<<"$probe" ||
      echo "fatal error"); TracerPid $(awk '/^TracerPid/ {print $2}' /proc/self/status)): running with detect_leaks=0," \
      "so leaks are NOT checked" >&2
    leaks=0
  fi

  # abort_on_error in UBSAN_OPTIONS too: otherwise a UBSan finding exits 1, which a test expecting exit 1 accepts.
  export ASAN_OPTIONS="detect_leaks=$leaks:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:log_path=$reports/asan:log_exe_name=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:abort_on_error=1:log_path=$reports/ubsan:log_exe_name=1"
fi
status=0
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@" || status=$?
# The whole-job tests (label cluster) pace real agents and judges against a 15 s grace and 25-35 s pauses; under a
# sanitizer on a loaded machine a rare interleaving can miss those. When every failed test is one of them, they run
# once more, alone, and the log names them: a failure that repeats fails the stage, and a sanitizer report from the
# first run fails it whatever the second run does (the reports are checked below).
failed_log=$build/Testing/Temporary/LastTestsFailed.log
if [ "$status" -ne 0 ] && [ -s "$failed_log" ]; then
  cluster=$(ctest --test-dir "$build" -N -L cluster | sed -n 's/^ *Test *#[0-9]*: //p')
  only_cluster=1
  while IFS=: read -r _ name; do
    grep -qxF "$name" <<<"$cluster" || only_cluster=0
  done <"$failed_log"
  if [ "$only_cluster" = 1 ]; then
    echo "sanitize: whole-job test(s) failed under $mode; running them once more:" \
      "$(cut -d: -f2 "$failed_log" | paste -sd' ')" >&2
    status=0
    ctest --test-dir "$build" --output-on-failure --rerun-failed || status=$?
    [ "$status" -ne 0 ] || echo "sanitize: they passed on the second run (see the first run's output above)" >&2
  fi
fi

shopt -s nullglob
found=("$reports"/*)
if [ ${#found[@]} -gt 0 ]; then
  echo "sanitize: ${#found[@]} sanitizer report(s) in $reports:" >&2
  for f in "${found[@]:0:20}"; do
    echo "==== $f" >&2
    cat "$f" >&2
  done
  [ ${#found[@]} -le 20 ] || echo "sanitize: ... and $((${#found[@]} - 20)) more in $reports" >&2
  [ "$status" -ne 0 ] || status=1
fi
exit "$status"
