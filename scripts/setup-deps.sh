#!/usr/bin/env bash
# Installs the Debian 12 packages msmon needs to build and test. Idempotent; quiet when all is present.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ccache  # ccache: CI rebuilds the same sources in five trees, run after run
  libsqlite3-dev sqlite3 libncurses-dev nlohmann-json3-dev libspdlog-dev libfmt-dev
  zlib1g-dev  # gzip bodies to and from ClickHouse
  libre2-dev  # patterns people type and the log parsers: linear time, no recursion
  libgtest-dev libgmock-dev libbenchmark-dev
  tmux python3 zsh  # zsh: the generated zsh completions are checked
  clang-format  # scripts/check-source.sh: the formatting CI checks
  clang libclang-rt-14-dev  # scripts/fuzz.sh: libFuzzer (libclang_rt.fuzzer) and the sanitizers
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
