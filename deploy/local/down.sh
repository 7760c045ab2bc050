#!/usr/bin/env bash
# Stops what deploy/local/up.sh started: the services, then Redis and PostgreSQL.
# Data stays in .local/dev (remove that folder to start afresh).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source deploy/local/services.sh
for pidfile in "$STATE_DIR"/run/*.pid; do
  [ -f "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -f "$pidfile"
  echo "stopped $(basename "$pidfile" .pid)"
done
./deploy/local/redis.sh stop --port "$REDIS_PORT" --dir "$STATE_DIR/redis"
./deploy/local/postgres.sh stop --port "$PG_PORT" --dir "$STATE_DIR/pg"
