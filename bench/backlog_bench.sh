#!/usr/bin/env bash
# Opening a long run (issue 37): a backlog made by `msmon simulate OUT --ranks R --steps S --params P --xy` (default
# 64 x 400 x 64: 204,672 files, 4.3 GB), read once by `msmon ingest` and once by msmon-tui in a real terminal (tmux),
# each on a store of its own, the two taking turns REPS times (default 5; medians reported, each run listed too).
# Prints one JSON document:
#   ingest_s, ingest_peak_rss_mb          msmon ingest of the whole folder (wall time; peak RSS from wait4)
#   tui_every_rank_newest_s               msmon-tui started → every rank's newest step in the store (each kind's
#                                         newest block holds every rank: rank_block) and the status line showing
#                                         every rank and the last step. Target: <= 2 s
#   tui_whole_s, tui_vs_ingest            → the whole backlog read, committed and judged (the idle signal's first
#                                         caught-up line, MSMON_TUI_EVENTS), and that over the ingest run just before
#                                         it (the median of those ratios). Target: <= 1.1
#   tui_peak_rss_mb                       VmHWM of msmon-tui just before it quits (the largest of the runs)
#   incidents_equal                       msmon anomalies --incidents of both stores, compared
# Usage: [REPS=N] bench/backlog_bench.sh BUILD_DIR [RANKS] [STEPS] [PARAMS]; BACKLOG=DIR reuses a backlog made before with the
# same sizes (it is made there, and kept, when absent).
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
ranks=${2:-64}
steps=${3:-400}
params=${4:-64}
work=$(mktemp -d "${TMPDIR:-/tmp}/msmon-backlog-bench-XXXXXX")
sock="msmon-backlog-$$"
trap 'tmux -L "$sock" kill-server 2>/dev/null || true; rm -rf "$work"' EXIT
backlog=${BACKLOG:-$work/backlog}
python3 - "$build" "$work" "$backlog" "$ranks" "$steps" "$params" "$sock" "${REPS:-5}" <<'PY'
import json, os, re, sqlite3, statistics, subprocess, sys, time

build, work, backlog, ranks, steps, params, sock, reps = sys.argv[1:9]
ranks, steps, params, reps = int(ranks), int(steps), int(params), max(1, int(reps))
msmon, tui = os.path.join(build, "msmon"), os.path.join(build, "msmon-tui")
env = dict(os.environ, XDG_STATE_HOME=os.path.join(work, "state"), XDG_CACHE_HOME=os.path.join(work, "cache"))

if not os.path.isdir(os.path.join(backlog, "monitor_output")):
    subprocess.run([msmon, "simulate", backlog, "--ranks", str(ranks), "--steps", str(steps), "--params",
                    str(params), "--xy"], check=True, stdout=subprocess.DEVNULL, env=env)
files = sum(len(f) for _, _, f in os.walk(backlog))
last = steps - 1

# Warm the page cache once so that neither reader pays for the disk alone.
for root, _, names in os.walk(backlog):
    for n in names:
        with open(os.path.join(root, n), "rb") as f:
            while f.read(1 << 20):
                pass

def run_ingest(db):
    """msmon ingest, one shot: (wall seconds, peak RSS in MB)."""
    for f in (db, db + "-wal", db + "-shm"):
        if os.path.exists(f):
            os.remove(f)
    os.sync()  # the writeback of what the run before wrote is not this run's
    start = time.monotonic()
    p = subprocess.Popen([msmon, "ingest", backlog, "--db", db], stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    took = time.monotonic() - start
    if status != 0:
        sys.exit("msmon ingest failed: status %d" % status)
    return took, usage.ru_maxrss / 1024

def tmux(*args):
    return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True).stdout

def newest_in_store(db):
    """Every kind's newest block holds every rank (rank_block's key: a cheap read while the TUI writes)."""
    if not os.path.exists(db):
        return False
    try:
        c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=0.05)
        try:
            rows = c.execute("SELECT kind, count(DISTINCT rank) FROM rank_block WHERE block = ? GROUP BY kind",
                             (last >> 6,)).fetchall()
        finally:
            c.close()
    except sqlite3.Error:
        return False
    return len(rows) >= 8 and all(n == ranks for _, n in rows)

def status_line():
    lines = tmux("capture-pane", "-p").rstrip("\n").split("\n")
    return lines[-1] if lines else ""

def vm_hwm_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1

def caught_up_ns(events, start_ns):
    try:
        with open(events) as f:
            for line in f:
                # ingest=NS: every change made before NS is read, committed and drawn (0 before it caught up)
                m = re.match(r"idle t=(\d+) .*ingest=(\d+)", line)
                if m and int(m.group(2)) > start_ns:
                    return int(m.group(1))
    except OSError:
        pass
    return None

