#!/usr/bin/env bash
# The whole test suite: unit, compile-fail, verify, golden, lowering (NVRTC to CUBIN for every declared
# target) and GPU tests (skipped with the reason printed when no GPU is present).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$("$root/scripts/bootstrap.sh" | tail -n 1)"
jobs="${CAKE_JOBS:-$(nproc)}"
cmake --build "$build" -j "$jobs"
cd "$build"
ctest --output-on-failure -j "$jobs" "$@"
