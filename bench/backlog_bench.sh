#!/usr/bin/env bash
# Opening a long run (issue 37): a backlog made by `msmon simulate OUT --ranks R --steps S --params P --xy` (default
# 64 x 400 x 64: 204,672 files, 4.3 GB), read once by `msmon ingest` and once by msmon-tui in a real terminal (tmux),
# each on a store of its own. Prints one JSON document:
#   ingest_s, ingest_peak_rss_mb          msmon ingest of the whole folder (wall time; peak RSS from wait4)
#   tui_every_rank_newest_s               msmon-tui started → every rank's newest step in the store (each kind's
#                                         newest block holds every rank: rank_block) and the status line showing
#                                         every rank and the last step. Target: <= 2 s
#   tui_whole_s, tui_vs_ingest            → the whole backlog read, committed and judged (the idle signal's first
#                                         caught-up line, MSMON_TUI_EVENTS), and that over ingest_s. Target: <= 1.1
#   tui_peak_rss_mb                       VmHWM of msmon-tui just before it quits
#   incidents_equal                       msmon anomalies --incidents of both stores, compared
# Usage: bench/backlog_bench.sh BUILD_DIR [RANKS] [STEPS] [PARAMS]; BACKLOG=DIR reuses a backlog made before with the
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
python3 - "$build" "$work" "$backlog" "$ranks" "$steps" "$params" "$sock" <<'PY'
import json, os, re, sqlite3, subprocess, sys, time

build, work, backlog, ranks, steps, params, sock = sys.argv[1:8]
ranks, steps, params = int(ranks), int(steps), int(params)
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

# 1. msmon ingest, one shot.
ingest_db = os.path.join(work, "ingest.db")
start = time.monotonic()
p = subprocess.Popen([msmon, "ingest", backlog, "--db", ingest_db], stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, env=env)
_, status, usage = os.wait4(p.pid, 0)
ingest_s = time.monotonic() - start
if status != 0:
    sys.exit("msmon ingest failed: status %d" % status)
ingest_rss_mb = usage.ru_maxrss / 1024

# 2. msmon-tui in tmux, on a store of its own.
tui_db = os.path.join(work, "tui.db")
events = os.path.join(work, "events")
kinds = None

def tmux(*args):
    return subprocess.run(["tmux", "-L", sock, *args], capture_output=True, text=True).stdout

def newest_in_store():
    """Every kind's newest block holds every rank (rank_block's key: a cheap read while the TUI writes)."""
    if not os.path.exists(tui_db):
        return False
    try:
        c = sqlite3.connect("file:%s?mode=ro" % tui_db, uri=True, timeout=0.05)
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

cmd = "env LANG=C.UTF-8 LC_ALL=C.UTF-8 TERM=xterm-256color XDG_STATE_HOME=%s MSMON_TUI_EVENTS=%s %s %s --db %s" % (
    os.path.join(work, "state"), events, tui, backlog, tui_db)
start = time.monotonic()
start_ns = time.monotonic_ns()
subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", "new-session", "-d", "-x", "160", "-y", "45", cmd], check=True)
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
    if ("%d ranks" % ranks) in line and ("-%d" % last) in line and newest_in_store():
        every_rank_s = time.monotonic() - start
        status_seen = line.strip()
    time.sleep(0.02)

def caught_up_ns():
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

whole_ns = None
peak_kb = -1
while whole_ns is None and time.monotonic() - start < 1200:
    if pid:
        peak_kb = max(peak_kb, vm_hwm_kb(pid))
    line = status_line()
    if "history:" in line and (not history_lines or history_lines[-1] != line.strip()):
        history_lines.append(line.strip())
    whole_ns = caught_up_ns()
    time.sleep(0.1)
if pid:
    peak_kb = max(peak_kb, vm_hwm_kb(pid))
tmux("send-keys", "q")
for _ in range(100):
    if not tmux("list-panes"):
        break
    time.sleep(0.1)
tmux("kill-server")

def incidents(db):
    r = subprocess.run([msmon, "anomalies", "--db", db, "--incidents", "--format", "json"], capture_output=True,
                       text=True, env=env)
    return [(i["rule"], i["rank"], i["step"], i["kind"], i["name"]) for i in json.loads(r.stdout or "[]")]

tui_whole_s = (whole_ns - start_ns) / 1e9 if whole_ns else None
print(json.dumps({
    "benchmark": "backlog",
    "backlog": {"ranks": ranks, "steps": steps, "params": params, "files": files},
    "ingest_s": round(ingest_s, 2),
    "ingest_peak_rss_mb": round(ingest_rss_mb, 1),
    "tui_every_rank_newest_s": round(every_rank_s, 2) if every_rank_s is not None else None,
    "tui_status_then": status_seen,
    "tui_history_lines": history_lines[:3] + history_lines[-2:] if len(history_lines) > 5 else history_lines,
    "tui_whole_s": round(tui_whole_s, 2) if tui_whole_s else None,
    "tui_vs_ingest": round(tui_whole_s / ingest_s, 3) if tui_whole_s else None,
    "tui_peak_rss_mb": round(peak_kb / 1024, 1),
    "incidents_equal": incidents(ingest_db) == incidents(tui_db),
    "targets": {"tui_every_rank_newest_s": 2.0, "tui_vs_ingest": 1.1, "peak_rss_mb": 200},
}, indent=2))
PY
