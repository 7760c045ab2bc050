# Shared by up.sh and down.sh: ports, state folder and the services and their environment.
PG_PORT=${COURTPIECE_PG_PORT:-54320}
REDIS_PORT=${COURTPIECE_REDIS_PORT:-63790}
STATE_DIR="$root/.local/dev"
DB_URL="postgresql://postgres@127.0.0.1:$PG_PORT/courtpiece"

# name grpc_port metrics_port
SERVICES=(
  "wallet 50053 9101"
  "lobby 50052 9102"
  "table 50054 9104"
  "moderation 50055 9105"
  "gateway 50051 9103"
)

# Until the moderation service exists, the table sends its abuse reports (and, were the lobby
# not built, its records) to courtpiece-fake-receivers on this port, which acknowledges them
# and logs each as a JSON line (.local/dev/log/records-standin.log).
RECORDS_STANDIN_PORT=50056
# The gateway's HTTP port: the web client, the JSON API, /v1/play and the admin API.
GATEWAY_HTTP_PORT=${COURTPIECE_GATEWAY_HTTP_PORT:-8080}

# Fills ENV_VARS for one service.
service_env() {
  local name=$1 grpc_port=$2 metrics_port=$3 upper
  upper=$(echo "$name" | tr '[:lower:]' '[:upper:]')
  ENV_VARS=(
    "COURTPIECE_${upper}_ADDR=127.0.0.1:$grpc_port"
    "COURTPIECE_${upper}_METRICS_ADDR=127.0.0.1:$metrics_port"
    "COURTPIECE_PG_URL=$DB_URL"
    "COURTPIECE_REDIS_ADDR=127.0.0.1:$REDIS_PORT"
  )
  local key="$STATE_DIR/lobby-signing.key" pub="$STATE_DIR/lobby-verify.keys"
  if [[ $name == lobby || $name == gateway || $name == moderation ]]; then
    # A development key pair, made once (courtpiece-keygen) and kept with the state: the
    # lobby signs with the seed, the gateway verifies with the public key.
    if [ ! -s "$key" ] || [ ! -s "$pub" ]; then
      local pair
      pair=$("$root/build/bin/courtpiece-keygen" --kid dev)
      (umask 077; sed -n 's/^COURTPIECE_LOBBY_SIGNING_KEY=//p' <<<"$pair" >"$key")
      sed -n 's/^COURTPIECE_LOBBY_VERIFY_KEYS=//p' <<<"$pair" >"$pub"
    fi
  fi
  if [[ $name == gateway ]]; then
    ENV_VARS+=(
      "COURTPIECE_GATEWAY_HTTP_ADDR=0.0.0.0:$GATEWAY_HTTP_PORT"
      "COURTPIECE_GATEWAY_LOBBY_ADDR=127.0.0.1:50052"
      "COURTPIECE_GATEWAY_VERIFY_KEYS_FILE=$pub"
      "COURTPIECE_GATEWAY_WEB_ROOT=$root/web/dist"
    )
  fi
  if [[ $name == moderation ]]; then
    ENV_VARS+=(
      "COURTPIECE_MODERATION_LOBBY_ADDR=127.0.0.1:50052"
      "COURTPIECE_MODERATION_VERIFY_KEYS_FILE=$pub"
    )
  fi
  if [[ $name == lobby ]]; then
    ENV_VARS+=(
      "COURTPIECE_LOBBY_WALLET_ADDR=127.0.0.1:50053"
      "COURTPIECE_LOBBY_SIGNING_KEY_FILE=$key"
      "COURTPIECE_LOBBY_INVITE_BASE_URL=http://localhost:$GATEWAY_HTTP_PORT"
    )
  fi
  if [[ $name == table ]]; then
    local lobby=127.0.0.1:50052 moderation=127.0.0.1:50055
    [ -x "$root/build/bin/courtpiece-lobby" ] || lobby=127.0.0.1:$RECORDS_STANDIN_PORT
    [ -x "$root/build/bin/courtpiece-moderation" ] || moderation=127.0.0.1:$RECORDS_STANDIN_PORT
    ENV_VARS+=(
      "COURTPIECE_TABLE_WALLET_ADDR=127.0.0.1:50053"
      "COURTPIECE_TABLE_LOBBY_ADDR=$lobby"
      "COURTPIECE_TABLE_MODERATION_ADDR=$moderation"
      "COURTPIECE_TABLE_INSTANCE_ID=table-local-1"
    )
  fi
}
