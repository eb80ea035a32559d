#!/usr/bin/env bash
# msmon-tui in a real terminal (tmux): idle CPU over 10 s with no new data, and newline-to-screen latency
# (a new step appended to a CSV until it shows in the status of the overview). Prints one JSON document.
# Usage: bench/tui_live_bench.sh BUILD_DIR [SAMPLES]
set -euo pipefail
build=${1:-build}
samples=${2:-20}
work=$(mktemp -d "${TMPDIR:-/tmp}/msmon-tui-bench-XXXXXX")
sock="msmon-bench-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
"$build/msmon" simulate "$work/job" --ranks 8 --steps 50 --params 8 >/dev/null
tmux -L "$sock" -f /dev/null new-session -d -x 120 -y 40 \
  "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color XDG_STATE_HOME=$work/state $build/msmon-tui $work/job --db $work/store.db"
until tmux -L "$sock" capture-pane -p | grep -q "steps 0-49"; do sleep 0.05; done
pid=$(pgrep -n -x msmon-tui)
hz=$(getconf CLK_TCK)
t0=$(awk '{print $14+$15}' "/proc/$pid/stat")
sleep 10
t1=$(awk '{print $14+$15}' "/proc/$pid/stat")
idle_pct=$(python3 -c "print(round(($t1-$t0)/$hz/10*100, 3))")
dir=$(dirname "$(ls "$work"/job/monitor_output/*rank0*/grad_reduced_0-0.csv)")
lat=()
for i in $(seq 1 "$samples"); do
  step=$((49 + i))
  start=$(date +%s%N)
  printf 'vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype\n0,module.module.embedding.word_embeddings.weight,%d,-1.0,1.0,0.5,0.0,0,0.0,"[25216, 1024]",torch.float32\n' "$step" \
    > "$dir/grad_reduced_$step-$step.csv"
  until tmux -L "$sock" capture-pane -p | grep -q "steps 0-$step\b"; do :; done
  lat+=($(( ($(date +%s%N) - start) / 1000000 )))
  sleep 0.2
done
python3 - "$idle_pct" "${lat[@]}" <<'PY'
import json, sys, statistics
idle = float(sys.argv[1]); lat = sorted(int(x) for x in sys.argv[2:])
p = lambda q: lat[min(len(lat) - 1, int(round(q * (len(lat) - 1))))]
print(json.dumps({"benchmark": "tui_live", "idle_cpu_percent_10s": idle, "samples": len(lat),
                  "newline_to_screen_ms_median": statistics.median(lat), "newline_to_screen_ms_p99": p(0.99),
                  "newline_to_screen_ms_max": lat[-1], "note": "latency includes tmux capture-pane polling"}, indent=2))
PY
