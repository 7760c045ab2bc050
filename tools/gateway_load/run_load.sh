#!/usr/bin/env bash
# courtpiece-load against a whole local stack (docs/gateway.md "Load tool"):
#   tools/gateway_load/run_load.sh --pg HOST:PORT --redis HOST:PORT [--bin build/bin]
#       [--redis-db 13] [--idle-connections 2000] [--rate-connections 800] [--rate 10000]
#       [--seconds 20] [--modes idle-ws,idle-grpc,rate-ws,rate-grpc,rate-direct]
# Starts, on free loopback ports: courtpiece-wallet and courtpiece-lobby on a fresh database
# `gatewayload` (wallet and lobby schemas migrated), one courtpiece-table instance (Redis
# database --redis-db, flushed first; its per-stream command limit raised so that the table
# does not throttle the load) and courtpiece-gateway (a new key pair from courtpiece-keygen),
# then runs courtpiece-load once per mode:
#   idle-ws / idle-grpc  --idle-connections WebSockets / gRPC Play streams, signed in, each on
#                        a table (4 per table, seated by join), held 10 s: the gateway's RSS
#                        per connection
#   rate-ws / rate-grpc  --rate-connections connections sending --rate commands/s in total
#                        for --seconds: command -> result latency through the gateway
#   rate-direct          the same straight to the table instance: the baseline; the
#                        gateway's added latency is rate-ws's (or rate-grpc's) minus this
# The load's rate per connection (rate / connections) must stay under the gateway's
# per-connection bucket (20/s): 10,000/s needs 500+ connections. The machine's load
# (`uptime`) is printed before and after. Exit 1 when a mode failed; exit 3 when
# courtpiece-gateway is not built yet.
set -euo pipefail
pg="" redis="" bin="build/bin" redis_db=13 idle_connections=2000 rate_connections=800
rate=10000 seconds=20 modes="idle-ws,idle-grpc,rate-ws,rate-grpc,rate-direct"
while [[ $# -gt 0 ]]; do
  case $1 in
    --pg) pg=$2; shift 2 ;;
    --redis) redis=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --redis-db) redis_db=$2; shift 2 ;;
    --idle-connections) idle_connections=$2; shift 2 ;;
    --rate-connections) rate_connections=$2; shift 2 ;;
    --rate) rate=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --modes) modes=$2; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $pg && -n $redis ]] || { echo "--pg HOST:PORT and --redis HOST:PORT are required" >&2; exit 2; }
for a in "$pg" "$redis"; do
  case $a in 127.0.0.1:*|localhost:*) ;; *) echo "$a: must be a loopback address" >&2; exit 2 ;; esac
done
if [[ ! -x $bin/courtpiece-gateway ]]; then
  echo "$bin/courtpiece-gateway is not built: the gateway binary (services/gateway/main.cc) lands" \
       "with issue 12's merge; build it with: cmake --build build --target courtpiece-gateway" >&2
  exit 3
fi
for b in courtpiece-wallet courtpiece-lobby courtpiece-table courtpiece-migrate courtpiece-keygen \
         courtpiece-load; do
  [[ -x $bin/$b ]] || { echo "$bin/$b is not built (cmake --build build --target $b)" >&2; exit 2; }
done
root=$(cd "$(dirname "$0")/../.." && pwd)
url="postgresql://postgres@$pg"
export PGOPTIONS="-c client_min_messages=warning"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_port() { for _ in $(seq 150); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done; echo "nothing listens on $1 (logs: $work)" >&2; return 1; }
start() {  # name, then env assignments and the binary; its pid in $started
  local name=$1; shift
  env COURTPIECE_LOG_LEVEL=warn COURTPIECE_REDIS_ADDR="$redis" "$@" >"$work/$name.log" 2>&1 &
  started=$!
  pids+=("$started")
}

echo "uptime before: $(uptime)"
psql -q "$url/postgres" -c "DROP DATABASE IF EXISTS gatewayload" -c "CREATE DATABASE gatewayload"
for schema in wallet lobby; do
  "$bin/courtpiece-migrate" --pg-url "$url/gatewayload" --schema $schema \
    --dir "$root/services/$schema/migrations" >/dev/null
