#!/usr/bin/env bash
# Memory of the real `msmon ingest` process, from /proc/PID/status (VmRSS now, VmHWM peak):
#   follow:   RANKS rank folders × FILES_PER_RANK one-row CSVs (default 2,000 × 100 = 200,000 files) followed with
#             --follow until caught up and a row appended afterwards is stored; then the follower is stopped
#             and started again on the same store (a restart), until caught up again. With inotify and with
#             polling (--poll-ms 1000).
#   big_csv:  one valid CSV of 32, 96, 290 and 580 MB (16 tensors × 20k/60k/180k/360k steps), each ingested once:
#             the peak must level off, not grow with the file (values waiting for other ranks stay within
#             --cross-rank-memory, 16 MB by default; the SQLite caches and the batches in flight are bounded).
#   malformed: one CSV of ~24 MB whose every row is malformed, ingested once: memory, the parse issues stored,
#             and the size of msmon's own log (it must not rotate earlier logs away).
# Prints one JSON document. Usage: bench/memory_bench.sh BUILD_DIR [RANKS] [FILES_PER_RANK]
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
ranks=${2:-2000}
per_rank=${3:-100}
work=$(mktemp -d "${TMPDIR:-/tmp}/msmon-memory-bench-XXXXXX")
trap 'pkill -P $$ 2>/dev/null || true; rm -rf "$work"' EXIT
exec python3 - "$build" "$work" "$ranks" "$per_rank" <<'PY'
import json, os, signal, subprocess, sys, time

build, work, ranks, per = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
msmon = os.path.join(build, "msmon")
head = "vpp_stage,name,step,min,max,norm,mean,nans,zeros,shape,dtype\n"
env = dict(os.environ, XDG_STATE_HOME=os.path.join(work, "state"), XDG_CACHE_HOME=os.path.join(work, "cache"))

def row(name, step, norm):
    return '0,%s,%d,-1.0,1.0,%r,0.0,0,0.0,"[16, 16]",torch.float32\n' % (name, step, norm)

def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1

def stored(db, rank, step):
    r = subprocess.run([msmon, "query", "--db", db, "--rank", str(rank), "--steps", str(step), "--op", "norm"],
                       capture_output=True, text=True, env=env)
    return "weight" in r.stdout

def run_dir(r):
    return os.path.join(work, "job", "monitor_output", "Nov22_10-00-00-rank%d-%08x" % (r, r))

def follow_until_caught_up(db, appended_step, extra=()):
    """Starts a follower, waits until the last file and then a freshly appended row are stored; returns its pid."""
    p = subprocess.Popen([msmon, "ingest", os.path.join(work, "job"), "--follow", "--db", db, "--json", *extra],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    start = time.monotonic()
    while not (os.path.exists(db) and stored(db, ranks - 1, per - 1)):
        time.sleep(0.2)
    last = os.path.join(run_dir(ranks - 1), "grad_reduced_%d-%d.csv" % (per - 1, per - 1))
    with open(last, "a") as f:
        f.write(row("module.layer.weight", appended_step, 0.5))
    while not stored(db, ranks - 1, appended_step):
        time.sleep(0.05)
    caught_up = time.monotonic() - start
    time.sleep(2)  # settled: batches committed, nothing in flight
    return p, caught_up

def measure(p):
    return {"rss_kb": status_kb(p.pid, "VmRSS"), "peak_rss_kb": status_kb(p.pid, "VmHWM")}

def stop(p):
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)

def peak_of(args):
    p = subprocess.Popen([msmon] + args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    out = p.stdout.read()
    _, _, usage = os.wait4(p.pid, 0)
    return usage.ru_maxrss, out.decode()

# ---- follow: 200,000 files, then a restart ----
for r in range(ranks):
    d = run_dir(r)
    os.makedirs(d)
    for s in range(per):
        with open(os.path.join(d, "grad_reduced_%d-%d.csv" % (s, s)), "w") as f:
            f.write(head + row("module.layer.weight", s, 0.5))
follow = {"files": ranks * per, "rank_folders": ranks}
for mode, extra, step in (("inotify", (), per), ("polling_1000ms", ("--poll-ms", "1000"), per + 2)):
    db = os.path.join(work, "follow-%s.db" % mode)
    p, first_s = follow_until_caught_up(db, step, extra)
    first = measure(p)
    stop(p)
    p, restart_s = follow_until_caught_up(db, step + 1, extra)
    restart = measure(p)
    stop(p)
    follow[mode] = {"caught_up": {"seconds": round(first_s, 2), **first},
                    "restart": {"seconds": round(restart_s, 2), **restart}}

# ---- one valid CSV of growing size: peak memory must level off, not grow with the file ----
big_csv = []
for steps in (20000, 60000, 180000, 360000):
    name = "big%d" % steps
    big_dir = os.path.join(work, name, "monitor_output", "Nov22_10-00-00-rank0-0000abcd")
    os.makedirs(big_dir)
    big = os.path.join(big_dir, "grad_reduced_0-%d.csv" % (steps - 1))
    with open(big, "w") as f:
        f.write(head)
        for s in range(steps):
            f.write("".join(row("module.layers.%d.mlp.linear_fc1.weight" % t, s, 0.5 + s * 1e-6 + t) for t in range(16)))
    peak, out = peak_of(["ingest", os.path.join(work, name), "--db", os.path.join(work, name + ".db"), "--json"])
    big_csv.append({"bytes": os.path.getsize(big), "rows": steps * 16, "peak_rss_kb": peak,
                    "cross_rank_waiting_peak_bytes": json.loads(out).get("cross_rank_waiting_peak_bytes")})
    os.remove(big)

# ---- 24 MB of malformed rows ----
bad_dir = os.path.join(work, "bad", "monitor_output", "Nov22_10-00-00-rank0-0000abcd")
os.makedirs(bad_dir)
bad = os.path.join(bad_dir, "grad_reduced_0-9.csv")
line = "0,module.layer.weight,notastep,-1.0,1.0,zz,0.0,0,0.0,\"[16, 16]\",torch.float32\n"
with open(bad, "w") as f:
    f.write(head)
    n_bad = (24 << 20) // len(line)
    f.write(line * n_bad)
bad_db = os.path.join(work, "bad.db")
bad_peak, bad_out = peak_of(["ingest", os.path.join(work, "bad"), "--db", bad_db, "--json"])
stored_issues = int(subprocess.run(["sqlite3", bad_db, "SELECT count(*) FROM parse_issue"], capture_output=True,
                                   text=True).stdout.strip() or -1)
log_bytes = sum(os.path.getsize(os.path.join(dp, f)) for dp, _, fs in os.walk(os.path.join(work, "state"))
                for f in fs)
try:
    counted = json.loads(bad_out).get("errors")
except ValueError:
    counted = None

print(json.dumps({
    "benchmark": "memory",
    "follow": follow,
    "big_csv": big_csv,
    "malformed": {"bytes": os.path.getsize(bad), "lines": n_bad, "counted": counted, "stored_issues": stored_issues,
                  "peak_rss_kb": bad_peak, "msmon_state_bytes": log_bytes},
    "target": "follower RSS <= 100 MB after 200k files and at restart; one file's memory bounded by a constant; "
              "malformed lines stored up to a cap per file, the rest counted",
}, indent=2))
PY
