# shellcheck shell=bash disable=SC2034  # sourced: the variables are used by up.sh and down.sh
# Shared by up.sh and down.sh: ports, state folder, the services and their environment.
# Sourced with $root set to the repository. Every port and the state folder can be moved
# with the environment (deploy/local/README.md):
#   COURTPIECE_PG_PORT (54320)  COURTPIECE_REDIS_PORT (63790)
#   COURTPIECE_GATEWAY_HTTP_PORT (8080)
#   COURTPIECE_PORT_BASE (50050): gRPC ports are base+1..base+7 (gateway +1, lobby +2,
#     wallet +3, table-local-1 +4, moderation +5, records stand-in +6, table-local-2 +7)
#   COURTPIECE_METRICS_PORT_BASE (9100): /metrics ports are base+1..base+7 likewise
#     (wallet +1, lobby +2, gateway +3, table-local-1 +4, moderation +5, table-local-2 +7)
#   COURTPIECE_STATE_DIR (<repo>/.local/dev): data, logs, pid files, the dev token keys
PG_PORT=${COURTPIECE_PG_PORT:-54320}
REDIS_PORT=${COURTPIECE_REDIS_PORT:-63790}
PORT_BASE=${COURTPIECE_PORT_BASE:-50050}
METRICS_PORT_BASE=${COURTPIECE_METRICS_PORT_BASE:-9100}
STATE_DIR=${COURTPIECE_STATE_DIR:-$root/.local/dev}
DB_URL="postgresql://postgres@127.0.0.1:$PG_PORT/courtpiece"
for v in PG_PORT REDIS_PORT PORT_BASE METRICS_PORT_BASE; do
  [[ ${!v} =~ ^[0-9]+$ ]] || { echo "deploy/local: $v='${!v}' is not a number" >&2; exit 2; }
done

GATEWAY_PORT=$((PORT_BASE + 1))
LOBBY_PORT=$((PORT_BASE + 2))
WALLET_PORT=$((PORT_BASE + 3))
MODERATION_PORT=$((PORT_BASE + 5))
# Only in a tree where courtpiece-moderation (or the lobby) is not built: the table then sends
# its abuse reports (or records) to courtpiece-fake-receivers on this port, which acknowledges
# them and logs each as a JSON line (<state>/log/records-standin.log).
RECORDS_STANDIN_PORT=$((PORT_BASE + 6))
# The gateway's HTTP port: the web client, the JSON API, /v1/play and the admin API.
GATEWAY_HTTP_PORT=${COURTPIECE_GATEWAY_HTTP_PORT:-8080}

# In start order (down.sh stops in the reverse order): name binary grpc_port metrics_port.
# The two table instances share the binary and Redis; each registers itself in the table
# tier's registry (cp:instances) and the lobby places new tables across the live ones.
SERVICES=(
  "wallet wallet $WALLET_PORT $((METRICS_PORT_BASE + 1))"
  "lobby lobby $LOBBY_PORT $((METRICS_PORT_BASE + 2))"
  "moderation moderation $MODERATION_PORT $((METRICS_PORT_BASE + 5))"
  "table-local-1 table $((PORT_BASE + 4)) $((METRICS_PORT_BASE + 4))"
  "table-local-2 table $((PORT_BASE + 7)) $((METRICS_PORT_BASE + 7))"
  "gateway gateway $GATEWAY_PORT $((METRICS_PORT_BASE + 3))"
)