done
redis-cli -h "${redis%:*}" -p "${redis##*:}" -n "$redis_db" FLUSHDB >/dev/null
keys=$("$bin/courtpiece-keygen" --kid load)
signing=$(sed -n 's/^COURTPIECE_LOBBY_SIGNING_KEY=//p' <<<"$keys")
verify=$(sed -n 's/^COURTPIECE_LOBBY_VERIFY_KEYS=//p' <<<"$keys")
[[ -n $signing && -n $verify ]] || { echo "courtpiece-keygen printed no key pair" >&2; exit 1; }
wallet_port=$(free_port) lobby_port=$(free_port) table_port=$(free_port) moderation_port=$(free_port)
gw_grpc_port=$(free_port) gw_http_port=$(free_port)

start wallet COURTPIECE_PG_URL="$url/gatewayload" COURTPIECE_WALLET_ADDR="127.0.0.1:$wallet_port" \
  COURTPIECE_WALLET_METRICS_ADDR=off "$bin/courtpiece-wallet"
wait_port "$wallet_port"
start table COURTPIECE_TABLE_REDIS_DB="$redis_db" COURTPIECE_TABLE_ADDR="127.0.0.1:$table_port" \
  COURTPIECE_TABLE_INSTANCE_ID="load-$$" COURTPIECE_TABLE_METRICS_ADDR=off \
  COURTPIECE_TABLE_WALLET_ADDR="127.0.0.1:$wallet_port" \
  COURTPIECE_TABLE_LOBBY_ADDR="127.0.0.1:$lobby_port" \
  COURTPIECE_TABLE_MODERATION_ADDR="127.0.0.1:$moderation_port" \
  COURTPIECE_TABLE_COMMANDS_PER_SECOND=1000 COURTPIECE_TABLE_COMMANDS_BURST=1000 \
  COURTPIECE_TABLE_SWEEP_INTERVAL=0s "$bin/courtpiece-table"
wait_port "$table_port"
start lobby COURTPIECE_PG_URL="$url/gatewayload" COURTPIECE_LOBBY_ADDR="127.0.0.1:$lobby_port" \
  COURTPIECE_LOBBY_METRICS_ADDR=off COURTPIECE_LOBBY_WALLET_ADDR="127.0.0.1:$wallet_port" \
  COURTPIECE_LOBBY_REDIS_DB="$redis_db" COURTPIECE_LOBBY_SIGNING_KEY="$signing" \
  "$bin/courtpiece-lobby"
wait_port "$lobby_port"
start gateway COURTPIECE_GATEWAY_ADDR="127.0.0.1:$gw_grpc_port" \
  COURTPIECE_GATEWAY_HTTP_ADDR="127.0.0.1:$gw_http_port" COURTPIECE_GATEWAY_METRICS_ADDR=off \
  COURTPIECE_GATEWAY_LOBBY_ADDR="127.0.0.1:$lobby_port" COURTPIECE_GATEWAY_REDIS_DB="$redis_db" \
  COURTPIECE_GATEWAY_VERIFY_KEYS="$verify" \
  COURTPIECE_GATEWAY_CONNECTIONS_MAX=30000 COURTPIECE_GATEWAY_CONNECTIONS_PER_IP_MAX=30000 \
  "$bin/courtpiece-gateway"
gateway_pid=$started
wait_port "$gw_http_port"
wait_port "$gw_grpc_port"
sleep 1  # the table's first heartbeat: CreateTable needs a live instance

failed=0
load() {  # label, then courtpiece-load flags
  local label=$1; shift
  echo "== $label"
  "$bin/courtpiece-load" --http="127.0.0.1:$gw_http_port" --grpc="127.0.0.1:$gw_grpc_port" "$@" ||
    { failed=1; echo "$label: failed (logs in $work are removed at exit; rerun with one mode)"; }
}
IFS=, read -ra wanted <<<"$modes"
for m in "${wanted[@]}"; do
  case $m in
    idle-ws) load "$m" --mode=idle --connections="$idle_connections" --gateway_pid="$gateway_pid" ;;
    idle-grpc) load "$m" --mode=idle --transport=grpc --connections="$idle_connections" \
                 --gateway_pid="$gateway_pid" ;;
    rate-ws) load "$m" --mode=rate --connections="$rate_connections" --rate="$rate" \
               --seconds="$seconds" ;;
    rate-grpc) load "$m" --mode=rate --transport=grpc --connections="$rate_connections" \
                 --rate="$rate" --seconds="$seconds" ;;
    rate-direct) load "$m" --mode=rate --direct="127.0.0.1:$table_port" \
                   --connections="$rate_connections" --rate="$rate" --seconds="$seconds" ;;
    *) echo "unknown mode $m" >&2; exit 2 ;;
  esac
done
echo "uptime after: $(uptime)"
exit $failed
