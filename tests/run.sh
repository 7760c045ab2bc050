#!/usr/bin/env bash
# The README's test command: installs what is missing, builds, starts a throwaway
# PostgreSQL and Redis on loopback test ports, runs every test (unit + integration) and,
# beside them, the sanitizer build (ASan+UBSan) of the unit tests and their run and the web
# client's build and unit tests; then the web client in a real browser against the real
# suite (tests/web_e2e.sh); and stops the servers.
#
#   tests/run.sh                 everything (what CI runs)
#   tests/run.sh --no-sanitizers skip the sanitizer pass (quicker local loop)
#   COURTPIECE_TEST_PG_PORT / COURTPIECE_TEST_REDIS_PORT override the ports.
# Tests that run at once share the Redis server, each in its own database (each flushes
# its own): 3 scripted player vs table, 4 gateway relay, 5 web e2e, 6 gateway e2e, 7..10
# table e2e shards, 11 lobby records, 12 lobby directory, 13 lobby e2e, 14 moderation e2e
# (and the lobby bench, run by hand), 15 the gateway load tool (by hand), 16..21 the system
# test shards (tests/system), 22 the gateway e2e's second shard; deploy/local/redis.sh starts
# Redis with 32 databases.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

sanitizers=1
for arg in "$@"; do
  case "$arg" in
    --no-sanitizers) sanitizers=0 ;;
    *) echo "tests/run.sh: unknown argument '$arg' (allowed: --no-sanitizers)" >&2; exit 2 ;;
  esac
done

jobs=$(nproc)
pg_port=${COURTPIECE_TEST_PG_PORT:-55432}
redis_port=${COURTPIECE_TEST_REDIS_PORT:-56379}
state_dir="$root/.local/test"

started_s=$(date +%s)
step() { printf '\n== %s (%s, +%ss)\n' "$1" "$(date -u +%H:%M:%S)" "$(( $(date +%s) - started_s ))"; }

step "dependencies"
./deploy/local/install-deps.sh

# The same directory cmake/CourtpieceOptions.cmake hands to ccache; counters are reset per run.
ccache_dir=${COURTPIECE_CCACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/courtpiece-ccache}
ccache_stats() {
  command -v ccache >/dev/null 2>&1 || return 0
  echo "ccache ($ccache_dir):"
  CCACHE_DIR="$ccache_dir" ccache --show-stats 2>/dev/null | grep -E '^ *(Hits|Misses|Cache size)' || true
}
command -v ccache >/dev/null 2>&1 && CCACHE_DIR="$ccache_dir" ccache --zero-stats >/dev/null 2>&1 || true

stop_servers() {
  ./deploy/local/redis.sh stop --port "$redis_port" --dir "$state_dir/redis" >/dev/null 2>&1 || true
  ./deploy/local/postgres.sh stop --port "$pg_port" --dir "$state_dir/pg" >/dev/null 2>&1 || true
}
# Most of the suite waits on game timers (turn times, count-ins, keeps) rather than on the
# CPU (ctest -j4 used a third of the two cores), so ctest runs 4 jobs per core
# (COURTPIECE_CTEST_JOBS), the longest tests first (their COST, cmake/CourtpieceTest.cmake).
# Beside it, at nice 19 (only the CPU the tests leave idle), two lanes: the sanitizer tree's
# build and then its unit tests (CPU-bound, no servers), and the web client's build and unit
# tests (it needs neither the C++ build nor the servers, so it starts before the build: on a
# machine that never built, its npm ci downloads while the compilers run). The browser tests
# run after ctest, beside only what is left of the nice-19 lanes: beside ctest they failed on
# load before (2026-12-02: the voice report's bound), as did ctest at 16 jobs (README "How
# long CI takes").
logs="$state_dir/logs"
rm -rf "$logs" && mkdir -p "$logs"
declare -A lane_pid=()  # lane name -> pid of its process group
stop_lanes() {
  local name pid
  for name in "${!lane_pid[@]}"; do
    pid=${lane_pid[$name]}
    kill -- "-$pid" 2>/dev/null || kill "$pid" 2>/dev/null || true
    # The run failed elsewhere first: show how far this lane got.
    echo "== $name stopped; the end of its log:"
    tail -n 40 "$logs/$name.log" 2>/dev/null || true
  done
  stop_servers
}
trap stop_lanes EXIT

