#!/usr/bin/env bash
# Installs (only) the Debian 12 packages this project needs that are missing.
# Idempotent: a second run with everything present does no apt work at all.
set -euo pipefail

PACKAGES=(
  build-essential g++ cmake ninja-build pkg-config git ca-certificates
  clang libfuzzer-14-dev libclang-rt-14-dev clang-format clang-tidy
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libpqxx-dev libhiredis-dev prometheus-cpp-dev libjemalloc2
  libgtest-dev libgmock-dev libbenchmark-dev libabsl-dev nlohmann-json3-dev
  libboost1.81-dev libsodium-dev libavformat-dev libavcodec-dev libavutil-dev libnghttp2-dev
  postgresql-15 postgresql-client-15 redis-server redis-tools
  docker-compose python3 curl procps ccache mold
  chromium fonts-dejavu-core
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

# The web client builds with Node.js and npm (web/README.md). The machine's own Node.js 20 is
# used when present; otherwise Debian's.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  missing+=(nodejs npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts packaged servers on install; our tests run their own instances.
if command -v systemctl >/dev/null 2>&1; then
  $SUDO systemctl disable --now redis-server postgresql >/dev/null 2>&1 || true
fi
$SUDO service redis-server stop >/dev/null 2>&1 || true
$SUDO service postgresql stop >/dev/null 2>&1 || true
echo "install-deps: done"
