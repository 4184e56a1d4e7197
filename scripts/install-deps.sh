#!/usr/bin/env bash
# Installs every Debian package gpuplan's build, tests and benchmarks need.
# Idempotent and non-interactive; runs apt-get update itself. Needs root (or sudo).
set -euo pipefail
packages=(
  build-essential cmake ninja-build lld pkg-config git
  nlohmann-json3-dev libcli11-dev libfmt-dev libtomlplusplus-dev
  libsqlite3-dev sqlite3 libcsv-dev libcpp-httplib-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libcurl4-openssl-dev libkainjow-mustache-dev libssl-dev libzip-dev
  libpqxx-dev libpq-dev postgresql libmimalloc-dev
  clang libclang-rt-14-dev libfuzzer-14-dev
  chromium fonts-thai-tlwg
)
# Node.js and npm (for the Playwright browser tests): the machine image ships them; install Debian's only
# where they are missing, so a NodeSource build that bundles npm is left alone.
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages already installed"
  exit 0
fi
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "install-deps: installed ${missing[*]}"
