#!/usr/bin/env bash
# Builds and runs the benchmarks; each prints one JSON document. Fixed inputs; medians over repeats.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
./build/bench/detection_bench --shared ../shared
./build/bench/ingest_bench --repeats "${REPEATS:-5}"
./build/bench/event_file_bench --repeats "${REPEATS:-5}"
./build/bench/query_scale_bench --max-values "${QUERY_SCALE_MAX_VALUES:-1e7}" --repeats "${REPEATS:-5}"
./build/bench/layers_bench --repeats "${REPEATS:-5}"
./build/bench/live_latency_bench --ranks 64 --seconds "${LATENCY_SECONDS:-20}"
if [ -x ./build/bench/render_bench ]; then
  ./build/bench/render_bench --benchmark_format=json --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
fi
bash bench/tui_live_bench.sh build 20
bash bench/layout_scale_bench.sh build "${LAYOUT_RANKS:-4096}" "${LAYOUT_FILES_PER_RANK:-49}"
bash bench/memory_bench.sh build "${MEMORY_RANKS:-2000}" "${MEMORY_FILES_PER_RANK:-100}"
# Opening a long run (4.3 GB of CSVs under $TMPDIR unless BACKLOG names one made before; ~15 min: ingest and the
# TUI five times each, REPS to change).
bash bench/backlog_bench.sh build "${BACKLOG_RANKS:-64}" "${BACKLOG_STEPS:-400}" "${BACKLOG_PARAMS:-64}"
if [ -x build-static-x86_64/msmon ]; then  # scripts/package.sh builds it
  bash bench/static_startup_bench.sh build build-static-x86_64 "${STARTUP_REPEATS:-21}"
else
  echo "no static build (scripts/package.sh makes build-static-x86_64): static startup benchmark skipped" >&2
fi
if command -v clickhouse-server >/dev/null 2>&1 || [ -x /usr/sbin/clickhouse-server ]; then
  bash bench/clickhouse_ship_bench.sh build
  bash bench/clickhouse_query_bench.sh build --ranks 128 --names 40 --steps 2000 --repeats "${REPEATS:-5}"
else
  echo "clickhouse-server is not installed (scripts/setup-cluster-deps.sh): ClickHouse benchmarks skipped" >&2
fi
