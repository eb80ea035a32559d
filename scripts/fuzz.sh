#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan+UBSan) into ./build-fuzz, seeds a corpus per target from the real
# fixtures (../shared/fixtures, configs/) and fuzz/seeds/, runs each target for FUZZ_SECONDS (default 60), and
# exits non-zero if any target crashed, leaked, hit UB or timed out. Targets run one per core (FUZZ_JOBS) at a time.
#   scripts/fuzz.sh                       # 60 s per target
#   FUZZ_SECONDS=600 scripts/fuzz.sh      # the long local run
#   scripts/fuzz.sh csv display_escape    # only these targets
# Crash inputs land in build-fuzz/fuzz/artifacts/<target>/; replay one with build-fuzz/fuzz/<target>_fuzz FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
seconds=${FUZZ_SECONDS:-60}
fixtures=${MSMON_FIXTURES:-$repo/../shared/fixtures}
build=$repo/build-fuzz
all_targets=(csv mindformers_log json_documents monitor_config display_escape tf_events)
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=("${all_targets[@]}")

# Bytes per input: above the parsers' 8 KiB regex cap, below what a libFuzzer iteration can afford.
declare -A max_len=([csv]=16384 [mindformers_log]=16384 [json_documents]=65536 [monitor_config]=8192
                    [display_escape]=4096 [tf_events]=8192)

CC=${CC:-clang} CXX=${CXX:-clang++} cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMSMON_FUZZ=ON \
  -DMSMON_BUILD_TESTS=OFF -DMSMON_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/%/_fuzz}"

corpus_root=$build/fuzz/corpus
mkdir -p "$corpus_root"
[ -d "$fixtures" ] || echo "fuzz: no fixtures at $fixtures; seeding from fuzz/seeds only" >&2

# Seeds: real fixture bytes (whole files, and small pieces so that the fuzzer starts from short inputs), plus
# the hand-written seeds in fuzz/seeds/<target>/. Existing corpus entries (found by earlier runs) are kept.
python3 - "$fixtures" "$repo" "$corpus_root" <<'PY'
import hashlib, json, os, sys
from pathlib import Path

fixtures, repo, root = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])

def put(target, data):
    d = root / target
    d.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode()
    (d / ("seed-" + hashlib.sha1(data).hexdigest())).write_bytes(data)

def files(pattern):
    return sorted(fixtures.glob(pattern)) if fixtures.is_dir() else []

def chunks(lines, n):
    for i in range(0, len(lines), n):
        yield b"".join(lines[i:i + n])

# csv: every msprobe CSV whole, and header + a few rows of each.
for f in files("msprobe-real/**/*.csv"):
    data = f.read_bytes()
    lines = data.splitlines(keepends=True)
    put("csv", lines[0] + b"".join(lines[1:4]) if len(lines) > 4 else data)
    if len(data) <= 16384:
        put("csv", data)

# mindformers_log: the rendered MindFormers logs and the msprobe console logs, whole and in pieces.
for f in files("mindformers-rendered/*.log") + files("msprobe-real/*/console.log"):
    lines = f.read_bytes().splitlines(keepends=True)
    if sum(map(len, lines)) <= 16384:
        put("mindformers_log", b"".join(lines))
    for piece in chunks(lines, 8):
        put("mindformers_log", piece)

# json_documents: first byte selects the reader (fuzz/json_documents_fuzz.cpp).
ANOMALY, HEALTH, MODULE_STRUCT, MESSAGE, TAG, CKPT_NAME = range(6)
def put_json(sel, data):
    put("json_documents", bytes([sel]) + (data if isinstance(data, bytes) else data.encode()))

for f in files("msprobe-real/**/anomaly*.json"):
    data = f.read_bytes()
    if len(data) <= 65536:
        put_json(ANOMALY, data)
    doc = json.loads(data)
    items = list(doc.items()) if isinstance(doc, dict) else []
    for i in range(0, min(len(items), 40), 4):
        put_json(ANOMALY, json.dumps(dict(items[i:i + 4]), indent=4))
    for _, rec in items[:20]:
        if isinstance(rec, dict):
            put_json(MESSAGE, str(rec.get("message", "")))
            put_json(TAG, str(rec.get("tag_name", "")))
for f in files("mindformers-rendered/health_ckpts.json"):
    data = f.read_bytes()
    put_json(HEALTH, data)
    for rec in json.loads(data):
        if isinstance(rec, dict) and "ckpt_name" in rec:
            put_json(CKPT_NAME, str(rec["ckpt_name"]))
