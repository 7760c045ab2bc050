#!/usr/bin/env bash
# The README's run command: installs what is missing, builds (the services and the web
# client), starts a local PostgreSQL
# and Redis (plain processes, data under .local/), applies every service's migrations,
# starts every service that has been built, and prints where to connect.
# Stop everything with deploy/local/down.sh.
#
# Ports (override with the environment): COURTPIECE_PG_PORT=54320, COURTPIECE_REDIS_PORT=63790,
# services from 50051 up (see SERVICES below), metrics from 9101 up, the gateway's
# HTTP on COURTPIECE_GATEWAY_HTTP_PORT=8080.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
source deploy/local/services.sh

./deploy/local/install-deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
# The web client the gateway serves (web/dist).
(cd web && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent >/dev/null)

./deploy/local/postgres.sh start --port "$PG_PORT" --dir "$STATE_DIR/pg"
./deploy/local/redis.sh start --port "$REDIS_PORT" --dir "$STATE_DIR/redis"
admin_url=$(./deploy/local/postgres.sh url --port "$PG_PORT" --dir "$STATE_DIR/pg")
if ! psql "$admin_url" -tAc "SELECT 1 FROM pg_database WHERE datname='courtpiece'" | grep -q 1; then
  psql "$admin_url" -qc "CREATE DATABASE courtpiece"
fi

mkdir -p "$STATE_DIR/run" "$STATE_DIR/log"
started=()
if [ ! -x build/bin/courtpiece-moderation ]; then
  pidfile="$STATE_DIR/run/records-standin.pid"
  if ! { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }; then
    nohup build/bin/courtpiece-fake-receivers --listen="127.0.0.1:$RECORDS_STANDIN_PORT" \
      >>"$STATE_DIR/log/records-standin.log" 2>&1 &
    echo $! >"$pidfile"
  fi
  started+=("records-standin 127.0.0.1:$RECORDS_STANDIN_PORT (stands in for moderation's report intake until it is built), log $STATE_DIR/log/records-standin.log")
fi
for entry in "${SERVICES[@]}"; do
  read -r name grpc_port metrics_port <<<"$entry"
  bin="build/bin/courtpiece-$name"
  [ -x "$bin" ] || continue
  if [ -d "services/$name/migrations" ]; then
    build/bin/courtpiece-migrate --pg-url "$DB_URL" --schema "$name" --dir "services/$name/migrations"
  fi
  pidfile="$STATE_DIR/run/$name.pid"
  if [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; then
    started+=("$name 127.0.0.1:$grpc_port (already running)")
    continue
  fi
  service_env "$name" "$grpc_port" "$metrics_port"
  nohup env "${ENV_VARS[@]}" "$bin" >>"$STATE_DIR/log/$name.log" 2>&1 &
  echo $! >"$pidfile"
  started+=("$name 127.0.0.1:$grpc_port (gRPC), metrics http://127.0.0.1:$metrics_port/metrics, log $STATE_DIR/log/$name.log")
done

sleep 1
for entry in "${started[@]}"; do
  name=${entry%% *}
  pid=$(cat "$STATE_DIR/run/$name.pid")
  kill -0 "$pid" 2>/dev/null || { echo "up.sh: $name exited at start; see $STATE_DIR/log/$name.log" >&2; exit 1; }
done

cat <<MSG

Court Piece is up.
  PostgreSQL  $DB_URL
  Redis       127.0.0.1:$REDIS_PORT
MSG
for s in "${started[@]}"; do echo "  $s"; done
[ ${#started[@]} -gt 0 ] || echo "  (no service binaries built yet)"
if [ -x build/bin/courtpiece-gateway ]; then
  cat <<MSG

  Play in a browser:   http://localhost:$GATEWAY_HTTP_PORT/
  Mobile (gRPC):       127.0.0.1:50051  (courtpiece.client.v1.CourtPiece, docs/client-api.md)
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
