#!/usr/bin/env bash
# Builds everything and runs every test (unit, store, end-to-end through the real programs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
