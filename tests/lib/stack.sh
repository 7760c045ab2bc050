# A whole local stack on free loopback ports, for scripts that drive it as clients do
# (tools/gateway_load/run_load.sh, tests/web_e2e.sh). Source it, then call stack_start.
#
#   stack_start PG_HOST:PORT REDIS_HOST:PORT DATABASE REDIS_DB [table env assignments...]
#
# Makes a fresh database DATABASE (wallet, lobby and moderation schemas migrated), flushes
# Redis database REDIS_DB, makes a key pair (courtpiece-keygen), and starts on free ports:
# courtpiece-wallet, courtpiece-moderation (voice notes, reports, the admin moderation API),
# one courtpiece-table instance (with the extra env assignments), courtpiece-lobby and
# courtpiece-gateway. Sets: stack_work (logs), gateway_pid, table_port, gw_http_port,
# gw_grpc_port, lobby_port, wallet_port, moderation_port, stack_signing_key, stack_db_url. Every process is stopped
# (SIGTERM) by stack_stop, which the caller puts in its EXIT trap. Needs $bin (the build's
# bin directory) and $root (the source tree).
# Also sets the pids wallet_pid, moderation_pid, table_pid, lobby_pid. With
# STACK_TABLE_INSTANCES=2 set before stack_start, a second table instance runs beside the
# first (same env, its own port and instance id: table2_port, table2_pid); unset or 1: one,
# as before. stack_table_restart N starts instance N (1 or 2) again on its port after it
# died (a new instance id; sets table_pid or table2_pid). STACK_GATEWAY_ENV: extra
# space-separated assignments for the gateway (COURTPIECE_GATEWAY_GRPC_FRONT=libgrpc, say).
stack_pids=()
stack_work=""
stack_table_env=()
stack_table_restarts=0

stack_stop() {
  local p
  for p in "${stack_pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${stack_pids[@]}"; do wait "$p" 2>/dev/null || true; done
  stack_pids=()
  [[ -n $stack_work ]] && rm -rf "$stack_work"
  stack_work=""
}

# A random free port below the kernel's ephemeral range (32768..), so that no client
# socket of the busy test run takes it before our server binds it (FreeLoopbackPort in
# libs/common/include/courtpiece/common/process_testing.h does the same).
stack_free_port() {
  python3 -c '
import random, socket
for _ in range(64):
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", random.randint(20000, 32767)))
        print(s.getsockname()[1])
        break
    except OSError:
        pass
    finally:
        s.close()
else:
    s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()
'
}

stack_wait_port() {
  local _
  for _ in $(seq 150); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0; sleep 0.1; done
  echo "nothing listens on $1 (logs: $stack_work)" >&2
  return 1
}

# name, then env assignments and the binary; its pid in $started.
stack_run() {
  local name=$1; shift
  env COURTPIECE_LOG_LEVEL=warn COURTPIECE_REDIS_ADDR="$stack_redis" "$@" \
    >"$stack_work/$name.log" 2>&1 &
  started=$!
  stack_pids+=("$started")
}

