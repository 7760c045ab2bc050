#!/usr/bin/env bash
# Runs courtpiece-table-load on a whole local stack and tears it down (docs/table-load.md).
# Not a test and not in ctest: --smoke takes about 30 s (Postgres initdb, the 7 s count-in).
#
#   tools/table_load/run_load.sh [--bin DIR] [--pg-port P] [--redis-port R] [--fast-pg]
#                                [--keep] [--smoke] [-- TOOL ARGS...]
#
# Starts, on loopback and free ports unless given: its own PostgreSQL (deploy/local, fsync on
# unless --fast-pg), Redis with AOF everysec (deploy/local/redis.sh), the wallet on a fresh
# migrated database, courtpiece-fake-receivers (lobby records, moderation reports); then
#   DIR/courtpiece-table-load --table_bin=DIR/courtpiece-table --wallet_addr=... \
#       --redis_addr=... TOOL ARGS
# which starts the table instance(s) itself. Prints `uptime` before and after. Everything
# lives in a temporary directory, removed at the end (kept with --keep, for the logs).
#   --smoke   10 tables for 5 s, --fast-pg; exit status of the tool (0: everything worked)
#   --bin     where the binaries are (default build-rel/bin, else build/bin)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
bin="" pg_port="" redis_port="" fast_pg=0 keep=0 smoke=0
tool_args=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --pg-port) pg_port=$2; shift 2 ;;
    --redis-port) redis_port=$2; shift 2 ;;
    --fast-pg) fast_pg=1; shift ;;
    --keep) keep=1; shift ;;
    --smoke) smoke=1; fast_pg=1; shift ;;
    --) shift; tool_args=("$@"); break ;;
    *) echo "run_load.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
if [[ -z $bin ]]; then
  if [[ -x $root/build-rel/bin/courtpiece-table-load ]]; then bin=$root/build-rel/bin; else bin=$root/build/bin; fi
fi
for b in courtpiece-table-load courtpiece-table courtpiece-wallet courtpiece-migrate courtpiece-fake-receivers; do
  [[ -x $bin/$b ]] || { echo "run_load.sh: $bin/$b is missing (build it first)" >&2; exit 2; }
done
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
[[ -n $pg_port ]] || pg_port=$(free_port)
[[ -n $redis_port ]] || redis_port=$(free_port)
work=$(mktemp -d /tmp/courtpiece-table-load.XXXXXX)
chmod 755 "$work"
wallet_pid="" receivers_pid=""
pg_args=(--port "$pg_port" --dir "$work/pg")
[[ $fast_pg == 1 ]] && pg_fast=(--fast) || pg_fast=()

teardown() {
  set +e
  [[ -n $wallet_pid ]] && kill -TERM "$wallet_pid" 2>/dev/null && wait "$wallet_pid" 2>/dev/null
  [[ -n $receivers_pid ]] && kill -TERM "$receivers_pid" 2>/dev/null && wait "$receivers_pid" 2>/dev/null
  "$root/deploy/local/redis.sh" stop --port "$redis_port" --dir "$work/redis" >/dev/null
  "$root/deploy/local/postgres.sh" stop "${pg_args[@]}" >/dev/null
  if [[ $keep == 1 ]]; then echo "run_load.sh: kept $work"; else rm -rf "$work"; fi
}
trap teardown EXIT

echo "uptime before: $(uptime)"
"$root/deploy/local/postgres.sh" start "${pg_args[@]}" "${pg_fast[@]}" >/dev/null
"$root/deploy/local/redis.sh" start --port "$redis_port" --dir "$work/redis" >/dev/null
admin=$("$root/deploy/local/postgres.sh" url "${pg_args[@]}")
psql -q "$admin" -c "CREATE DATABASE tableload" >/dev/null
db=${admin%/postgres}/tableload
"$bin/courtpiece-migrate" --pg-url "$db" --schema wallet --dir "$root/services/wallet/migrations" >/dev/null

wallet_port=$(free_port)
COURTPIECE_PG_URL="$db" COURTPIECE_WALLET_ADDR="127.0.0.1:$wallet_port" \
  COURTPIECE_WALLET_METRICS_ADDR=off COURTPIECE_LOG_LEVEL=warn \
  "$bin/courtpiece-wallet" >"$work/wallet.log" 2>&1 &
wallet_pid=$!

"$bin/courtpiece-fake-receivers" --listen=127.0.0.1:0 >"$work/receivers.jsonl" 2>"$work/receivers.log" &
receivers_pid=$!
receivers=""
for _ in $(seq 1 100); do
  receivers=$(head -1 "$work/receivers.jsonl" 2>/dev/null | sed -n 's/.*"listening":"\([^"]*\)".*/\1/p')
  [[ -n $receivers ]] && break
  sleep 0.1
done
[[ -n $receivers ]] || { echo "run_load.sh: fake receivers did not start" >&2; exit 1; }

export COURTPIECE_REDIS_ADDR="127.0.0.1:$redis_port"
export COURTPIECE_TABLE_WALLET_ADDR="127.0.0.1:$wallet_port"
export COURTPIECE_TABLE_LOBBY_ADDR="$receivers"
export COURTPIECE_TABLE_MODERATION_ADDR="$receivers"
export COURTPIECE_LOG_LEVEL=${COURTPIECE_LOG_LEVEL:-warn}
args=(--table_bin="$bin/courtpiece-table" --wallet_addr="127.0.0.1:$wallet_port"
      --redis_addr="127.0.0.1:$redis_port" --log_dir="$work")
[[ $smoke == 1 ]] && args+=(--smoke)
status=0
"$bin/courtpiece-table-load" "${args[@]}" "${tool_args[@]}" || status=$?
echo "uptime after: $(uptime)"
if [[ $status != 0 ]]; then
  for f in "$work"/*.log; do echo "--- $f (last lines)"; tail -n 5 "$f"; done >&2
fi
exit $status
