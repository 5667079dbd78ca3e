#!/usr/bin/env bash
# The whole test suite: unit, compile-fail, verify, golden, lowering (NVRTC to CUBIN for every declared
# target), examples, install, and GPU tests (skipped, with the reason printed, when no GPU is present).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# Without a CUDA driver the GPU tier and the benchmarks are only compiled (and skipped): compile their host code fast
# (-O0: about a quarter faster to compile than -Og; nothing of theirs that runs here does much).
if ! { "$(command -v ldconfig || echo /sbin/ldconfig)" -p 2>/dev/null || true; } | grep 'libcuda\.so\.1' >/dev/null; then
  export CAKE_CMAKE_ARGS="${CAKE_CMAKE_ARGS:-} -DCAKE_GPU_TEST_HOST_OPT=-O0 -DCAKE_BENCH_HOST_OPT=-O0"
else
  export CAKE_CMAKE_ARGS="${CAKE_CMAKE_ARGS:-} -DCAKE_GPU_TEST_HOST_OPT= -DCAKE_BENCH_HOST_OPT="
fi
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
