#!/usr/bin/env bash
# End-to-end check of deploy/local/up.sh and down.sh on private ports and a private state
# folder, with the binaries already in build/bin (COURTPIECE_UP_SKIP_BUILD=1: it builds
# nothing). ctest `up_down` (label integration, RUN_SERIAL); by hand: tests/up_down_test.sh.
#
#  1. up: every service's gRPC and /metrics port, the gateway's HTTP port, PostgreSQL and
#     Redis answer; the gateway serves / (web/dist/index.html when built, else its
#     "not built" page); POST /v1/GuestLogin makes a player (1000 coins by GetProfile) and
#     CreateTable a table, owned by one of the two table instances, which are exactly the
#     members of Redis's cp:instances.
#  2. up again: a no-op (says so, exit 0, the same pids everywhere), also after the running
#     wallet's binary was replaced as a relink does.
#  3. down: exit 0, no pid of ours alive, no port answering.
#  4. up again: the same device secret signs the same player in (created false) with the same
#     coins, and the table's code still resolves to the same table.
#  5. the token keys rotated as docs/operations.md says, on the state folder's files: a token
#     of the old key works until its key leaves the verify keys, then 401; then down.
# Prints each step's elapsed seconds. Needs: postgresql-15, redis, curl, python3.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
started_s=$SECONDS
step() { printf '== %s (+%ss)\n' "$1" "$((SECONDS - started_s))"; }
die() { echo "up_down_test: FAIL: $*" >&2; exit 1; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# A block of 30 ports none of which listens: base+1..7 gRPC, +10 PG, +11 Redis, +12 HTTP,
# +21..27 metrics.
pick_base() {
  local base p ok
  for _ in $(seq 1 50); do
    base=$((20000 + (RANDOM % 300) * 40))  # below the ephemeral range (32768+)
    ok=1
    for p in $(seq "$base" $((base + 29))); do
      if port_open "$p"; then ok=0; break; fi
    done
    [ "$ok" = 1 ] && { echo "$base"; return 0; }
  done
  return 1
}
base=$(pick_base) || die "no free block of ports found"

state=$(mktemp -d /tmp/courtpiece-up-down.XXXXXX)
chmod 755 "$state"  # the postgres user must reach $state/pg
export COURTPIECE_STATE_DIR=$state
export COURTPIECE_PORT_BASE=$base
export COURTPIECE_METRICS_PORT_BASE=$((base + 20))
export COURTPIECE_PG_PORT=$((base + 10))
export COURTPIECE_REDIS_PORT=$((base + 11))
export COURTPIECE_GATEWAY_HTTP_PORT=$((base + 12))
export COURTPIECE_UP_SKIP_BUILD=1
http=http://127.0.0.1:$COURTPIECE_GATEWAY_HTTP_PORT
grpc_ports=$(seq $((base + 1)) $((base + 5)); echo $((base + 7)))
metrics_ports=$(seq $((base + 21)) $((base + 25)); echo $((base + 27)))
all_ports="$grpc_ports $metrics_ports $COURTPIECE_PG_PORT $COURTPIECE_REDIS_PORT $COURTPIECE_GATEWAY_HTTP_PORT"
echo "up_down_test: state $state, ports $base..$((base + 29))"

cleanup() {
  local rc=$?
  if [ "$rc" != 0 ]; then
    echo "up_down_test: logs of $state/log:" >&2
    for f in "$state"/log/*.log; do
      [ -f "$f" ] && { echo "--- $f" >&2; tail -n 15 "$f" >&2; }
    done
  fi
  ./deploy/local/down.sh >/dev/null 2>&1 || true
  rm -rf "$state"
  exit "$rc"
}
trap cleanup EXIT

# The pids of everything up.sh started: the services, PostgreSQL's postmaster, Redis.
pids() {
  local f
  for f in "$state"/run/*.pid; do echo "$(basename "$f" .pid)=$(cat "$f")"; done
  echo "postgres=$(head -n 1 "$state/pg/data/postmaster.pid")"
  echo "redis=$(cat "$state/redis/redis.pid")"
}

post() {  # post METHOD JSON [TOKEN]: the reply body; fails unless HTTP 200
  local auth=()
  [ -n "${3:-}" ] && auth=(-H "Authorization: Bearer $3")
  curl -sS --max-time 10 --fail-with-body -X POST -H 'Content-Type: application/json' \
    "${auth[@]}" -d "$2" "$http/v1/$1" || die "POST /v1/$1 $2 failed"
}
field() { python3 -c 'import json,sys; print(json.load(sys.stdin)[sys.argv[1]])' "$1"; }

secret=updown$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')

step "up"
./deploy/local/up.sh >"$state/up1.out" 2>&1 || { cat "$state/up1.out" >&2; die "up.sh failed"; }
for p in $all_ports; do port_open "$p" || die "nothing answers on port $p after up.sh"; done
for p in $metrics_ports; do
  curl -sS --max-time 5 -o /dev/null --fail "http://127.0.0.1:$p/metrics" || die "no /metrics on $p"
done
body=$(curl -sS --max-time 5 --fail "$http/") || die "GET / failed"
if [ -f web/dist/index.html ]; then
  [ "$body" = "$(cat web/dist/index.html)" ] || die "GET / is not web/dist/index.html"
else
  grep -q "Court Piece" <<<"$body" || die "GET / has no Court Piece page: $body"
fi
instances=$(redis-cli -h 127.0.0.1 -p "$COURTPIECE_REDIS_PORT" SMEMBERS cp:instances | sort | tr '\n' ' ')
[ "$instances" = "table-local-1 table-local-2 " ] || die "cp:instances is '$instances'"

session=$(post GuestLogin "{\"deviceSecret\":\"$secret\",\"displayName\":\"Updown\"}")
player=$(field playerId <<<"$session")
[ "$(field created <<<"$session")" = True ] || die "first GuestLogin: created is not true: $session"
token=$(field accessToken <<<"$session")
coins=$(post GetProfile '{}' "$token" | field coins)
[ "$coins" = 1000 ] || die "a new guest has $coins coins, not 1000"
table=$(post CreateTable '{"requestId":"updown-1","options":{"gameOptions":"{\"game\":\"classic\"}","betCoins":"50","turnTimeMs":"15000"}}' "$token")
table_id=$(field tableId <<<"$table")
code=$(field code <<<"$table")
owner=$(redis-cli -h 127.0.0.1 -p "$COURTPIECE_REDIS_PORT" HGET "cp:{$table_id}:owner" instance)
[[ $owner == table-local-[12] ]] || die "table $table_id is owned by '$owner'"
echo "up_down_test: player $player ($coins coins), table $table_id code $code on $owner"

step "up again: a no-op (also after a rebuild replaced a running binary)"
before=$(pids)
# What a relink does to a running service: mold moves the old file aside under a temporary
# name and writes the new one, so the process's exe reads "build/bin/.mold-XXXX (deleted)".
# The same bytes here; up.sh and down.sh must still know the service is ours.
bin=build/bin/courtpiece-wallet
mv "$bin" build/bin/.mold-updown && cp -p build/bin/.mold-updown "$bin" && rm -f build/bin/.mold-updown
./deploy/local/up.sh >"$state/up2.out" 2>&1 || { cat "$state/up2.out" >&2; die "second up.sh failed"; }
grep -q "already up; nothing started" "$state/up2.out" || die "second up.sh did not say it is a no-op"
[ "$(pids)" = "$before" ] || die "second up.sh changed pids: $before -> $(pids)"

step "down"
./deploy/local/down.sh >"$state/down1.out" 2>&1 || { cat "$state/down1.out" >&2; die "down.sh failed"; }
while IFS='=' read -r name pid; do
  ! kill -0 "$pid" 2>/dev/null || die "$name (pid $pid) still alive after down.sh"
done <<<"$before"
for p in $all_ports; do ! port_open "$p" || die "port $p still answers after down.sh"; done
[ -z "$(ls "$state/run")" ] || die "pid files left: $(ls "$state/run")"

step "up after down: the same player, coins and table"
./deploy/local/up.sh >"$state/up3.out" 2>&1 || { cat "$state/up3.out" >&2; die "third up.sh failed"; }
session=$(post GuestLogin "{\"deviceSecret\":\"$secret\"}")
[ "$(field playerId <<<"$session")" = "$player" ] || die "another player after restart: $session"
[ "$(field created <<<"$session")" = False ] || die "GuestLogin after restart made a player"
token=$(field accessToken <<<"$session")
coins_after=$(post GetProfile '{}' "$token" | field coins)
[ "$coins_after" = "$coins" ] || die "coins after restart: $coins_after, before: $coins"
resolved=$(post ResolveCode "{\"code\":\"$code\"}" "$token" | field tableId)
[ "$resolved" = "$table_id" ] || die "code $code resolves to $resolved, not $table_id"

# docs/operations.md "Rotating the token keys", on this suite's files (deploy/local/README.md):
# the lobby, the gateway and moderation read lobby-verify.keys; the lobby signs with
# lobby-signing.key. A token signed with the old key keeps working until step 4.
restart() {  # restart NAME...: SIGTERM them, wait until they exit, then up.sh starts them again
  local name pid pids=()
  for name in "$@"; do
    pid=$(cat "$state/run/$name.pid") || die "no pid file for $name"
    kill -TERM "$pid"
    pids+=("$pid")
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    ! kill -0 "$pid" 2>/dev/null || die "pid $pid did not exit 15 s after SIGTERM"
  done
  ./deploy/local/up.sh >"$state/up-restart.out" 2>&1 || { cat "$state/up-restart.out" >&2; die "up.sh (restart $*) failed"; }
}
status_of() {  # status_of METHOD TOKEN: the HTTP status of POST /v1/METHOD {} with TOKEN
  curl -sS --max-time 10 -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $2" -d '{}' "$http/v1/$1"
}
step "key rotation"
old_token=$token
pair=$(build/bin/courtpiece-keygen --kid k2)
new_seed=$(sed -n 's/^COURTPIECE_LOBBY_SIGNING_KEY=//p' <<<"$pair")
new_pub=$(sed -n 's/^COURTPIECE_LOBBY_VERIFY_KEYS=//p' <<<"$pair")
old_pub=$(cat "$state/lobby-verify.keys")
echo "$old_pub,$new_pub" >"$state/lobby-verify.keys"  # 2. accept both
restart lobby gateway moderation
[ "$(status_of GetProfile "$old_token")" = 200 ] || die "step 2: the old key's token was refused"
echo "$new_seed" >"$state/lobby-signing.key"  # 3. sign with the new key
restart lobby
[ "$(status_of GetProfile "$old_token")" = 200 ] || die "step 3: the old key's token was refused"
new_token=$(post GuestLogin "{\"deviceSecret\":\"$secret\"}" | field accessToken)
[ "$(status_of GetProfile "$new_token")" = 200 ] || die "step 3: the new key's token was refused"
echo "$new_pub" >"$state/lobby-verify.keys"  # 4. drop the old key
restart lobby gateway moderation
[ "$(status_of GetProfile "$old_token")" = 401 ] || die "step 4: the old key's token still works"
[ "$(status_of GetProfile "$new_token")" = 200 ] || die "step 4: the new key's token was refused"

step "down"
./deploy/local/down.sh >"$state/down2.out" 2>&1 || { cat "$state/down2.out" >&2; die "down.sh failed"; }
step "PASS"
