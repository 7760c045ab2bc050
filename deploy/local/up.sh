#!/usr/bin/env bash
# The README's run command: installs what is missing, builds (the services and the web
# client), starts a local PostgreSQL and Redis (plain processes, data under the state
# folder), applies every service's migrations, starts the whole suite (wallet, lobby,
# moderation, two table instances, gateway), waits until each one answers, and prints where
# to connect. Stop everything with deploy/local/down.sh (no data is lost).
#
# A second run while everything is up is a no-op: it builds nothing, starts nothing, says
# so and exits 0 (to run a new build: down.sh, then up.sh). A run while only some of it is
# up starts what is missing and leaves the rest alone.
#
# Environment (defaults in deploy/local/services.sh; deploy/local/README.md):
#   COURTPIECE_PG_PORT, COURTPIECE_REDIS_PORT, COURTPIECE_GATEWAY_HTTP_PORT,
#   COURTPIECE_PORT_BASE, COURTPIECE_METRICS_PORT_BASE, COURTPIECE_STATE_DIR
#   COURTPIECE_UP_SKIP_BUILD=1  no install, no build, no web build: use what is in build/bin
#                               and web/dist (tests/up_down_test.sh)
#   COURTPIECE_UP_WAIT_S        how long each service has to answer (default 60)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source deploy/local/services.sh
take_lock up.sh
WAIT_S=${COURTPIECE_UP_WAIT_S:-60}
SKIP_BUILD=${COURTPIECE_UP_SKIP_BUILD:-0}
REGISTRY_PREFIX="cp:"  # the table tier's Redis keys (libs/placement RegistryKeys)

built() { [ -x "build/bin/courtpiece-$1" ]; }

# Whether the whole suite (every built service) is running already.
everything_up() {
  ./deploy/local/postgres.sh status --port "$PG_PORT" --dir "$STATE_DIR/pg" >/dev/null 2>&1 ||
    return 1
  ./deploy/local/redis.sh status --port "$REDIS_PORT" --dir "$STATE_DIR/redis" >/dev/null 2>&1 ||
    return 1
  local entry name binary any=0
  for entry in "${SERVICES[@]}"; do
    read -r name binary _ <<<"$entry"
    built "$binary" || continue
    any=1
    live_pid "$name" >/dev/null || return 1
  done
  if ! built moderation; then live_pid records-standin >/dev/null || return 1; fi
  [ "$any" = 1 ]
}

summary() {
  local entry name binary grpc_port metrics_port pid
  cat <<MSG
  PostgreSQL  $DB_URL  (data $STATE_DIR/pg)
  Redis       127.0.0.1:$REDIS_PORT  (AOF, $STATE_DIR/redis)
MSG
  for entry in "${SERVICES[@]}"; do
    read -r name binary grpc_port metrics_port <<<"$entry"
    pid=$(live_pid "$name") || continue
    printf '  %-14s 127.0.0.1:%s (gRPC), metrics http://127.0.0.1:%s/metrics, pid %s, log %s\n' \
      "$name" "$grpc_port" "$metrics_port" "$pid" "$STATE_DIR/log/$name.log"
  done
  if pid=$(live_pid records-standin); then
    printf '  %-14s 127.0.0.1:%s (stands in for moderation until it is built), pid %s\n' \
      records-standin "$RECORDS_STANDIN_PORT" "$pid"
  fi
  if built gateway; then
    cat <<MSG

  Play in a browser:   http://localhost:$GATEWAY_HTTP_PORT/
  Mobile (gRPC):       127.0.0.1:$GATEWAY_PORT  (courtpiece.client.v1.CourtPiece, docs/client-api.md)
  Admin API:           http://localhost:$GATEWAY_HTTP_PORT/admin/v1/<Method>  (docs/gateway.md)
                       players: GetPlayer, ListQuits, ListRounds; moderation: ListReports,
                       GetReport, ResolveReport, MutePlayer, ListMutes, LiftMute, ListAudit
  An admin token:      sign in once as a guest, then
    COURTPIECE_PG_URL=$DB_URL build/bin/courtpiece-admin grant <player-id> --reason "ops"
    COURTPIECE_PG_URL=$DB_URL COURTPIECE_LOBBY_SIGNING_KEY_FILE=$STATE_DIR/lobby-signing.key \\
      build/bin/courtpiece-admin token <player-id>
MSG
  fi
  echo "Stop everything with: deploy/local/down.sh"
}

if everything_up; then
  echo "Court Piece is already up; nothing started (to run a new build: deploy/local/down.sh, then up.sh)."
  summary
  exit 0
fi

if [ "$SKIP_BUILD" = 1 ]; then
  for b in migrate keygen gateway; do
    built "$b" || { echo "up.sh: COURTPIECE_UP_SKIP_BUILD=1 but build/bin/courtpiece-$b is missing" >&2; exit 1; }
  done