# The pid in $STATE_DIR/run/<name>.pid when that process is alive and is one of our
# binaries (a pid file left behind whose pid was reused by something else does not count).
live_pid() {
  local pidfile="$STATE_DIR/run/$1.pid" pid exe
  [ -f "$pidfile" ] || return 1
  pid=$(cat "$pidfile" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  kill -0 "$pid" 2>/dev/null || return 1
  exe=$(readlink "/proc/$pid/exe" 2>/dev/null) || return 1
  # exe is the resolved path; after a rebuild it ends " (deleted)" and may even name the
  # linker's temporary file (mold relinks through ".mold-XXXXXX": the old binary then reads
  # as "build/bin/.mold-jNAp6r (deleted)"), so what counts is the folder it ran from: ours.
  # build/ or build/bin may be symlinks, so resolve the folder itself, and keep the
  # repo-root form for a build/ that is gone (its processes are still ours to stop).
  local bin_dir exe_dir
  bin_dir=$(cd "$root/build/bin" 2>/dev/null && pwd -P) || bin_dir=""
  exe_dir=${exe% (deleted)}
  exe_dir=${exe_dir%/*}
  [[ ( -n $bin_dir && $exe_dir == "$bin_dir" ) ||
     $exe_dir == "$(cd "$root" && pwd -P)/build/bin" ]] || return 1
  echo "$pid"
}

# One up.sh or down.sh at a time per state folder: $1 names the caller. The lock is fd 9;
# nothing long-lived may inherit it (a daemon holding it would keep the lock after the
# script ends), so every server the scripts start gets `9>&-`.
take_lock() {
  mkdir -p "$STATE_DIR"
  exec 9>"$STATE_DIR/.lock"
  flock -n 9 || {
    echo "$1: another up.sh or down.sh is running on $STATE_DIR; try again when it is done" >&2
    exit 1
  }
}

# Whether something accepts TCP connections on 127.0.0.1:$1.
port_open() {
  (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Fills ENV_VARS for one service: name binary grpc_port metrics_port.
service_env() {
  local name=$1 binary=$2 grpc_port=$3 metrics_port=$4 upper
  upper=$(echo "$binary" | tr '[:lower:]' '[:upper:]')
  ENV_VARS=(
    "COURTPIECE_${upper}_ADDR=127.0.0.1:$grpc_port"
    "COURTPIECE_${upper}_METRICS_ADDR=127.0.0.1:$metrics_port"
    "COURTPIECE_PG_URL=$DB_URL"
    "COURTPIECE_REDIS_ADDR=127.0.0.1:$REDIS_PORT"
  )
  local key="$STATE_DIR/lobby-signing.key" pub="$STATE_DIR/lobby-verify.keys"
  if [[ $binary == lobby || $binary == gateway || $binary == moderation ]]; then
    # A development key pair, made once (courtpiece-keygen) and kept with the state: the
    # lobby signs with the seed; the lobby, the gateway and moderation verify with the
    # public keys in one file (a rotation edits it: deploy/local/README.md).
    if [ ! -s "$key" ] || [ ! -s "$pub" ]; then
      local pair
      pair=$("$root/build/bin/courtpiece-keygen" --kid dev)
      (umask 077; sed -n 's/^COURTPIECE_LOBBY_SIGNING_KEY=//p' <<<"$pair" >"$key")
      sed -n 's/^COURTPIECE_LOBBY_VERIFY_KEYS=//p' <<<"$pair" >"$pub"
    fi
  fi
  case $binary in
    gateway)
      ENV_VARS+=(
        "COURTPIECE_GATEWAY_HTTP_ADDR=0.0.0.0:$GATEWAY_HTTP_PORT"
        "COURTPIECE_GATEWAY_LOBBY_ADDR=127.0.0.1:$LOBBY_PORT"
        "COURTPIECE_GATEWAY_MODERATION_ADDR=127.0.0.1:$MODERATION_PORT"
        "COURTPIECE_GATEWAY_VERIFY_KEYS_FILE=$pub"
        "COURTPIECE_GATEWAY_WEB_ROOT=$root/web/dist"
      )
      ;;
    moderation)
      ENV_VARS+=(
        "COURTPIECE_MODERATION_LOBBY_ADDR=127.0.0.1:$LOBBY_PORT"
        "COURTPIECE_MODERATION_VERIFY_KEYS_FILE=$pub"
      )
      ;;
    lobby)
      ENV_VARS+=(
        "COURTPIECE_LOBBY_WALLET_ADDR=127.0.0.1:$WALLET_PORT"
        "COURTPIECE_LOBBY_SIGNING_KEY_FILE=$key"
        "COURTPIECE_LOBBY_VERIFY_KEYS_FILE=$pub"
        "COURTPIECE_LOBBY_INVITE_BASE_URL=http://localhost:$GATEWAY_HTTP_PORT"
      )
      ;;
    table)
      local lobby=127.0.0.1:$LOBBY_PORT moderation=127.0.0.1:$MODERATION_PORT
      [ -x "$root/build/bin/courtpiece-lobby" ] || lobby=127.0.0.1:$RECORDS_STANDIN_PORT
      [ -x "$root/build/bin/courtpiece-moderation" ] || moderation=127.0.0.1:$RECORDS_STANDIN_PORT
      ENV_VARS+=(
        "COURTPIECE_TABLE_WALLET_ADDR=127.0.0.1:$WALLET_PORT"
        "COURTPIECE_TABLE_LOBBY_ADDR=$lobby"
        "COURTPIECE_TABLE_MODERATION_ADDR=$moderation"
        "COURTPIECE_TABLE_INSTANCE_ID=$name"
      )
      ;;
  esac
}
