#!/usr/bin/env bash
# Stops what deploy/local/up.sh started, gracefully and losing no data: the services in the
# reverse of their start order (the gateway; then both table instances at once, so neither
# adopts the other's tables, while the wallet, lobby and moderation still take their last
# effects; then those three), each group with SIGTERM and a bounded wait (SIGKILL only past
# it, and said so); then Redis (SHUTDOWN: the AOF is flushed and fsynced) and PostgreSQL
# (pg_ctl fast: clients are disconnected, a checkpoint is written; every committed
# transaction stays). Data stays in the state folder (<repo>/.local/dev or
# COURTPIECE_STATE_DIR); remove it to start afresh. Idempotent.
#
#   COURTPIECE_DOWN_WAIT_S  how long each group has to exit after SIGTERM (default 30)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source deploy/local/services.sh
WAIT_S=${COURTPIECE_DOWN_WAIT_S:-30}
status=0

# Sends SIGTERM to every named service that is alive, then waits for all of them.
stop_group() {
  local name pid names=() pids=()
  for name in "$@"; do
    if pid=$(live_pid "$name"); then
      kill -TERM "$pid" 2>/dev/null && { names+=("$name"); pids+=("$pid"); }
    fi
    rm -f "$STATE_DIR/run/$name.pid"
  done
  local deadline=$((SECONDS + WAIT_S)) i alive
  while :; do
    alive=0
    for i in "${!pids[@]}"; do kill -0 "${pids[$i]}" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    ((SECONDS < deadline)) || break
    sleep 0.1
  done
  for i in "${!pids[@]}"; do
    if kill -0 "${pids[$i]}" 2>/dev/null; then
      kill -KILL "${pids[$i]}" 2>/dev/null
      echo "down.sh: ${names[$i]} (pid ${pids[$i]}) did not exit ${WAIT_S}s after SIGTERM: killed" >&2
      status=1
    else
      echo "down.sh: stopped ${names[$i]} (pid ${pids[$i]})"
    fi
  done
}

stop_group gateway
stop_group table-local-1 table-local-2
# Nothing calls these three once the tables are gone: they stop together.
stop_group moderation lobby wallet records-standin
# Pid files of anything else (an earlier layout, e.g. table.pid).
for pidfile in "$STATE_DIR"/run/*.pid; do
  [ -f "$pidfile" ] && stop_group "$(basename "$pidfile" .pid)"
done

./deploy/local/redis.sh stop --port "$REDIS_PORT" --dir "$STATE_DIR/redis" || status=1
./deploy/local/postgres.sh stop --port "$PG_PORT" --dir "$STATE_DIR/pg" || status=1
exit "$status"
