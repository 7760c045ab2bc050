#!/usr/bin/env bash
# Wallet throughput beside pgbench (tpcb-like) on the same Postgres, interleaved runs.
#   services/wallet/bench_vs_pgbench.sh --pg HOST:PORT [--bin build-rel/bin] [--clients 16]
#       [--seconds 15] [--runs 3] [--scale 16] [--pool 32]
# Each run: a fresh wallet database (migrated), the wallet on a free loopback port, the
# bench for --seconds, SIGTERM; then `pgbench -i -s SCALE` on a fresh database and
# `pgbench -c CLIENTS -j 2 -T SECONDS`. Prints one line per run and the ratio, and what a
# transfer cost during the wallet's run: CPU ms of the wallet process, CPU ms of every
# `postgres` process on the machine (utime+stime from /proc; run it with no other busy
# Postgres), and the wallet's context switches (voluntary + involuntary, all threads).
# The Postgres must be a real one (fsync on) for figures worth quoting; loopback only.
set -euo pipefail
pg="" bin="build-rel/bin" clients=16 seconds=15 runs=3 scale=16 pool=32
while [[ $# -gt 0 ]]; do
  case $1 in
    --pg) pg=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --clients) clients=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --pool) pool=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $pg ]] || { echo "--pg HOST:PORT is required" >&2; exit 2; }
case $pg in 127.0.0.1:*|localhost:*) ;; *) echo "--pg must be a loopback address" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/../.." && pwd)
url="postgresql://postgres@$pg"
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
postgres_ticks() {
  local total=0 p
  for p in $(pgrep -x postgres); do total=$((total + $(cpu_ticks "$p"))); done
  echo "$total"
}
switches() { cat /proc/"$1"/task/*/status 2>/dev/null | awk '/ctxt_switches/ {s += $2} END {print s + 0}'; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

for run in $(seq 1 "$runs"); do
  psql -q "$url/postgres" -c "DROP DATABASE IF EXISTS walletbench" -c "CREATE DATABASE walletbench"
  "$bin/courtpiece-migrate" --pg-url "$url/walletbench" --schema wallet \
    --dir "$root/services/wallet/migrations" >/dev/null
  port=$(free_port)
  COURTPIECE_PG_URL="$url/walletbench" COURTPIECE_WALLET_ADDR="127.0.0.1:$port" \
    COURTPIECE_WALLET_METRICS_ADDR=off COURTPIECE_WALLET_PG_POOL_SIZE="$pool" \
    COURTPIECE_LOG_LEVEL=warn "$bin/courtpiece-wallet" &
  wallet_pid=$!
  sleep 1
  w0=$(cpu_ticks "$wallet_pid") p0=$(postgres_ticks) s0=$(switches "$wallet_pid")
  wallet_line=$("$bin/courtpiece-wallet-bench" --addr "127.0.0.1:$port" --clients "$clients" \
    --seconds "$seconds" | tail -1)
  w1=$(cpu_ticks "$wallet_pid") p1=$(postgres_ticks) s1=$(switches "$wallet_pid")
  kill -TERM "$wallet_pid"
  wait "$wallet_pid"
  psql -q "$url/postgres" -c "DROP DATABASE IF EXISTS pgb" -c "CREATE DATABASE pgb"
  pgbench -q -i -s "$scale" "$url/pgb" >/dev/null 2>&1
  tps=$(pgbench -c "$clients" -j 2 -T "$seconds" "$url/pgb" 2>/dev/null |
    sed -n 's/^tps = \([0-9.]*\).*/\1/p')
  wallet_tps=$(echo "$wallet_line" | sed -n 's/.*transfers_per_s=\([0-9.]*\).*/\1/p')
  ratio=$(python3 -c "print(f'{$wallet_tps / $tps:.2f}')")
  transfers=$(echo "$wallet_line" | sed -n 's/.*transfers=\([0-9]*\).*/\1/p')
  hz=$(getconf CLK_TCK)
  cost=$(python3 -c "n = max($transfers, 1); print(f'per transfer: wallet {($w1 - $w0) * 1000 / $hz / n:.3f} ms CPU, postgres {($p1 - $p0) * 1000 / $hz / n:.3f} ms CPU, {($s1 - $s0) / n:.1f} context switches')")
  echo "run $run: wallet: $wallet_line | pgbench -s $scale: $tps tps | ratio $ratio | $cost"
done
