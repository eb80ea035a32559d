#!/usr/bin/env bash
# What scripts/package.sh needs beyond scripts/setup-deps.sh: Debian's aarch64 cross toolchain, the :arm64 -dev
# packages of msmon's libraries (multiarch), qemu-user to run the aarch64 programs here, and dpkg-deb/file.
# Idempotent; quiet when all is present.
set -euo pipefail
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  "${sudo_cmd[@]}" dpkg --add-architecture arm64
  "${sudo_cmd[@]}" apt-get update -qq
fi
packages=(
  crossbuild-essential-arm64 qemu-user-static file dpkg-dev
  libsqlite3-dev:arm64 libncurses-dev:arm64 libspdlog-dev:arm64 libfmt-dev:arm64 libre2-dev:arm64 zlib1g-dev:arm64
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "setup-package-deps: installing ${missing[*]}" >&2
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
