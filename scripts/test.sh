#!/usr/bin/env bash
# The whole test suite: unit, compile-fail, verify, golden, lowering (NVRTC to CUBIN for every declared
# target), examples, install, and GPU tests (skipped, with the reason printed, when no GPU is present).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$("$root/scripts/bootstrap.sh" | tail -n 1)"
jobs="${CAKE_JOBS:-$(nproc)}"
cmake --build "$build" -j "$jobs"
cd "$build"
status=0
ctest --output-on-failure -j "$jobs" "$@" || status=$?
# ctest does not show the output of skipped tests: say why the GPU tier was skipped, if it was.
reason="$(ctest -L gpu -V 2>/dev/null | grep -m 1 -o 'SKIPPED: .*' || true)"
[ -n "$reason" ] && echo "cake: GPU tests were skipped on this machine. ${reason}"
exit $status
