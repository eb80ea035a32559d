#!/usr/bin/env bash
# Runs judge_bench against a throw-away clickhouse-server (bench/with_clickhouse.sh) at each rank count given
# (default 256 1024 4096) and prints one JSON document per run.
# Usage: bench/judge_bench.sh [BUILD_DIR] [RANKS...]
set -euo pipefail
build=${1:-build}
shift || true
for ranks in "${@:-256 1024 4096}"; do
  for r in $ranks; do
    "$(dirname "$0")/with_clickhouse.sh" msmon_judge_bench "$build/bench/judge_bench" --msmon "$build/msmon" \
      --ranks "$r" --tensors 200 --steps 12
  done
done
