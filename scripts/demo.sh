#!/usr/bin/env bash
# Builds msmon and opens msmon-tui on a live demo run: the built-in simulator writes an 8-rank job's msprobe
# output with activations (a loss spike at step 20, a NaN in layer 1's MLP output on rank 3 at step 35 that
# reaches every rank, the job restarting after step 40 from step 30), MindFormers logs and TensorBoard event
# files (the run config, MoE expert load with a router collapsing onto one expert from step 10) while the TUI
# follows it. q quits.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
exec ./build/msmon-tui --demo "$@"
