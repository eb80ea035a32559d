#!/usr/bin/env bash
# Installs what is missing, configures and builds msmon into ./build (Release, warnings as errors).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DMSMON_WERROR=ON >/dev/null
cmake --build build -j"$(nproc)" "$@"
