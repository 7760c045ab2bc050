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

# Fills ENV_VARS for one service.
service_env() {
  local name=$1 grpc_port=$2 metrics_port=$3 upper
  upper=$(echo "$name" | tr '[:lower:]' '[:upper:]')
  local metrics_var="COURTPIECE_${upper}_METRICS_PORT=$metrics_port"
  # The wallet takes a metrics HOST:PORT (COURTPIECE_WALLET_METRICS_PORT is retired).
  [[ $name == wallet ]] && metrics_var="COURTPIECE_WALLET_METRICS_ADDR=127.0.0.1:$metrics_port"
  ENV_VARS=(
    "COURTPIECE_${upper}_ADDR=127.0.0.1:$grpc_port"
    "$metrics_var"
    "COURTPIECE_PG_URL=$DB_URL"
    "COURTPIECE_REDIS_ADDR=127.0.0.1:$REDIS_PORT"
  )
}
