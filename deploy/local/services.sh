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
  if [[ $name == lobby ]]; then
    # A development signing key, made once (courtpiece-keygen) and kept with the state.
    local key="$STATE_DIR/lobby-signing.key"
    if [ ! -s "$key" ]; then
      (umask 077; "$root/build/bin/courtpiece-keygen" --kid dev |
        sed -n 's/^COURTPIECE_LOBBY_SIGNING_KEY=//p' >"$key")
    fi
    ENV_VARS+=(
      "COURTPIECE_LOBBY_WALLET_ADDR=127.0.0.1:50053"
      "COURTPIECE_LOBBY_SIGNING_KEY_FILE=$key"
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
