#!/usr/bin/env bash
# courtpiece-load against a whole local stack (docs/gateway.md "Load tool"; tests/lib/stack.sh):
#   tools/gateway_load/run_load.sh --pg HOST:PORT --redis HOST:PORT [--bin build/bin]
#       [--redis-db 15] [--idle-connections 2000] [--rate-connections 800] [--rate 10000]
#       [--seconds 20] [--modes idle-ws,idle-grpc,rate-ws,rate-grpc,rate-direct] [--each-second]
#       [--grpc-channels N]
# Starts, on free loopback ports: courtpiece-wallet and courtpiece-lobby on a fresh database
# `gatewayload` (wallet and lobby schemas migrated), one courtpiece-table instance (Redis
# database --redis-db, flushed first; its per-stream command limit raised so that the table
# does not throttle the load) and courtpiece-gateway (a new key pair from courtpiece-keygen),
# then runs courtpiece-load once per mode:
#   idle-ws / idle-grpc  --idle-connections WebSockets / gRPC Play streams, signed in, each on
#                        a table (4 per table, seated by join), held 10 s: the gateway's RSS
#                        per connection
#   rate-ws / rate-grpc  --rate-connections connections sending --rate commands/s in total
#                        for --seconds: command -> result latency through the gateway; 3
#                        players per table, so that no game starts (all the tables' first
#                        rounds at once, stakes through Postgres, stall the table instance
#                        itself for 100-300 ms: docs/gateway.md "Measured")
#   rate-direct          the same straight to the table instance: the baseline; the
#                        gateway's added latency is rate-ws's (or rate-grpc's) minus this
#   --each-second        the rate modes also print each second's count, p50, p99 and max
#   --grpc-channels N    the gRPC modes' streams share N TCP connections (default: one TCP
#                        connection per stream, as every phone has its own; the gateway
#                        runs 100 calls per connection at once, so N >= streams / 100, or
#                        raise COURTPIECE_GATEWAY_GRPC_STREAMS_PER_CONNECTION)
# The load's rate per connection (rate / connections) must stay under the gateway's
# per-connection bucket (20/s): 10,000/s needs 500+ connections. The machine's load
# (`uptime`) is printed before and after. Exit 1 when a mode failed; exit 3 when
# courtpiece-gateway is not built yet.
set -euo pipefail
pg="" redis="" bin="build/bin" redis_db=15 idle_connections=2000 rate_connections=800
rate=10000 seconds=20 modes="idle-ws,idle-grpc,rate-ws,rate-grpc,rate-direct" each_second=() grpc_channels=()
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
    --each-second) each_second=(--each_second); shift ;;
    --grpc-channels) grpc_channels=(--grpc_channels="$2"); shift 2 ;;
    -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $pg && -n $redis ]] || { echo "--pg HOST:PORT and --redis HOST:PORT are required" >&2; exit 2; }
for a in "$pg" "$redis"; do
  case $a in 127.0.0.1:*|localhost:*) ;; *) echo "$a: must be a loopback address" >&2; exit 2 ;; esac
done
[[ -x $bin/courtpiece-load ]] || { echo "$bin/courtpiece-load is not built" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/lib/stack.sh"
trap stack_stop EXIT
echo "uptime before: $(uptime)"
stack_start "$pg" "$redis" gatewayload "$redis_db" \
  COURTPIECE_TABLE_COMMANDS_PER_SECOND=1000 COURTPIECE_TABLE_COMMANDS_BURST=1000 \
  COURTPIECE_TABLE_SWEEP_INTERVAL=0s

failed=0
load() {  # label, then courtpiece-load flags
  local label=$1; shift
  echo "== $label"
  "$bin/courtpiece-load" --http="127.0.0.1:$gw_http_port" --grpc="127.0.0.1:$gw_grpc_port" "$@" ||
    { failed=1; echo "$label: failed (logs in $stack_work are removed at exit; rerun with one mode)"; }
}
IFS=, read -ra wanted <<<"$modes"
for m in "${wanted[@]}"; do
  case $m in
    idle-ws) load "$m" --mode=idle --connections="$idle_connections" --gateway_pid="$gateway_pid" ;;
    idle-grpc) load "$m" --mode=idle --transport=grpc --connections="$idle_connections" \
                 --gateway_pid="$gateway_pid" "${grpc_channels[@]}" ;;
    rate-ws) load "$m" --mode=rate --connections="$rate_connections" --rate="$rate" \
               --seconds="$seconds" --players_per_table=3 "${each_second[@]}" ;;
    rate-grpc) load "$m" --mode=rate --transport=grpc --connections="$rate_connections" \
                 --rate="$rate" --seconds="$seconds" --players_per_table=3 "${each_second[@]}" \
                 "${grpc_channels[@]}" ;;
    rate-direct) load "$m" --mode=rate --direct="127.0.0.1:$table_port" \
                   --connections="$rate_connections" --rate="$rate" --seconds="$seconds" \
                   --players_per_table=3 "${each_second[@]}" ;;
    *) echo "unknown mode $m" >&2; exit 2 ;;
  esac
done
echo "uptime after: $(uptime)"
exit $failed
