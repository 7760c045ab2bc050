#!/usr/bin/env bash
# The lobby's figures through the real binaries over gRPC, beside pgbench -S on the same
# Postgres (issue 11, docs/lobby.md "Measured"):
#   tools/lobby_bench/run_lobby_bench.sh --pg HOST:PORT --redis HOST:PORT [--bin build/bin]
#       [--clients 32] [--seconds 10] [--pool 16] [--redis-db 14] [--resolve-tables 1000]
#       [--modes login,login-returning,resolve,create,record,pgbench]  (also resolve-async:
#       resolve with the bench's clients on gRPC's callback API instead of a thread each)
# Starts, on free loopback ports: courtpiece-wallet, two courtpiece-table instances and
# courtpiece-lobby (a fresh database `lobbybench` with the wallet and lobby schemas
# migrated, Redis database --redis-db flushed first, a new signing key), then runs
# courtpiece-lobby-bench once per mode and `pgbench -S -c 8 -j 2 -T SECONDS` (scale 8, a
# scratch database `pgb`). One line per figure, with the CPU seconds each process spent
# during that run (from /proc/<pid>/stat): `pg` is the whole Postgres server (when its
# postmaster.pid is readable), `redis` the Redis server, `bench` the load generator;
# Prepare() is inside the window (resolve's tables are created there). The Postgres must be
# loopback and should run with fsync on for figures worth quoting. The machine's load
# (`uptime`) is printed before and after: other work on the machine moves the figures.
# The tables' moderation address points at a closed port (nothing here files a report) and
# their orphaned-pot sweep is off (no pots: nobody plays).
set -euo pipefail
pg="" redis="" bin="build/bin" clients=32 seconds=10 pool=16 redis_db=14 resolve_tables=1000
modes="login,login-returning,resolve,create,record,pgbench"
while [[ $# -gt 0 ]]; do
  case $1 in
    --pg) pg=$2; shift 2 ;;
    --redis) redis=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --pool) pool=$2; shift 2 ;;
    --redis-db) redis_db=$2; shift 2 ;;
    --resolve-tables) resolve_tables=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $pg && -n $redis ]] || { echo "--pg HOST:PORT and --redis HOST:PORT are required" >&2; exit 2; }
for a in "$pg" "$redis"; do
  case $a in 127.0.0.1:*|localhost:*) ;; *) echo "$a: must be a loopback address" >&2; exit 2 ;; esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
