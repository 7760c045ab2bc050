#!/usr/bin/env bash
# A local Redis server for development and tests, persistent like production: AOF on
# (appendonly yes, appendfsync everysec; no RDB snapshots; the AOF rewritten from 512 MB
# on, not Redis' 64 MB: docs/operations.md "Redis"), files under --dir, so a restart
# (stop, start) keeps the data. `rm -rf` the dir for a fresh server.
#
#   deploy/local/redis.sh start|stop|status|addr [--port P] [--dir D]
#
#   start   daemonized redis-server on 127.0.0.1:P; waits for PING. Idempotent.
#   stop    SHUTDOWN NOSAVE (no RDB; the AOF is flushed and fsynced), waits for the process
#           to exit (idempotent).
#   status  exit 0 when it answers PING, 3 when not running.
#   addr    print 127.0.0.1:P (the COURTPIECE_TEST_REDIS_ADDR form)
#
#   --port P  default 56379
#   --dir D   default <repo>/.local/redis-<port>; holds redis.pid, redis.log, appendonlydir/
set -euo pipefail

REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TIMEOUT_S=15

usage() {
  sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
}

CMD=${1:-}
[ -n "$CMD" ] || usage
shift
PORT=56379
DIR=""
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT=${2:?--port needs a value}; shift 2 ;;
    --port=*) PORT=${1#*=}; shift ;;
    --dir) DIR=${2:?--dir needs a value}; shift 2 ;;
    --dir=*) DIR=${1#*=}; shift ;;
    -h|--help) usage ;;
    *) echo "redis.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ "$PORT" =~ ^[0-9]+$ ]] || { echo "redis.sh: bad port '$PORT'" >&2; exit 2; }
[ -n "$DIR" ] || DIR="$REPO_ROOT/.local/redis-$PORT"

ping() {
  [ "$(redis-cli -h 127.0.0.1 -p "$PORT" --no-raw PING 2>/dev/null || true)" = "PONG" ]
}

pid_alive() {
  [ -f "$DIR/redis.pid" ] && kill -0 "$(cat "$DIR/redis.pid")" 2>/dev/null
}

start() {
  if ping; then
    echo "redis.sh: already running on 127.0.0.1:$PORT"
    return 0
  fi
  mkdir -p "$DIR"
  redis-server --bind 127.0.0.1 --port "$PORT" --daemonize yes \
    --save "" --appendonly yes --appendfsync everysec --auto-aof-rewrite-min-size 512mb \
    --dir "$DIR" --databases 32 \
    --pidfile "$DIR/redis.pid" --logfile "$DIR/redis.log" >/dev/null
  local i
  for ((i = 0; i < TIMEOUT_S * 4; i++)); do
    if ping; then
      echo "redis.sh: running on 127.0.0.1:$PORT ($DIR)"
      return 0
    fi
    sleep 0.25
  done
  echo "redis.sh: no PONG within ${TIMEOUT_S}s; last log lines:" >&2
  tail -n 20 "$DIR/redis.log" >&2 || true
  exit 1
}

stop() {
  if ! ping && ! pid_alive; then
    echo "redis.sh: not running on port $PORT"
    return 0
  fi
  # The pid as read now: redis removes its pid file just before it exits.
  local pid i
  pid=$(cat "$DIR/redis.pid" 2>/dev/null || true)
  redis-cli -h 127.0.0.1 -p "$PORT" SHUTDOWN NOSAVE >/dev/null 2>&1 || true
  for ((i = 0; i < TIMEOUT_S * 4; i++)); do
    if ! ping && ! pid_alive && ! { [[ $pid =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null; }; then
      echo "redis.sh: stopped (port $PORT)"
      return 0
    fi
    sleep 0.25
  done
  echo "redis.sh: still running after ${TIMEOUT_S}s" >&2
  exit 1
}

status() {
  if ping; then
    echo "redis.sh: running on 127.0.0.1:$PORT"
    exit 0
  fi
  echo "redis.sh: not running on port $PORT"
  exit 3
}

case "$CMD" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  addr) echo "127.0.0.1:$PORT" ;;
  *) usage ;;
esac
