#!/usr/bin/env bash
# The main job: check, lower and compile Cake's sm_90a GEMM schedule; where a GPU is present, run it
# against a reference and time it against cuBLAS.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$("$root/scripts/bootstrap.sh" | tail -n 1)"
cmake --build "$build" -j "${CAKE_JOBS:-$(nproc)}" --target cake_demo
"$build/tools/cake_demo" "$@"
