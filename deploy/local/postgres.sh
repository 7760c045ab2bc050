#!/usr/bin/env bash
# A throwaway local PostgreSQL 15 server for development and tests.
#
#   deploy/local/postgres.sh start|stop|status|url [--port P] [--dir D] [--fast]
#
#   start   initdb on first use, then start listening on 127.0.0.1:P only; waits until ready.
#           Idempotent: an already running server on that dir is fine.
#   stop    fast shutdown (idempotent).
#   status  exit 0 when running and accepting connections, 3 when not running, 1 otherwise.
#   url     print the admin URL, postgresql://postgres@127.0.0.1:P/postgres
#
#   --port P  default 55432
#   --dir D   default <repo>/.local/pg-<port>; holds data/ and postgres.log. When the postgres
#             system user cannot reach D (e.g. the repo lives under /root), the server uses
#             /var/tmp/courtpiece-pg-<port> instead and says so.
#   --fast    fsync, synchronous_commit and full_page_writes off: for tests only (a crash can
#             lose or corrupt data).
#
# Auth is `trust` for local and loopback connections only; nothing else is accepted.
# Runs initdb/pg_ctl as the `postgres` user when invoked as root (initdb refuses root).
set -euo pipefail

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
REPO_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
START_TIMEOUT_S=30

usage() {
  sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
  exit 2
}

CMD=${1:-}
[ -n "$CMD" ] || usage
shift
PORT=55432
DIR=""
FAST=0
while [ $# -gt 0 ]; do
  case "$1" in
    --port) PORT=${2:?--port needs a value}; shift 2 ;;
    --port=*) PORT=${1#*=}; shift ;;
    --dir) DIR=${2:?--dir needs a value}; shift 2 ;;
    --dir=*) DIR=${1#*=}; shift ;;
    --fast) FAST=1; shift ;;
    -h|--help) usage ;;
    *) echo "postgres.sh: unknown argument '$1'" >&2; usage ;;
  esac
done
[[ "$PORT" =~ ^[0-9]+$ ]] || { echo "postgres.sh: bad port '$PORT'" >&2; exit 2; }
[ -n "$DIR" ] || DIR="$REPO_ROOT/.local/pg-$PORT"
FALLBACK_DIR="/var/tmp/courtpiece-pg-$PORT"

# Runs a command as the postgres user when we are root, as ourselves otherwise.
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# True when the postgres user (or we) can create files in $1.
pg_can_use() {
  as_pg test -d "$1" -a -w "$1" -a -x "$1" 2>/dev/null
}

# Picks the directory: an existing cluster wins; else D if usable by postgres, else fallback.
resolve_dir() {
  local create=$1
  if [ -f "$DIR/data/PG_VERSION" ]; then return 0; fi
  if [ -f "$FALLBACK_DIR/data/PG_VERSION" ] && ! pg_can_use "$DIR"; then
    DIR=$FALLBACK_DIR
    return 0
  fi
  [ "$create" -eq 1 ] || return 0
  mkdir -p "$DIR"
  if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$DIR"; fi
  chmod 700 "$DIR"
  if ! pg_can_use "$DIR"; then
    echo "postgres.sh: the postgres user cannot reach $DIR (a parent directory is not" \
      "traversable); using $FALLBACK_DIR" >&2
    rmdir "$DIR" 2>/dev/null || true
    DIR=$FALLBACK_DIR
    mkdir -p "$DIR"
    if [ "$(id -u)" -eq 0 ]; then chown postgres:postgres "$DIR"; fi
    chmod 700 "$DIR"
  fi
}

url() { echo "postgresql://postgres@127.0.0.1:$PORT/postgres"; }

is_running() {
  [ -f "$DIR/data/PG_VERSION" ] && as_pg "$PG_BIN/pg_ctl" status -D "$DIR/data" >/dev/null 2>&1
}

is_ready() {
  "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PORT" -t 1 >/dev/null 2>&1
}

init_cluster() {
  echo "postgres.sh: initdb in $DIR/data"
  as_pg "$PG_BIN/initdb" -D "$DIR/data" -U postgres --auth=trust --encoding=UTF8 --locale=C \
    >"$DIR/initdb.log" 2>&1 || { cat "$DIR/initdb.log" >&2; exit 1; }
  as_pg tee "$DIR/data/pg_hba.conf" >/dev/null <<'EOF'
# courtpiece local server: trust on the unix socket and loopback only.
local   all  all                trust
host    all  all  127.0.0.1/32  trust
host    all  all  ::1/128       trust
EOF
  as_pg tee -a "$DIR/data/postgresql.conf" >/dev/null <<EOF
# courtpiece local settings
listen_addresses = '127.0.0.1'
port = $PORT
unix_socket_directories = ''
max_connections = 300
log_min_messages = warning
EOF
}

start() {
  resolve_dir 1
  [ "$DIR" = "$FALLBACK_DIR" ] && echo "postgres.sh: data dir $DIR"
  if is_running; then
    if wait_ready; then
      echo "postgres.sh: already running on 127.0.0.1:$PORT ($DIR)"
      return 0
    fi
    echo "postgres.sh: running on $DIR but not accepting connections on port $PORT" >&2
    exit 1
  fi
  [ -f "$DIR/data/PG_VERSION" ] || init_cluster
  local opts="-p $PORT -c listen_addresses=127.0.0.1"
  if [ "$FAST" -eq 1 ]; then
    opts="$opts -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  fi
  if ! as_pg "$PG_BIN/pg_ctl" start -D "$DIR/data" -l "$DIR/postgres.log" -w \
      -t "$START_TIMEOUT_S" -o "$opts" >/dev/null; then
    echo "postgres.sh: start failed; last log lines:" >&2
    tail -n 20 "$DIR/postgres.log" >&2 || true
    exit 1
  fi
  if ! wait_ready; then
    echo "postgres.sh: server did not accept connections within ${START_TIMEOUT_S}s" >&2
    exit 1
  fi
  echo "postgres.sh: running on 127.0.0.1:$PORT ($DIR) url $(url)"
}

wait_ready() {
  local i
  for ((i = 0; i < START_TIMEOUT_S * 4; i++)); do
    is_ready && return 0
    sleep 0.25
  done
  return 1
}

stop() {
  resolve_dir 0
  if ! is_running; then
    echo "postgres.sh: not running ($DIR)"
    return 0
  fi
  local pid i
  pid=$(head -n 1 "$DIR/data/postmaster.pid" 2>/dev/null || true)
  as_pg "$PG_BIN/pg_ctl" stop -D "$DIR/data" -m fast -w -t "$START_TIMEOUT_S" >/dev/null
  # pg_ctl returns once postmaster.pid is gone, which the postmaster removes just before it
  # exits: wait for the process itself, so nothing of ours runs when we return.
  if [[ $pid =~ ^[0-9]+$ ]]; then
    for ((i = 0; i < START_TIMEOUT_S * 10; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$pid" 2>/dev/null; then
      echo "postgres.sh: postmaster $pid still running ${START_TIMEOUT_S}s after stop" >&2
      exit 1
    fi
  fi
  echo "postgres.sh: stopped ($DIR)"
}

status() {
  resolve_dir 0
  if ! is_running; then
    echo "postgres.sh: not running ($DIR)"
    exit 3
  fi
  if is_ready; then
    echo "postgres.sh: running on 127.0.0.1:$PORT ($DIR)"
    exit 0
  fi
  echo "postgres.sh: process running but not accepting connections on port $PORT ($DIR)"
  exit 1
}

case "$CMD" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  url) url ;;
  *) usage ;;
esac
