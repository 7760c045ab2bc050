#!/usr/bin/env bash
# Stops what deploy/local/up.sh started, gracefully and losing no data: the services with
# SIGTERM in the reverse of their start order (the gateway; then both table instances at
# once, so neither adopts the other's tables, while the wallet, lobby and moderation still
# take their last effects; then those three), each group once the one before has stopped
# serving (closed its gRPC port); then it waits for every process to exit (bounded: SIGKILL
# only past the bound, and said so); then Redis (SHUTDOWN: the AOF is flushed and fsynced)
# and PostgreSQL (pg_ctl fast: clients are disconnected, a checkpoint is written; every
# committed transaction stays). Data stays in the state folder (<repo>/.local/dev or
# COURTPIECE_STATE_DIR); remove it to start afresh. Idempotent.
#
#   COURTPIECE_DOWN_WAIT_S  bound on each wait: a group to stop serving, all to exit (default 30)
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 1
source deploy/local/services.sh
take_lock down.sh
WAIT_S=${COURTPIECE_DOWN_WAIT_S:-30}
status=0

declare -A grpc_port_of=([records-standin]=$RECORDS_STANDIN_PORT)
for entry in "${SERVICES[@]}"; do
  read -r name _ port _ <<<"$entry"
  grpc_port_of[$name]=$port
done
stopping_names=()
stopping_pids=()

# Sends SIGTERM to every named service that is alive and waits (bounded) until each has
# exited or closed its gRPC port: it has then stopped serving (tables saved and handed
# over, calls drained); what is left is the process's teardown, which finish_all waits for.
stop_group() {
  local name pid pids=() ports=()
  for name in "$@"; do
    if pid=$(live_pid "$name") && kill -TERM "$pid" 2>/dev/null; then
      stopping_names+=("$name")
      stopping_pids+=("$pid")
      pids+=("$pid")
      ports+=("${grpc_port_of[$name]:-}")
    elif pid=$(cat "$STATE_DIR/run/$name.pid" 2>/dev/null) && [[ $pid =~ ^[0-9]+$ ]] &&
        kill -0 "$pid" 2>/dev/null; then
      # Alive but not one of this tree's binaries: a reused pid, or something we cannot
      # tell is ours. Say so rather than forget it silently.
      echo "down.sh: $name's pid file names pid $pid, alive but not a build/bin binary of this tree: left running ($(readlink "/proc/$pid/exe" 2>/dev/null))" >&2
      status=1
    fi
    rm -f "$STATE_DIR/run/$name.pid"
  done
  local deadline=$((SECONDS + WAIT_S)) i serving
  while ((SECONDS < deadline)); do
    serving=0
    for i in "${!pids[@]}"; do
      if kill -0 "${pids[$i]}" 2>/dev/null && { [ -z "${ports[$i]}" ] || port_open "${ports[$i]}"; }; then
        serving=1
      fi
    done
    [ "$serving" = 0 ] && return 0
    sleep 0.1
  done
}

# Waits (bounded) for every process signalled to exit; SIGKILL (said so) past the bound.
finish_all() {
  local deadline=$((SECONDS + WAIT_S)) i alive
  while :; do
    alive=0
    for i in "${!stopping_pids[@]}"; do kill -0 "${stopping_pids[$i]}" 2>/dev/null && alive=1; done
    [ "$alive" = 0 ] && break
    ((SECONDS < deadline)) || break
    sleep 0.1
  done
  for i in "${!stopping_pids[@]}"; do
    if kill -0 "${stopping_pids[$i]}" 2>/dev/null; then
      kill -KILL "${stopping_pids[$i]}" 2>/dev/null
      echo "down.sh: ${stopping_names[$i]} (pid ${stopping_pids[$i]}) did not exit ${WAIT_S}s after SIGTERM: killed" >&2
      status=1
    else
      echo "down.sh: stopped ${stopping_names[$i]} (pid ${stopping_pids[$i]})"
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
finish_all

./deploy/local/redis.sh stop --port "$REDIS_PORT" --dir "$STATE_DIR/redis" || status=1
./deploy/local/postgres.sh stop --port "$PG_PORT" --dir "$STATE_DIR/pg" || status=1
exit "$status"
