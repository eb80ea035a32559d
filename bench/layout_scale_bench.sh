#!/usr/bin/env bash
# Layout scale: RANKS rank folders and FILES_PER_RANK CSV files each (default 4,096 × 49 ≈ 200,000 files), one
# row per file. Measures, for inotify and for polling, the start-up of `msmon ingest --follow` until every file is
# read and a new row appended afterwards is stored, plus the process's open descriptors and threads once
# running. Prints one JSON document. Usage: bench/layout_scale_bench.sh BUILD_DIR [RANKS] [FILES_PER_RANK]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
ranks=${2:-4096}
per_rank=${3:-49}
work=$(mktemp -d "${TMPDIR:-/tmp}/msmon-layout-bench-XXXXXX")
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$work"' EXIT
python3 - "$work/job/monitor_output" "$ranks" "$per_rank" <<'PY'
import os, sys
root, ranks, per = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
head = "vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype\n"
for r in range(ranks):
    d = os.path.join(root, "Nov22_10-00-00-rank%d-%08x" % (r, r))
    os.makedirs(d)
    for s in range(per):
        with open(os.path.join(d, "grad_reduced_%d-%d.csv" % (s, s)), "w") as f:
            f.write(head + '0,module.layer.weight,%d,-1.0,1.0,0.5,0.0,0,0.0,"[16, 16]",torch.float32\n' % s)
PY
files=$((ranks * per_rank))
run_mode() {  # $1: extra ingest flags; prints "startup_ms fds threads rows"
  local db="$work/store-$2.db"
  rm -f "$db"*
  local start=$(date +%s%N)
  XDG_STATE_HOME="$work/state" "$build/msmon" ingest "$work/job" --follow --db "$db" $1 >"$work/out-$2.log" 2>&1 &
  local pid=$!
  # Caught up: the last rank's last file is in the store.
  local last="$work/job/monitor_output/Nov22_10-00-00-rank$((ranks - 1))-$(printf %08x $((ranks - 1)))"
  until [ -f "$db" ] && "$build/msmon" query --db "$db" --rank $((ranks - 1)) --steps $((per_rank - 1)) --op norm 2>/dev/null | grep -q weight; do sleep 0.2; done
  # A new row after start-up must arrive too.
  printf '0,module.layer.weight,%d,-1.0,1.0,0.5,0.0,0,0.0,"[16, 16]",torch.float32\n' "$per_rank" >>"$last/grad_reduced_$((per_rank - 1))-$((per_rank - 1)).csv"
  until "$build/msmon" query --db "$db" --rank $((ranks - 1)) --steps "$per_rank" --op norm 2>/dev/null | grep -q weight; do sleep 0.05; done
  local end=$(date +%s%N)
  local fds=$(ls "/proc/$pid/fd" | wc -l)
  local threads=$(awk '/^Threads/{print $2}' "/proc/$pid/status")
  local rss=$(awk '/^VmHWM/{print $2}' "/proc/$pid/status")
  kill -TERM "$pid"; wait "$pid" || true
  echo "$(( (end - start) / 1000000 )) $fds $threads $rss"
}
read -r ino_ms ino_fds ino_threads ino_rss < <(run_mode "" inotify)
read -r poll_ms poll_fds poll_threads poll_rss < <(run_mode "--poll-ms 1000" polling)
python3 - <<PY
import json
print(json.dumps({"benchmark": "layout_scale", "rank_folders": $ranks, "files": $files,
  "inotify": {"startup_to_caught_up_and_live_ms": $ino_ms, "open_fds": $ino_fds, "threads": $ino_threads, "peak_rss_kb": $ino_rss},
  "polling_1000ms": {"startup_to_caught_up_and_live_ms": $poll_ms, "open_fds": $poll_fds, "threads": $poll_threads, "peak_rss_kb": $poll_rss},
  "target": "start-up under 5000 ms; no per-file thread or descriptor"}, indent=2))
PY
