#!/usr/bin/env bash
# Installs what the whole-job tests and benchmark start on loopback (Debian 12): clickhouse-server 18.16 (the
# tests run their own server on a free port with a temp data folder, never the system service),
# prometheus-node-exporter and promtool (package prometheus). Big (~200 MB); idempotent, quiet when present.
# MSMON_SKIP_CLUSTER_DEPS=1 skips it: those tests then skip with a message.
set -euo pipefail
[ "${MSMON_SKIP_CLUSTER_DEPS:-0}" = 1 ] && exit 0

packages=(clickhouse-server clickhouse-client prometheus-node-exporter prometheus)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "setup-cluster-deps: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
# The packages may start their system services on a machine with an init; the tests do not use them.
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
