#!/usr/bin/env bash
# Starts a throw-away clickhouse-server on a free loopback port (temp data folder, not the system service), runs
# COMMAND with "--clickhouse clickhouse://127.0.0.1:PORT/DATABASE" appended, and stops the server.
# Usage: bench/with_clickhouse.sh DATABASE COMMAND [ARGS...]
set -euo pipefail
database=$1
shift
server=$(command -v clickhouse-server || echo /usr/sbin/clickhouse-server)
[ -x "$server" ] || { echo "clickhouse-server is not installed (scripts/setup-cluster-deps.sh)" >&2; exit 1; }
dir=$(mktemp -d /tmp/msmon-ch-bench-XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
tcp=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$dir/config.xml" <<XML
<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>$dir/server.log</log><errorlog>$dir/server.err.log</errorlog><console>0</console></logger>
  <http_port>$port</http_port><tcp_port>$tcp</tcp_port><listen_host>127.0.0.1</listen_host>
  <path>$dir/data/</path><tmp_path>$dir/data/tmp/</tmp_path><user_files_path>$dir/data/user_files/</user_files_path>
  <format_schema_path>$dir/data/format_schemas/</format_schema_path>
  <users_config>$dir/users.xml</users_config><default_profile>default</default_profile><default_database>default</default_database>
  <mark_cache_size>67108864</mark_cache_size><uncompressed_cache_size>67108864</uncompressed_cache_size>
</yandex>
XML
cat > "$dir/users.xml" <<XML
<?xml version="1.0"?>
<yandex><profiles><default></default></profiles>
<users><default><password></password><networks><ip>127.0.0.1</ip></networks><profile>default</profile><quota>default</quota></default></users>
<quotas><default></default></quotas></yandex>
XML
"$server" --config-file="$dir/config.xml" >/dev/null 2>&1 &
pid=$!
# (wait's 137 for the killed server must not end the script under set -e: the folder is removed, the status kept)
trap 'kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null || true; rm -rf "$dir"' EXIT
for _ in $(seq 1 300); do
  [ "$(python3 -c "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:$port/').read().decode().strip())" 2>/dev/null)" = "Ok." ] && break
  sleep 0.1
done
"$@" --clickhouse "clickhouse://127.0.0.1:$port/$database"
