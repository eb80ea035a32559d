#!/usr/bin/env bash
# Builds msmon, starts a simulated 8-rank training run that writes msprobe output live (a loss spike at
# step 40, a NaN gradient at step 70), and follows it with `msmon ingest --follow`. Ctrl-C ends both.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh >/dev/null
demo=$(mktemp -d "${TMPDIR:-/tmp}/msmon-demo-XXXXXX")
./build/msmon simulate "$demo/job" --ranks 8 --params 24 --steps 100000 --step-ms 500 \
    --faults spike@40,nan@70:r3 >/dev/null &
sim=$!
trap 'kill $sim 2>/dev/null; wait $sim 2>/dev/null; echo "demo run kept in $demo"' EXIT
echo "simulated run: $demo/job (8 ranks, one step every 0.5 s); following it, Ctrl-C to stop"
echo "try in another shell: ./build/msmon query --db $demo/store.db --kind grad_reduced --op norm --steps 40 --rank 3"
./build/msmon ingest "$demo/job" --follow --db "$demo/store.db"