url="postgresql://postgres@$pg"
export PGOPTIONS="-c client_min_messages=warning"  # no NOTICE from DROP ... IF EXISTS
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing listens on $1" >&2; return 1; }
hz=$(getconf CLK_TCK)
# CPU ticks of a process (user + system); for the postmaster also its reaped children's.
ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat" 2>/dev/null || echo 0; }
pg_master=$(head -1 "$(psql -Atqc 'SHOW data_directory' "$url/postgres")/postmaster.pid" 2>/dev/null || true)
pg_ticks() {
  [[ -n $pg_master ]] || { echo 0; return; }
  local t; t=$(ticks "$pg_master")
  for c in $(pgrep -P "$pg_master"); do t=$((t + $(awk '{print $14 + $15}' "/proc/$c/stat" 2>/dev/null || echo 0))); done
  echo "$t"
}
redis_pid=$(redis-cli -h "${redis%:*}" -p "${redis##*:}" INFO server | tr -d '\r' | sed -n 's/^process_id://p')
declare -A name_of=()
snapshot() {  # prints "name=ticks ..." for every service process and Postgres
  local out=""
  for p in "${pids[@]}"; do out+="${name_of[$p]}=$(ticks "$p") "; done
  echo "${out}pg=$(pg_ticks) redis=$(ticks "$redis_pid")"
}
cpu_delta() {  # before after bench_seconds -> "cpu_s lobby=.. wallet=.. ..."
  local -A b=(); local kv out="cpu_s"
  for kv in $1; do b[${kv%%=*}]=${kv#*=}; done
  for kv in $2; do out+=" ${kv%%=*}=$(awk -v a="${kv#*=}" -v z="${b[${kv%%=*}]}" -v hz="$hz" 'BEGIN{printf "%.1f", (a - z) / hz}')"; done
  [[ -n $pg_master ]] || out+="(unreadable)"
  echo "$out bench=$3"
}

echo "uptime before: $(uptime)"
psql -q "$url/postgres" -c "DROP DATABASE IF EXISTS lobbybench" -c "CREATE DATABASE lobbybench"
for schema in wallet lobby; do
  "$bin/courtpiece-migrate" --pg-url "$url/lobbybench" --schema $schema \
    --dir "$root/services/$schema/migrations" >/dev/null
done
redis-cli -h "${redis%:*}" -p "${redis##*:}" -n "$redis_db" FLUSHDB >/dev/null
common_env=(COURTPIECE_LOG_LEVEL=warn COURTPIECE_REDIS_ADDR="$redis")
wallet_port=$(free_port) lobby_port=$(free_port) moderation_port=$(free_port)
start() {  # name, then env assignments and the binary
  local name=$1; shift
  env "${common_env[@]}" "$@" >"$work/$name.log" 2>&1 &
  pids+=($!)
  name_of[$!]=$name
}
start wallet COURTPIECE_PG_URL="$url/lobbybench" COURTPIECE_WALLET_ADDR="127.0.0.1:$wallet_port" \
  COURTPIECE_WALLET_METRICS_ADDR=off COURTPIECE_WALLET_PG_POOL_SIZE="$pool" "$bin/courtpiece-wallet"
wait_port "$wallet_port"
table_ports=()
for i in 1 2; do
  port=$(free_port)
  table_ports+=("$port")
  start "table$i" COURTPIECE_TABLE_REDIS_DB="$redis_db" COURTPIECE_TABLE_ADDR="127.0.0.1:$port" \
    COURTPIECE_TABLE_INSTANCE_ID="bench-$$-$i" COURTPIECE_TABLE_METRICS_ADDR=off \
    COURTPIECE_TABLE_WALLET_ADDR="127.0.0.1:$wallet_port" \
    COURTPIECE_TABLE_LOBBY_ADDR="127.0.0.1:$lobby_port" \
    COURTPIECE_TABLE_MODERATION_ADDR="127.0.0.1:$moderation_port" \
    COURTPIECE_TABLE_SWEEP_INTERVAL=0s "$bin/courtpiece-table"
done
for port in "${table_ports[@]}"; do wait_port "$port"; done
key=$("$bin/courtpiece-keygen" --kid bench | sed -n 's/^COURTPIECE_LOBBY_SIGNING_KEY=//p')
[[ -n $key ]] || { echo "courtpiece-keygen printed no COURTPIECE_LOBBY_SIGNING_KEY" >&2; exit 1; }
start lobby COURTPIECE_PG_URL="$url/lobbybench" COURTPIECE_LOBBY_ADDR="127.0.0.1:$lobby_port" \
  COURTPIECE_LOBBY_METRICS_ADDR=off COURTPIECE_LOBBY_WALLET_ADDR="127.0.0.1:$wallet_port" \
  COURTPIECE_LOBBY_REDIS_DB="$redis_db" COURTPIECE_LOBBY_SIGNING_KEY="$key" \
  COURTPIECE_LOBBY_PG_POOL_SIZE="$pool" "$bin/courtpiece-lobby"
wait_port "$lobby_port"
sleep 1  # the tables' first heartbeats: CreateTable needs a live instance

failed=0
bench() {  # label, then courtpiece-lobby-bench flags
  local label=$1; shift
  local before after out rc=0
  before=$(snapshot)
  out=$( { TIMEFORMAT='%U %S'; time "$bin/courtpiece-lobby-bench" --addr "127.0.0.1:$lobby_port" \
      --clients "$clients" --seconds "$seconds" "$@" 2>&1; } 2>"$work/time" ) || rc=$?
  after=$(snapshot)
  ((rc == 0)) || failed=1
  printf '%-16s %s | %s\n' "$label" "$(tr '\n' ' ' <<<"$out")" \
    "$(cpu_delta "$before" "$after" "$(awk '{printf "%.1f", $1 + $2}' "$work/time")")"
}
IFS=, read -ra wanted <<<"$modes"
for m in "${wanted[@]}"; do
  case $m in
    login) bench login --mode=login ;;
    login-returning) bench login-returning --mode=login --login_new_devices=false ;;
    resolve) bench resolve --mode=resolve --resolve_tables="$resolve_tables" ;;
    resolve-async) bench resolve-async --mode=resolve --async --resolve_tables="$resolve_tables" ;;
    create) bench create --mode=create ;;
    record) bench record --mode=record ;;
    pgbench) ;;
    *) echo "unknown mode $m" >&2; exit 2 ;;
  esac
done
cleanup
pids=()
trap - EXIT
for m in "${wanted[@]}"; do
  [[ $m == pgbench ]] || continue
  psql -q "$url/postgres" -c "DROP DATABASE IF EXISTS pgb" -c "CREATE DATABASE pgb"
  pgbench -q -i -s 8 "$url/pgb" >/dev/null 2>&1
  tps=$(pgbench -S -c 8 -j 2 -T "$seconds" "$url/pgb" 2>/dev/null | sed -n 's/^tps = \([0-9]*\).*/\1/p')
  printf '%-16s %s\n' pgbench "pgbench -S -c 8 -j 2 -T $seconds (scale 8): $tps tps"
done
echo "uptime after: $(uptime)"
exit $failed
