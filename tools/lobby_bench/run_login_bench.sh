#!/usr/bin/env bash
# Guest logins per second against a real lobby + wallet on one Postgres, beside pgbench -S.
#   tools/lobby_bench/run_login_bench.sh --pg HOST:PORT [--bin build/bin] [--clients 32]
#       [--seconds 10] [--pool 16]
# A fresh database `lobbybench` (wallet and lobby schemas migrated), the wallet and the lobby
# on free loopback ports with a new key pair, then courtpiece-lobby-bench --mode=login twice:
# new devices (sign-up: player + wallet OpenAccount + tokens) and returning devices (sign-in
# again). Then `pgbench -i` on a scratch database `pgb` and `pgbench -S -c 8 -j 2 -T SECONDS`.
# The Postgres must be loopback; use one with fsync on for figures worth quoting.
set -euo pipefail
pg="" bin="build/bin" clients=32 seconds=10 pool=16
while [[ $# -gt 0 ]]; do
  case $1 in
    --pg) pg=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --pool) pool=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $pg ]] || { echo "--pg HOST:PORT is required" >&2; exit 2; }
case $pg in 127.0.0.1:*|localhost:*) ;; *) echo "--pg must be a loopback address" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/../.." && pwd)
url="postgresql://postgres@$pg"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{printf "%.1f", ($14 + $15) / hz}' "/proc/$1/stat"; }
wait_port() { for _ in $(seq 50); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; return 1; }

psql -q "$url/postgres" -c "DROP DATABASE IF EXISTS lobbybench" -c "CREATE DATABASE lobbybench"
for schema in wallet lobby; do
  "$bin/courtpiece-migrate" --pg-url "$url/lobbybench" --schema $schema \
    --dir "$root/services/$schema/migrations" >/dev/null
done
wallet_port=$(free_port)
COURTPIECE_PG_URL="$url/lobbybench" COURTPIECE_WALLET_ADDR="127.0.0.1:$wallet_port" \
  COURTPIECE_WALLET_METRICS_ADDR=off COURTPIECE_WALLET_PG_POOL_SIZE="$pool" \
  COURTPIECE_LOG_LEVEL=warn "$bin/courtpiece-wallet" &
wallet_pid=$!
lobby_port=$(free_port)
eval "$("$bin/courtpiece-keygen" --kid bench | sed 's/^/export /')"
COURTPIECE_PG_URL="$url/lobbybench" COURTPIECE_LOBBY_ADDR="127.0.0.1:$lobby_port" \
  COURTPIECE_LOBBY_METRICS_ADDR=off COURTPIECE_LOBBY_WALLET_ADDR="127.0.0.1:$wallet_port" \
  COURTPIECE_LOBBY_PG_POOL_SIZE="$pool" COURTPIECE_LOG_LEVEL=warn "$bin/courtpiece-lobby" &
lobby_pid=$!
trap 'kill -TERM $lobby_pid $wallet_pid 2>/dev/null || true' EXIT
wait_port "$wallet_port"
wait_port "$lobby_port"
echo "new devices:       $("$bin/courtpiece-lobby-bench" --mode=login --addr "127.0.0.1:$lobby_port" \
  --clients "$clients" --seconds "$seconds" | tr '\n' ' ')"
echo "  cpu so far: lobby $(cpu_s $lobby_pid)s wallet $(cpu_s $wallet_pid)s"
echo "returning devices: $("$bin/courtpiece-lobby-bench" --mode=login --addr "127.0.0.1:$lobby_port" \
  --clients "$clients" --seconds "$seconds" --login_new_devices=false | tr '\n' ' ')"
echo "  cpu so far: lobby $(cpu_s $lobby_pid)s wallet $(cpu_s $wallet_pid)s"
kill -TERM $lobby_pid $wallet_pid
wait $lobby_pid $wallet_pid || true
trap - EXIT

psql -q "$url/postgres" -c "DROP DATABASE IF EXISTS pgb" -c "CREATE DATABASE pgb"
pgbench -q -i -s 8 "$url/pgb" >/dev/null 2>&1
tps=$(pgbench -S -c 8 -j 2 -T "$seconds" "$url/pgb" 2>/dev/null | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
echo "pgbench -S -c 8 -j 2 -T $seconds (scale 8): $tps tps"
