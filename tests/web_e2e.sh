#!/usr/bin/env bash
# The web client in a real browser against the real suite (issue 13's end-to-end test):
# builds web/ (npm ci, vite), starts the stack of tests/lib/stack.sh (wallet, lobby,
# moderation, a table instance, the gateway serving web/dist) on free ports against the
# given Postgres and Redis, and runs `npm run e2e:real` (Playwright with Debian's Chromium:
# four players create, join by code / link / quick join, play a whole game and a round of
# every type by clicking, reload, come back; voice notes recorded with the fake microphone,
# played, reported, resolved with a mute by an admin made with courtpiece-admin, the next
# note refused as muted). Screenshots land in web/test-results/. Then, against the same stack,
# tools/grpc_js_interop: the gRPC port with @grpc/grpc-js (another HTTP/2 stack than C-core's).
#   tests/web_e2e.sh --pg HOST:PORT --redis HOST:PORT [--redis-db 5] [--bin build/bin]
#                    [--no-web-build]   (web/dist is already built: tests/run.sh builds it)
set -euo pipefail
pg="" redis="" redis_db=5 bin="build/bin" web_build=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --pg) pg=$2; shift 2 ;;
    --redis) redis=$2; shift 2 ;;
    --redis-db) redis_db=$2; shift 2 ;;
    --bin) bin=$2; shift 2 ;;
    --no-web-build) web_build=0; shift ;;
    *) echo "tests/web_e2e.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[[ -n $pg && -n $redis ]] || { echo "--pg HOST:PORT and --redis HOST:PORT are required" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bin=$(cd "$bin" && pwd)
if [[ $web_build = 1 ]]; then
  (cd web && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent >/dev/null)
fi
[[ -f web/dist/index.html ]] || { echo "web/dist is not built (run without --no-web-build)" >&2; exit 2; }
source tests/lib/stack.sh
trap stack_stop EXIT
stack_start "$pg" "$redis" webe2e "$redis_db" \
  COURTPIECE_TABLE_COMMANDS_PER_SECOND=100 COURTPIECE_TABLE_COMMANDS_BURST=100
[[ -x $bin/courtpiece-admin ]] || { echo "$bin/courtpiece-admin is not built" >&2; exit 2; }
(cd web && GATEWAY_URL="http://127.0.0.1:$gw_http_port" COURTPIECE_E2E_BIN="$bin" \
  COURTPIECE_E2E_PG_URL="$stack_db_url" COURTPIECE_E2E_SIGNING_KEY="$stack_signing_key" \
  npm run e2e:real --silent)
# The gateway's gRPC port with a second client stack (@grpc/grpc-js on Node's HTTP/2).
(cd tools/grpc_js_interop &&
  { [[ $web_build = 0 && -d node_modules ]] || npm ci --no-audit --no-fund --loglevel=error; } &&
  GATEWAY_GRPC="127.0.0.1:$gw_grpc_port" node --test interop.test.mjs)
