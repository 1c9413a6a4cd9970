#!/usr/bin/env bash
# Regenerates the simulated figures quoted in README.md and docs/ from real runs (the markers and
# docs/figures.json are described in validation/figures/doc_figures.cpp). `scripts/figures.sh check`
# only reports what drifted (ctest runs the same check: validation.doc_figures_*).
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-update}
case "$mode" in
    update|check) ;;
    *) echo "usage: scripts/figures.sh [update|check]" >&2; exit 2 ;;
esac
cmake --build build --target accelsim doc_figures >/dev/null
build/validation/doc_figures --accelsim build/accelsim --root . --build-dir build "--$mode"
