#!/usr/bin/env bash
# courtpiece-load --mode=play against the whole local suite (docs/load.md): players that sign
# in, find their tables and play whole games through the gateway at human pace.
#   tools/gateway_load/run_players.sh --pg HOST:PORT --redis HOST:PORT [--bin build/bin]
#       [--redis-db 14] [--players 1000] [--grpc-share 0.5] [--think-ms 1500]
#       [--ramp-seconds 60] [--seconds 180] [--report-seconds 30] [--load-threads 1]
#       [--soak] [--kill-every-seconds 300] [--pots-timeout-seconds 240] [--logs DIR]
#       [-- more courtpiece-load flags]
# Starts (tests/lib/stack.sh, on free loopback ports, fresh database `playload`, Redis
# database --redis-db flushed) wallet, moderation, TWO table instances, lobby and gateway,
# raises the soft open-file limit to the hard one, runs courtpiece-load --mode=play for
# --seconds (the ramp included) with every service's pid for the CPU/RSS report, then waits
# until every pot is empty (a bot ends each round left in play; a pot orphaned by a kill is
# refunded by the table's sweeper after its 60 s grace) and runs the wallet audit
# (courtpiece-wallet-audit) over the database.
# --soak: --seconds defaults to 3600 and every --kill-every-seconds one table instance (the
# two in turn) is killed with SIGKILL and started again 5 s later (a new instance id, same
# port), so there are two again; the gateway moves the killed instance's tables to the
# other one.
# Gateway limits: the stack already sets 30,000 connections in all and per address
# (COURTPIECE_GATEWAY_CONNECTIONS_MAX / _PER_IP_MAX, and _GRPC_STREAMS_PER_IP_MAX for the
# mobile players: every player comes from 127.0.0.1); the
# per-connection command bucket (20/s) is left as it is: a player sends about one command
# per think time.
# Exit: courtpiece-load's code (1: seq checks failed, a player never seated, no move), else
# 1 when a pot is not empty in time or the audit fails; 2 usage; 3 not built.
set -euo pipefail
pg="" redis="" bin="build/bin" redis_db=14 players=1000 grpc_share=0.5 think_ms=1500
ramp_seconds=60 seconds="" report_seconds=30 load_threads=1 soak=0 kill_every=300
pots_timeout=240 logs=""
extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --pg) pg=$2; shift 2 ;;
    --redis) redis=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --redis-db) redis_db=$2; shift 2 ;;
    --players) players=$2; shift 2 ;;
    --grpc-share) grpc_share=$2; shift 2 ;;
    --think-ms) think_ms=$2; shift 2 ;;
    --ramp-seconds) ramp_seconds=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --report-seconds) report_seconds=$2; shift 2 ;;
    --load-threads) load_threads=$2; shift 2 ;;
    --soak) soak=1; shift ;;
    --kill-every-seconds) kill_every=$2; shift 2 ;;
    --pots-timeout-seconds) pots_timeout=$2; shift 2 ;;
    --logs) logs=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $pg && -n $redis ]] || { echo "--pg HOST:PORT and --redis HOST:PORT are required" >&2; exit 2; }
for a in "$pg" "$redis"; do
  case $a in 127.0.0.1:*|localhost:*) ;; *) echo "$a: must be a loopback address" >&2; exit 2 ;; esac
done
[[ -z $seconds ]] && { if ((soak)); then seconds=3600; else seconds=180; fi; }
((kill_every >= 30)) || { echo "--kill-every-seconds: at least 30" >&2; exit 2; }
for b in courtpiece-load courtpiece-wallet-audit courtpiece-gateway; do
  [[ -x $bin/$b ]] || { echo "$bin/$b is not built" >&2; exit 3; }
done
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/tests/lib/stack.sh"

hard=$(ulimit -Hn)
ulimit -Sn "$hard"
echo "open files: soft limit raised to $(ulimit -Sn) (hard $hard)"

finish() {
  if [[ -n $logs && -n $stack_work ]]; then mkdir -p "$logs" && cp "$stack_work"/*.log "$logs"/ || true; fi
  stack_stop
}
trap finish EXIT
echo "uptime before: $(uptime)"
STACK_TABLE_INSTANCES=2 stack_start "$pg" "$redis" playload "$redis_db"

listener_pid() {  # the pid listening on loopback port $1, "" when unknown
  ss -ltnpH "sport = :$1" 2>/dev/null | sed -n 's/.*pid=\([0-9]*\).*/\1/p' | head -1
}
pids_file=$stack_work/pids
write_pids() {
  {
    echo "gateway:$gateway_pid"
    echo "lobby:$lobby_pid"
    echo "wallet:$wallet_pid"
    echo "moderation:$moderation_pid"
    echo "table1:$table_pid"
    echo "table2:$table2_pid"
    local p
    p=$(listener_pid "${pg##*:}"); [[ -n $p ]] && echo "postgres:$p"
    p=$(listener_pid "${redis##*:}"); [[ -n $p ]] && echo "redis:$p"
  } >"$pids_file.tmp"
  mv "$pids_file.tmp" "$pids_file"
}
write_pids
echo "services: $(tr '\n' ' ' <"$pids_file")"

"$bin/courtpiece-load" --mode=play --http="127.0.0.1:$gw_http_port" --grpc="127.0.0.1:$gw_grpc_port" \
  --players="$players" --grpc_share="$grpc_share" --think_ms="$think_ms" \
  --ramp_seconds="$ramp_seconds" --seconds="$seconds" --report_seconds="$report_seconds" \
  --threads="$load_threads" --service_pids_file="$pids_file" "${extra[@]}" &
load_pid=$!

kills=0
if ((soak)); then
  start=$SECONDS next_kill=$kill_every victim=1
  while kill -0 "$load_pid" 2>/dev/null && ((SECONDS - start < seconds)); do
    if ((SECONDS - start >= next_kill && SECONDS - start < seconds - 30)); then
      if [[ $victim == 1 ]]; then pid=$table_pid; else pid=$table2_pid; fi
      echo "soak: t=$((SECONDS - start))s kill -9 table$victim (pid $pid)"
      kill -9 "$pid" 2>/dev/null || true
      kills=$((kills + 1))
      sleep 5
      stack_table_restart "$victim"
      write_pids
      echo "soak: t=$((SECONDS - start))s table$victim started again (pid $([[ $victim == 1 ]] && echo "$table_pid" || echo "$table2_pid"))"
      victim=$((3 - victim))
      next_kill=$((next_kill + kill_every))
    fi
    sleep 1
  done
fi
rc=0
wait "$load_pid" || rc=$?
echo "courtpiece-load exit $rc; table instances killed: $kills"

psql_q() { PGOPTIONS="-c client_min_messages=warning" psql -qtA "$stack_db_url" -c "$1"; }
pots=""
for _ in $(seq $((pots_timeout / 2))); do
  pots=$(psql_q "SELECT count(*) || ' pots, ' || coalesce(sum(balance), 0) || ' coins' FROM wallet.accounts WHERE kind = 'pot' AND balance <> 0")
  [[ $pots == "0 pots, 0 coins" ]] && break
  sleep 2
done
echo "pots not empty: $pots"
[[ $pots == "0 pots, 0 coins" ]] || { echo "FAIL: pots still hold coins after ${pots_timeout} s"; rc=1; }
echo "audit: $bin/courtpiece-wallet-audit --pg-url $stack_db_url"
"$bin/courtpiece-wallet-audit" --pg-url "$stack_db_url" || { echo "FAIL: the audit"; rc=1; }
echo "uptime after: $(uptime)"
exit $rc
