#!/usr/bin/env bash
# The Python tier: build the cake package (pyproject.toml) into a virtual environment under the build
# folder, with the pinned build tools from PyPI, and run python/tests (no GPU: imports and argument
# errors; with a GPU and PyTorch in that environment, the GPU tests too).
#   tests/python/run.sh <build dir>
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="$(cd "${1:?usage: run.sh <build dir>}" && pwd)"
venv="$build/python-venv"
py="${CAKE_PYTHON:-python3}"
if [ ! -x "$venv/bin/python" ]; then
  if ! "$py" -m venv "$venv" 2>/dev/null; then
    echo "cake: '$py -m venv' failed; installing the Debian package python3-venv"
    sudo_cmd=""
    [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
    $sudo_cmd apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq python3-venv
    rm -rf "$venv"
    "$py" -m venv "$venv"
  fi
fi
# The versions pyproject.toml pins ([build-system] requires), installed once into the environment.
"$venv/bin/python" -m pip install -q --disable-pip-version-check "scikit-build-core==1.1.2" "nanobind==3.1.0"
# The package's own build folder lives under the build dir, not the checkout.
"$venv/bin/python" -m pip install -q --disable-pip-version-check --no-build-isolation \
  --config-settings=build-dir="$build/python-build" "$root"
cd "$build"  # not the checkout: import the installed package, not python/cake
"$venv/bin/python" -m unittest discover -s "$root/python/tests" -v