asan_lane() {
  # Debug keeps assertions on (no NDEBUG), and -g1 (line tables only: sanitizer reports
  # keep file:line) compiles much faster than -g; the heavy randomized tests run a tenth of
  # their iterations here (full counts run in ctest). Everything compiles at -O0 but the
  # CPU-bound libraries the unit tests spend their time in (rules, bots, table, the rules
  # CLI, tablesim: COURTPIECE_HOT_CODE_FLAGS, cmake/CourtpieceOptions.cmake), which stay -O1:
  # under the sanitizers the optimizer is most of the compile, and -O0 checks code fully.
  # protoc's output does not depend on flags: the ASan tree compiles the first tree's.
  # Only what `ctest -L unit` runs is built (courtpiece_unit_tests, cmake/CourtpieceTest.cmake):
  # integration tests, benchmarks and the service binaries compile in the first tree only.
  # clang (Debian's clang 14, installed for the fuzzers), not GCC: GCC 12 spends several
  # times the CPU on ASan+UBSan at -O1 (libs/rules/src/round.cc: 26 s against 4 s; the
  # whole tree: README "How long CI takes"). The first tree stays GCC, so CI compiles and
  # warns with both compilers (the unit tests but the FULL_SCALE ones with clang alone: the
  # first tree leaves them to this one). A tree configured with GCC before is reconfigured (cmake
  # drops its cache when the compiler changes).
  # Test sources compile without debug info (-g0: 17% less CPU than -g1 for the gateway's
  # http_server_test.cc, 9.7 s against 11.8 s): a report's frames in the code under test keep
  # file:line, those in a test body name the function only (gtest's own failures keep theirs).
  # No precompiled headers here (COURTPIECE_PCH, which the first tree uses): ccache hashes a
  # clang PCH's bytes, which hold the clone's path, so every fresh clone recompiled this tree
  # (182 of 450 compiles missed in a warm run, 2026-12-04); and a clang PCH restored from
  # the cache would name input files of a clone that is gone. It also keeps one tree that
  # shows each file includes what it uses.
  cmake -S . -B build-asan -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG="-g1 -O0" -DCOURTPIECE_HOT_CODE_FLAGS=-O1 \
    -DCOURTPIECE_TEST_CODE_FLAGS=-g0 -DCOURTPIECE_PCH=OFF \
    -DCOURTPIECE_SANITIZE=address -DCOURTPIECE_PROTO_OUT="$root/build/gen" >/dev/null
  cmake --build build-asan -j"$jobs" --target courtpiece_unit_tests
  echo "== sanitizer unit tests ($(date -u +%H:%M:%S))"
  COURTPIECE_TEST_SCALE_DIVISOR=10 \
    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir build-asan -L unit -LE config --output-on-failure -j"$jobs" --timeout 900
}
web_lane() {
  cd web && npm ci --no-audit --no-fund --loglevel=error && npm run build --silent && npm test --silent
  # The gRPC interop client the real-suite run uses (tests/web_e2e.sh).
  cd ../tools/grpc_js_interop && npm ci --no-audit --no-fund --loglevel=error
}
# Starts `name` in its own process group at nice 19, output to $logs/name.log.
start_lane() {
  set -m  # its own process group, so an early exit stops all of it
  nice -n 19 bash -c "set -euo pipefail; $(declare -f "$1"); root='$root'; jobs=$jobs; $1" \
    >"$logs/$1.log" 2>&1 &
  lane_pid[$1]=$!
  set +m
}
# Waits for lane `name`; prints its log; fails the run if it failed.
finish_lane() {
  local name=$1 rc=0
  wait "${lane_pid[$name]}" || rc=$?
  unset "lane_pid[$name]"
  cat "$logs/$name.log"
  if [ "$rc" != 0 ]; then
    echo "tests/run.sh: $name failed (exit $rc)" >&2
    exit 1
  fi
}

start_lane web_lane

step "build"
# With the sanitizer lane on, the unit tests it runs are not built or run here too, but the
# heavy randomized ones it runs a tenth of (FULL_SCALE; COURTPIECE_UNIT_TESTS in
# cmake/CourtpieceTest.cmake): compiling them twice was a sixth of a cold run's CPU.
# All but the hot code compiles at -O1 (COURTPIECE_COLD_CODE_OPT, cmake/CourtpieceOptions.cmake):
# the services only have to pass the tests here (measure performance with -O2: README).
# This tree compiles with precompiled headers (COURTPIECE_PCH, cmake/CourtpiecePch.cmake):
# a third less compile CPU.
if [ "$sanitizers" = 1 ]; then unit_tests=full_scale; else unit_tests=all; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOURTPIECE_UNIT_TESTS=$unit_tests \
  -DCOURTPIECE_COLD_CODE_OPT=-O1 -DCOURTPIECE_PCH=ON >/dev/null
cmake --build build -j"$jobs"

step "servers"
./deploy/local/postgres.sh start --port "$pg_port" --dir "$state_dir/pg" --fast
./deploy/local/redis.sh start --port "$redis_port" --dir "$state_dir/redis"
COURTPIECE_TEST_PG_URL=$(./deploy/local/postgres.sh url --port "$pg_port" --dir "$state_dir/pg")
export COURTPIECE_TEST_PG_URL
export COURTPIECE_TEST_REDIS_ADDR="127.0.0.1:$redis_port"

step "tests (unit + integration); beside them at nice 19: the sanitizer build and unit tests, the web client's build and unit tests"
if [ "$sanitizers" = 1 ]; then start_lane asan_lane; fi
ctest_jobs=${COURTPIECE_CTEST_JOBS:-$(( jobs * 4 ))}
ctest --test-dir build --output-on-failure -j"$ctest_jobs" --timeout 600

step "web client: its build and unit tests (beside ctest)"
finish_lane web_lane

# The sanitizer lane may still be running its unit tests; at nice 19 it takes only the CPU
# the browsers leave, so they do not wait for it (it ended 16..50 s after ctest).
step "web client: browser end to end against the real suite"
./tests/web_e2e.sh --pg "127.0.0.1:$pg_port" --redis "127.0.0.1:$redis_port" --no-web-build

if [ "$sanitizers" = 1 ]; then
  step "sanitizer build (ASan+UBSan) and its unit tests (beside ctest and the browsers)"
  finish_lane asan_lane
fi

ccache_stats
step "all tests passed"