def run_tui(db, events):
    """msmon-tui in tmux on a store of its own: every rank's newest step, the whole backlog, peak RSS."""
    for f in (db, db + "-wal", db + "-shm", events):
        if os.path.exists(f):
            os.remove(f)
    cmd = "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color XDG_STATE_HOME=%s MSMON_TUI_EVENTS=%s %s %s --db %s" % (
        os.path.join(work, "state"), events, tui, backlog, db)
    os.sync()
    start = time.monotonic()
    start_ns = time.monotonic_ns()
    subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "45", cmd],
                   check=True)
    pid = None
    every_rank_s = None
    status_seen = ""
    history_lines = []
    while every_rank_s is None and time.monotonic() - start < 600:
        if pid is None:
            out = tmux("list-panes", "-F", "#{pane_pid}").split()  # env execs msmon-tui: the pane's process
            if out:
                pid = int(out[0])
        line = status_line()
        if "history:" in line:
            history_lines.append(line.strip())
        if ("%d ranks" % ranks) in line and ("-%d" % last) in line and newest_in_store(db):
            every_rank_s = time.monotonic() - start
            status_seen = line.strip()
        time.sleep(0.02)
    # From here the program's own idle signal times the run: the watcher reads two small files ten times a second
    # and looks at the screen once a second (a tmux client each time takes CPU that msmon-tui, on 2 cores, needs).
    whole_ns = None
    peak_kb = -1
    looked_at = 0.0
    while whole_ns is None and time.monotonic() - start < 1200:
        if pid:
            peak_kb = max(peak_kb, vm_hwm_kb(pid))
        if time.monotonic() - looked_at >= 1.0:
            looked_at = time.monotonic()
            line = status_line()
            if "history:" in line and (not history_lines or history_lines[-1] != line.strip()):
                history_lines.append(line.strip())
        whole_ns = caught_up_ns(events, start_ns)
        time.sleep(0.1)
    if pid:
        peak_kb = max(peak_kb, vm_hwm_kb(pid))
    tmux("send-keys", "q")
    for _ in range(100):
        if not tmux("list-panes"):
            break
        time.sleep(0.1)
    tmux("kill-server")
    return {
        "every_rank_newest_s": every_rank_s,
        "status_then": status_seen,
        "history_lines": history_lines[:3] + history_lines[-2:] if len(history_lines) > 5 else history_lines,
        "whole_s": (whole_ns - start_ns) / 1e9 if whole_ns else None,
        "peak_rss_mb": peak_kb / 1024,
    }

def incidents(db):
    r = subprocess.run([msmon, "anomalies", "--db", db, "--incidents", "--format", "json"], capture_output=True,
                       text=True, env=env)
    return [(i["rule"], i["rank"], i["step"], i["kind"], i["name"]) for i in json.loads(r.stdout or "[]")]

# The two readers take turns, REPS times: this machine is shared and its speed drifts by 10-20% over minutes, so
# each TUI run is set against the ingest run just before it, and the medians are what is reported.
ingest_db, tui_db, events = (os.path.join(work, n) for n in ("ingest.db", "tui.db", "events"))
ingests, tuis = [], []
for _ in range(reps):
    ingests.append(run_ingest(ingest_db))
    tuis.append(run_tui(tui_db, events))
    if tuis[-1]["whole_s"] is None or tuis[-1]["every_rank_newest_s"] is None:
        break
ratios = [t["whole_s"] / i[0] for i, t in zip(ingests, tuis) if t["whole_s"]]
newest = [t["every_rank_newest_s"] for t in tuis if t["every_rank_newest_s"] is not None]
r2 = lambda v: round(v, 2) if v is not None else None
median = lambda v: statistics.median(v) if v else None
print(json.dumps({
    "benchmark": "backlog",
    "backlog": {"ranks": ranks, "steps": steps, "params": params, "files": files},
    "reps": len(tuis),
    "ingest_s": r2(median([i[0] for i in ingests])),
    "ingest_runs_s": [r2(i[0]) for i in ingests],
    "ingest_peak_rss_mb": r2(max(i[1] for i in ingests)),
    "tui_every_rank_newest_s": r2(median(newest)),
    "tui_every_rank_newest_runs_s": [r2(v) for v in newest],
    "tui_status_then": tuis[-1]["status_then"],
    "tui_history_lines": tuis[-1]["history_lines"],
    "tui_whole_s": r2(median([t["whole_s"] for t in tuis if t["whole_s"]])),
    "tui_whole_runs_s": [r2(t["whole_s"]) for t in tuis],
    "tui_vs_ingest": round(median(ratios), 3) if ratios else None,
    "tui_vs_ingest_runs": [round(r, 3) for r in ratios],
    "tui_peak_rss_mb": r2(max(t["peak_rss_mb"] for t in tuis)),
    "incidents_equal": incidents(ingest_db) == incidents(tui_db),
    "targets": {"tui_every_rank_newest_s": 2.0, "tui_vs_ingest": 1.1, "peak_rss_mb": 200},
}, indent=2))
PY
