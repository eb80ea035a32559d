#!/usr/bin/env bash
# The static programs against the dynamic ones (the target: no slower than 1.1x): the TUI's first frame
# (msmon-tui --snapshot overview) and `msmon query` for one step, both on a store of about 10^6 values, each
# command run REPEATS times, the two builds alternating. Prints one JSON document with the medians and the ratios.
# Usage: bench/static_startup_bench.sh DYNAMIC_BUILD STATIC_BUILD [REPEATS]
#   e.g. bench/static_startup_bench.sh build build-static-x86_64 21   (scripts/package.sh makes the static one)
set -euo pipefail
dynamic=${1:-build}
static=${2:-build-static-x86_64}
repeats=${3:-21}
work=$(mktemp -d "${TMPDIR:-/tmp}/msmon-startup-bench-XXXXXX")
trap 'rm -rf "$work"' EXIT
"$dynamic/msmon" simulate "$work/job" --ranks 4 --steps 400 --params 13 > /dev/null
XDG_STATE_HOME="$work/state" "$dynamic/msmon" ingest "$work/job" --db "$work/store.db" --json > "$work/ingest.json"
python3 - "$dynamic" "$static" "$repeats" "$work" <<'PY'
import json, os, statistics, subprocess, sys, time
dynamic, static, repeats, work = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
values = json.load(open(os.path.join(work, "ingest.json")))["values"]
env = dict(os.environ, XDG_STATE_HOME=os.path.join(work, "state"), LANG="C.UTF-8", LC_ALL="C.UTF-8")
store = os.path.join(work, "store.db")
commands = {
    "tui_snapshot_first_frame": lambda b: [f"{b}/msmon-tui", "--db", store, "--snapshot", "overview", "--size", "120x40"],
    "query_one_step": lambda b: [f"{b}/msmon", "query", "--db", store, "--kind", "grad_reduced", "--steps", "200"],
}
def once(argv):
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t0) * 1000
out = {"benchmark": "static_startup", "store_values": values, "repeats": repeats}
for name, argv in commands.items():
    once(argv(dynamic)); once(argv(static))  # warm the page cache for both
    times = {"dynamic": [], "static": []}
    for _ in range(repeats):
        times["dynamic"].append(once(argv(dynamic)))
        times["static"].append(once(argv(static)))
    d, s = statistics.median(times["dynamic"]), statistics.median(times["static"])
    out[name] = {"dynamic_ms_median": round(d, 2), "static_ms_median": round(s, 2), "static_over_dynamic": round(s / d, 3)}
print(json.dumps(out, indent=2))
PY
