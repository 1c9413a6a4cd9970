#!/usr/bin/env bash
# Installs accelsim's build dependencies if any is missing (Debian 12 packages), then configures
# and builds everything into build/. Safe to run again: it only installs and rebuilds what it must.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/ensure_packages.sh
ensure_packages "${accelsim_build_packages[@]}"

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
