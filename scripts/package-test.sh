#!/usr/bin/env bash
# Runs a packaged msmon as a training node would: the archive unpacked anywhere, the programs started with a bare
# environment (env -i: no HOME, TERM=xterm, no terminfo folder, no locale), aarch64 ones under qemu-user. The
# round trip: simulate a job with a planted NaN -> ingest -> query -> anomalies -> health -> the TUI's snapshot.
# usage: scripts/package-test.sh dist/msmon-<version>-linux-<arch>.tar.gz
set -euo pipefail
tarball=$(realpath "$1")
arch=$(basename "$tarball" .tar.gz)
arch=${arch##*-linux-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
dir=$(echo "$work"/msmon-*)
run=()
if [ "$arch" != "$(uname -m)" ]; then
  command -v "qemu-$arch-static" >/dev/null || { echo "package-test: qemu-$arch-static is not installed" >&2; exit 1; }
  run=("qemu-$arch-static")
fi
fail() { echo "package-test ($arch): $*" >&2; exit 1; }
bare() { env -i TERM=xterm TERMINFO=/nonexistent TERMINFO_DIRS=/nonexistent "${run[@]}" "$@"; }

for p in msmon msmon-tui; do
  file "$dir/$p" | grep -q "statically linked" || fail "$p is not statically linked: $(file "$dir/$p")"
done
bare "$dir/msmon" --version | grep -q "^msmon [0-9]" || fail "msmon --version"
bare "$dir/msmon-tui" --version | grep -q "^msmon-tui [0-9]" || fail "msmon-tui --version"
cd "$work"
bare "$dir/msmon" simulate "$work/job" --ranks 2 --steps 30 --params 4 --faults nan@20:r1 > /dev/null || fail "simulate"
bare "$dir/msmon" ingest "$work/job" --db "$work/s.db" > "$work/ingest.txt" || fail "ingest"
grep -q "0 malformed lines" "$work/ingest.txt" || fail "ingest: $(cat "$work/ingest.txt")"
rows=$(bare "$dir/msmon" query --db "$work/s.db" --kind grad_reduced --op norm --rank 1 --steps 20 | wc -l)
[ "$rows" -gt 1 ] || fail "query printed $rows lines"
bare "$dir/msmon" query --db "$work/s.db" --kind grad_reduced --op norm --rank 1 --steps 20 | grep -q ",nan$" ||
  fail "query: no NaN at step 20 on rank 1"
bare "$dir/msmon" anomalies --db "$work/s.db" | grep -q "NonFinite" || fail "anomalies: the planted NaN was not found"
bare "$dir/msmon" health --db "$work/s.db" > /dev/null || fail "health"
bare "$dir/msmon-tui" --db "$work/s.db" --snapshot overview --size 100x30 > "$work/frame.txt" || fail "tui snapshot"
grep -q "Overview" "$work/frame.txt" || fail "tui snapshot: $(head -3 "$work/frame.txt")"
echo "package-test ($arch): static programs, simulate -> ingest -> query -> anomalies -> health -> TUI snapshot: ok"