stack_start() {
  local pg=$1 redis=$2 database=$3 redis_db=$4
  shift 4
  local b
  for b in courtpiece-wallet courtpiece-lobby courtpiece-table courtpiece-gateway \
           courtpiece-moderation courtpiece-migrate courtpiece-keygen; do
    [[ -x $bin/$b ]] || { echo "$bin/$b is not built (cmake --build build --target $b)" >&2; return 2; }
  done
  stack_redis=$redis
  stack_work=$(mktemp -d)
  local url="postgresql://postgres@$pg"
  PGOPTIONS="-c client_min_messages=warning" psql -q "$url/postgres" \
    -c "DROP DATABASE IF EXISTS $database" -c "CREATE DATABASE $database"
  local schema
  stack_db_url="$url/$database"
  for schema in wallet lobby moderation; do
    "$bin/courtpiece-migrate" --pg-url "$url/$database" --schema $schema \
      --dir "$root/services/$schema/migrations" >/dev/null
  done
  redis-cli -h "${redis%:*}" -p "${redis##*:}" -n "$redis_db" FLUSHDB >/dev/null
  local keys verify
  keys=$("$bin/courtpiece-keygen" --kid stack)
  stack_signing_key=$(sed -n 's/^COURTPIECE_LOBBY_SIGNING_KEY=//p' <<<"$keys")
  verify=$(sed -n 's/^COURTPIECE_LOBBY_VERIFY_KEYS=//p' <<<"$keys")
  [[ -n $stack_signing_key && -n $verify ]] || { echo "courtpiece-keygen printed no key pair" >&2; return 1; }
  wallet_port=$(stack_free_port) lobby_port=$(stack_free_port) table_port=$(stack_free_port)
  moderation_port=$(stack_free_port)
  gw_grpc_port=$(stack_free_port) gw_http_port=$(stack_free_port)

  stack_run wallet COURTPIECE_PG_URL="$url/$database" COURTPIECE_WALLET_ADDR="127.0.0.1:$wallet_port" \
    COURTPIECE_WALLET_METRICS_ADDR=off "$bin/courtpiece-wallet"
  wallet_pid=$started
  stack_run moderation COURTPIECE_PG_URL="$url/$database" \
    COURTPIECE_MODERATION_ADDR="127.0.0.1:$moderation_port" COURTPIECE_MODERATION_METRICS_ADDR=off \
    COURTPIECE_MODERATION_REDIS_DB="$redis_db" COURTPIECE_MODERATION_VERIFY_KEYS="$verify" \
    COURTPIECE_MODERATION_LOBBY_ADDR="127.0.0.1:$lobby_port" "$bin/courtpiece-moderation"
  moderation_pid=$started
  stack_wait_port "$wallet_port"
  stack_wait_port "$moderation_port"
  stack_table_env=(COURTPIECE_TABLE_REDIS_DB="$redis_db" COURTPIECE_TABLE_METRICS_ADDR=off
    COURTPIECE_TABLE_WALLET_ADDR="127.0.0.1:$wallet_port"
    COURTPIECE_TABLE_LOBBY_ADDR="127.0.0.1:$lobby_port"
    COURTPIECE_TABLE_MODERATION_ADDR="127.0.0.1:$moderation_port" "$@")
  stack_run table COURTPIECE_TABLE_ADDR="127.0.0.1:$table_port" \
    COURTPIECE_TABLE_INSTANCE_ID="stack-$$" "${stack_table_env[@]}" "$bin/courtpiece-table"
  table_pid=$started
  stack_wait_port "$table_port"
  if [[ ${STACK_TABLE_INSTANCES:-1} == 2 ]]; then
    table2_port=$(stack_free_port)
    stack_run table2 COURTPIECE_TABLE_ADDR="127.0.0.1:$table2_port" \
      COURTPIECE_TABLE_INSTANCE_ID="stack-$$-2" "${stack_table_env[@]}" "$bin/courtpiece-table"
    table2_pid=$started
    stack_wait_port "$table2_port"
  fi
  stack_run lobby COURTPIECE_PG_URL="$url/$database" COURTPIECE_LOBBY_ADDR="127.0.0.1:$lobby_port" \
    COURTPIECE_LOBBY_METRICS_ADDR=off COURTPIECE_LOBBY_WALLET_ADDR="127.0.0.1:$wallet_port" \
    COURTPIECE_LOBBY_REDIS_DB="$redis_db" COURTPIECE_LOBBY_SIGNING_KEY="$stack_signing_key" \
    COURTPIECE_LOBBY_INVITE_BASE_URL="http://127.0.0.1:$gw_http_port" "$bin/courtpiece-lobby"
  lobby_pid=$started
  stack_wait_port "$lobby_port"
  stack_run gateway COURTPIECE_GATEWAY_ADDR="127.0.0.1:$gw_grpc_port" \
    COURTPIECE_GATEWAY_HTTP_ADDR="127.0.0.1:$gw_http_port" COURTPIECE_GATEWAY_METRICS_ADDR=off \
    COURTPIECE_GATEWAY_LOBBY_ADDR="127.0.0.1:$lobby_port" COURTPIECE_GATEWAY_REDIS_DB="$redis_db" \
    COURTPIECE_GATEWAY_MODERATION_ADDR="127.0.0.1:$moderation_port" \
    COURTPIECE_GATEWAY_VERIFY_KEYS="$verify" COURTPIECE_GATEWAY_WEB_ROOT="$root/web/dist" \
    COURTPIECE_GATEWAY_CONNECTIONS_MAX=30000 COURTPIECE_GATEWAY_CONNECTIONS_PER_IP_MAX=30000 \
    COURTPIECE_GATEWAY_GRPC_STREAMS_PER_IP_MAX=30000 \
    COURTPIECE_GATEWAY_GRPC_CONNECTIONS_PER_IP_MAX=30000 ${STACK_GATEWAY_ENV:-} \
    "$bin/courtpiece-gateway"
  gateway_pid=$started
  stack_wait_port "$gw_http_port"
  stack_wait_port "$gw_grpc_port"
  sleep 1  # the table's first heartbeat: CreateTable needs a live instance
}

# Starts table instance N (1 or 2) again on its port, after it died (a kill -9 in a soak).
stack_table_restart() {
  local n=$1 port name
  stack_table_restarts=$((stack_table_restarts + 1))
  if [[ $n == 1 ]]; then port=$table_port name=table; else port=$table2_port name=table2; fi
  stack_run "$name-r$stack_table_restarts" COURTPIECE_TABLE_ADDR="127.0.0.1:$port" \
    COURTPIECE_TABLE_INSTANCE_ID="stack-$$-r$stack_table_restarts" "${stack_table_env[@]}" \
    "$bin/courtpiece-table"
  if [[ $n == 1 ]]; then table_pid=$started; else table2_pid=$started; fi
  stack_wait_port "$port"
}
