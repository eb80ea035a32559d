#!/usr/bin/env bash
# Builds msmon and opens msmon-tui on a live demo run: the built-in simulator writes an 8-rank job's msprobe
# output (a loss spike at step 20, a NaN gradient on rank 3 at step 35), MindFormers logs and TensorBoard event
# files (the run config, MoE expert load with a router collapsing onto one expert from step 10) while the TUI
# follows it. q quits.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
exec ./build/msmon-tui --demo "$@"