for f in files("msprobe-real/**/module_struct.json"):
    put_json(MODULE_STRUCT, f.read_bytes())

# monitor_config: the project's configs and the configs the fixtures were recorded with.
for f in sorted((repo / "configs").glob("*.json")) + files("msprobe-real/*/config.json"):
    put("monitor_config", f.read_bytes())

# display_escape: two bytes of max_bytes (0xFFFF = no limit), then text: log lines, tags, names.
for f in files("mindformers-rendered/*.log")[:1] + files("msprobe-real/wg/console.log"):
    for line in f.read_bytes().splitlines()[:20]:
        put("display_escape", b"\xff\xff" + line)
        put("display_escape", b"\x00\x28" + line)

# tf_events: byte 0 is the mode (fuzz/tf_events_fuzz.cpp; even: raw file bytes, odd: <len><payload> records the
# harness frames). The real event files: their first records raw, and each small record's payload framed by the
# harness, a few to a seed.
import struct
for f in files("tensorboard-real/*/events.out.tfevents.*"):
    data = f.read_bytes()
    payloads, pos = [], 0
    while pos + 12 <= len(data) and len(payloads) < 400:
        (n,) = struct.unpack_from("<Q", data, pos)
        if pos + 16 + n > len(data):
            break
        payloads.append(data[pos + 12:pos + 12 + n])
        pos += 16 + n
    put("tf_events", b"\x00" + data[:4096])
    put("tf_events", b"\x10" + data[:8191])
    small = [p for p in payloads if len(p) < 256]
    for i in range(0, min(len(small), 120), 6):
        put("tf_events", b"\x01" + b"".join(bytes([len(p)]) + p for p in small[i:i + 6]))

# Hand-written seeds from the repository.
seeds = repo / "fuzz" / "seeds"
for d in sorted(seeds.iterdir()) if seeds.is_dir() else []:
    for f in sorted(d.iterdir()):
        put(d.name, f.read_bytes())
PY

# One target: its fuzzer for $seconds, then one summary line in $build/fuzz/<target>.result ("ok" or "FAILED ...").
fuzz_one() {
  local t=$1
  local bin=$build/fuzz/${t}_fuzz artifacts=$build/fuzz/artifacts/$t log=$build/fuzz/$t.log
  mkdir -p "$artifacts" "$corpus_root/$t"
  echo "fuzz: $t for ${seconds}s ($(ls "$corpus_root/$t" | wc -l) corpus files)" >&2
  local rc=0
  "$bin" "$corpus_root/$t" -max_total_time="$seconds" -detect_leaks=1 -timeout=25 -rss_limit_mb=2048 \
    -max_len="${max_len[$t]}" -print_final_stats=1 -artifact_prefix="$artifacts/" >"$log" 2>&1 || rc=$?
  local execs rate cov corp result
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1 || true)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1 || true)
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  corp=$(grep -oE 'corp: [0-9]+/[0-9]+[a-zA-Z]*' "$log" | tail -1 || true)
  if [ "$rc" -eq 0 ]; then
    result=ok
  else
    result="FAILED (exit $rc): $(grep -m1 -E 'ERROR:|runtime error|terminate called' "$log" || true)"
    grep -E 'Test unit written to' "$log" >&2 || true
  fi
  printf '%-16s %6ss  execs %-10s exec/s %-7s %-18s %-16s %s\n' "$t" "$seconds" "${execs:-?}" "${rate:-?}" \
    "${cov:-?}" "${corp:-?}" "$result" >"$build/fuzz/$t.result"
}

# One fuzzer per core at a time (each is one process on one core): every target still gets its $seconds.
parallel=${FUZZ_JOBS:-$(nproc)}
running=0
for t in "${targets[@]}"; do
  rm -f "$build/fuzz/$t.result"
  if [ "$running" -ge "$parallel" ]; then
    wait -n || true
    running=$((running - 1))
  fi
  fuzz_one "$t" &
  running=$((running + 1))
done
wait

failed=()
for t in "${targets[@]}"; do
  if [ ! -f "$build/fuzz/$t.result" ]; then
    echo "$t: no result (the fuzzing script itself failed)"
    failed+=("$t")
    continue
  fi
  cat "$build/fuzz/$t.result"
  grep -q ' ok$' "$build/fuzz/$t.result" || failed+=("$t")
done
if [ ${#failed[@]} -ne 0 ]; then
  echo "fuzz: crashes in: ${failed[*]} (logs in $build/fuzz/<target>.log)" >&2
  exit 1
fi
