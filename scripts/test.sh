#!/usr/bin/env bash
# Builds everything and runs every test (unit, store, end-to-end through the real programs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-cluster-deps.sh  # clickhouse-server, node_exporter, promtool for tests/e2e/clickhouse_cluster_test.cpp
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
