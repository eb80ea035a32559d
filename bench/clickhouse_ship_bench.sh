#!/usr/bin/env bash
# Runs clickhouse_ship_bench against a throw-away clickhouse-server (bench/with_clickhouse.sh) and prints its JSON.
# Usage: bench/clickhouse_ship_bench.sh [BUILD_DIR] [ARGS...]
set -euo pipefail
build=${1:-build}
shift || true
exec "$(dirname "$0")/with_clickhouse.sh" msmon_bench "$build/bench/clickhouse_ship_bench" "$@"