else
  ./deploy/local/install-deps.sh
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build build -j"$(nproc)"
  # The web client the gateway serves (web/dist).
  (cd web && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent >/dev/null)
fi

mkdir -p "$STATE_DIR/run" "$STATE_DIR/log"
./deploy/local/postgres.sh start --port "$PG_PORT" --dir "$STATE_DIR/pg" 9>&-
./deploy/local/redis.sh start --port "$REDIS_PORT" --dir "$STATE_DIR/redis" 9>&-
admin_url=$(./deploy/local/postgres.sh url --port "$PG_PORT" --dir "$STATE_DIR/pg")
if ! psql "$admin_url" -tAc "SELECT 1 FROM pg_database WHERE datname='courtpiece'" | grep -q 1; then
  psql "$admin_url" -qc "CREATE DATABASE courtpiece"
fi

# Stops up.sh with the reason and the tail of the service's log.
fail() {
  local name=$1 why=$2
  echo "up.sh: $name $why; last lines of $STATE_DIR/log/$name.log:" >&2
  tail -n 25 "$STATE_DIR/log/$name.log" >&2 || true
  echo "up.sh: what started before it is left running; stop it with deploy/local/down.sh" >&2
  exit 1
}

# Waits (bounded by WAIT_S) until $name (pid) accepts connections on each port and, for a
# table instance, has registered its heartbeat in Redis.
wait_ready() {
  local name=$1 pid=$2 binary=$3
  shift 3
  local deadline=$((SECONDS + WAIT_S)) port
  for port in "$@"; do
    until port_open "$port"; do
      kill -0 "$pid" 2>/dev/null || fail "$name" "exited at start"
      ((SECONDS < deadline)) || fail "$name" "did not answer on 127.0.0.1:$port within ${WAIT_S}s"
      sleep 0.1
    done
  done
  if [ "$binary" = table ]; then
    until [ "$(redis-cli -h 127.0.0.1 -p "$REDIS_PORT" EXISTS "${REGISTRY_PREFIX}instance:$name" 2>/dev/null)" = 1 ]; do
      kill -0 "$pid" 2>/dev/null || fail "$name" "exited at start"
      ((SECONDS < deadline)) || fail "$name" "did not register in Redis within ${WAIT_S}s"
      sleep 0.1
    done
  fi
}

# Starts one service unless it runs already: name binary ports... (the first port is its
# gRPC port; every one is checked free before and waited for after), with the environment
# ENV_VARS and the arguments ARGS.
start_service() {
  local name=$1 binary=$2 grpc_port=$3 pid port
  shift 3
  if pid=$(live_pid "$name"); then
    echo "up.sh: $name already running (pid $pid); left alone"
    return 0
  fi
  for port in "$grpc_port" "$@"; do
    if port_open "$port"; then
      echo "up.sh: $name cannot start: something else listens on 127.0.0.1:$port" \
        "(move the ports with COURTPIECE_PORT_BASE / COURTPIECE_METRICS_PORT_BASE /" \
        "COURTPIECE_GATEWAY_HTTP_PORT)" >&2
      exit 1
    fi
  done
  # up.sh's own inputs are not the services' settings (each warns of a COURTPIECE_<ITS NAME>_
  # variable it does not read).
  nohup env -u COURTPIECE_GATEWAY_HTTP_PORT "${ENV_VARS[@]}" "$root/build/bin/courtpiece-$binary" "${ARGS[@]}" \
    >>"$STATE_DIR/log/$name.log" 2>&1 9>&- &
  pid=$!
  echo "$pid" >"$STATE_DIR/run/$name.pid"
  wait_ready "$name" "$pid" "$binary" "$grpc_port" "$@"
  echo "up.sh: $name started (pid $pid)"
}

if ! built moderation; then
  ENV_VARS=()
  ARGS=("--listen=127.0.0.1:$RECORDS_STANDIN_PORT")
  start_service records-standin fake-receivers "$RECORDS_STANDIN_PORT"
fi
ARGS=()
migrated=" "
for entry in "${SERVICES[@]}"; do
  read -r name binary grpc_port metrics_port <<<"$entry"
  built "$binary" || continue
  if ! live_pid "$name" >/dev/null && [ -d "services/$binary/migrations" ] &&
    [[ $migrated != *" $binary "* ]]; then
    build/bin/courtpiece-migrate --pg-url "$DB_URL" --schema "$binary" \
      --dir "services/$binary/migrations"
    migrated+="$binary "
  fi
  service_env "$name" "$binary" "$grpc_port" "$metrics_port"
  extra=("$metrics_port")
  [ "$binary" = gateway ] && extra+=("$GATEWAY_HTTP_PORT")
  start_service "$name" "$binary" "$grpc_port" "${extra[@]}"
done

echo
echo "Court Piece is up."
summary
