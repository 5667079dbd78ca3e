#!/usr/bin/env bash
# Shared set-up for scripts/demo.sh and scripts/test.sh: install the Debian packages Cake builds with
# when they are missing, then configure the CMake build in ./build (or $CAKE_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${CAKE_BUILD_DIR:-$root/build}"

need=()
[ -f /usr/include/boost/hana.hpp ] || [ -f /usr/local/include/boost/hana.hpp ] || need+=(libboost1.81-dev)
[ -f /usr/include/doctest/doctest.h ] || [ -f /usr/local/include/doctest/doctest.h ] || need+=(doctest-dev)
[ -f /usr/include/benchmark/benchmark.h ] || [ -f /usr/local/include/benchmark/benchmark.h ] || need+=(libbenchmark-dev)
command -v cmake >/dev/null || need+=(cmake)
command -v g++ >/dev/null || need+=(g++)
if [ ${#need[@]} -gt 0 ]; then
  echo "cake: installing missing Debian packages: ${need[*]}"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${need[@]}"
fi
if [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ] && [ ! -f "${CUDA_HOME:-/usr/local/cuda}/include/nvrtc.h" ]; then
  echo "cake: the CUDA toolkit (NVRTC headers and library) was not found under ${CUDA_HOME:-/usr/local/cuda}; set CUDA_HOME" >&2
  exit 1
fi
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DCUDAToolkit_ROOT="${CUDA_HOME:-/usr/local/cuda}" ${CAKE_CMAKE_ARGS:-} >/dev/null
echo "$build"
