#!/usr/bin/env bash
# Builds and runs the benchmarks; each prints one JSON document. Fixed inputs; medians over repeats.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh --target ingest_bench live_latency_bench >/dev/null
./build/bench/ingest_bench --repeats "${REPEATS:-5}"
./build/bench/live_latency_bench --ranks 64 --seconds "${LATENCY_SECONDS:-20}"
