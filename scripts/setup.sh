#!/usr/bin/env bash
# Installs what tilevit needs from Debian 12 (idempotent) and builds it into ./build.
# Usage: bash scripts/setup.sh [--no-build | --fuzz]  (--fuzz: only what scripts/fuzz.sh adds)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ccache pkg-config
  nlohmann-json3-dev libcli11-dev libpng-dev libjpeg-dev libssl-dev zlib1g-dev
  libdnnl-dev ocl-icd-opencl-dev libgtest-dev libgmock-dev libbenchmark-dev
  chromium openmpi-bin libopenmpi-dev slurm-wlm munge
  python3 python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pandas python3-pytest python3-matplotlib)
# python3-dev, pybind11-dev, python3-pybind11: the Python package tilevit (src/python, built
# into build/python for Debian's /usr/bin/python3); python3-numpy, python3-pandas: its arrays
# and tables; python3-pytest: its tests (tests/python); python3-matplotlib: examples/.
# openmpi-bin, libopenmpi-dev: multi-chip runs with one MPI rank per chip (docs/SCALE_OUT.md),
# `tilevit sweep --mpi` (src/mpi) and their tests under mpirun;
# slurm-wlm, munge: `tilevit sweep --slurm` and the test that starts a single-node Slurm
# (tests/sweep/sweep_slurm.sh starts and stops its own daemons; none is enabled here).
# chromium, node and npm: the headless-browser tests of the HTML viewers (tests/browser).
# Node.js comes from Debian only when the machine has none (an installed Node.js that
# bundles npm conflicts with Debian's npm package).
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)
# ocl-icd-opencl-dev: Debian builds oneDNN with the OpenCL GPU runtime, so its CMake
# package looks for OpenCL (only a Recommends of libdnnl-dev).
# Installs those of the given Debian packages that are not installed yet.
install_missing() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  echo "setup: installing ${missing[*]}" >&2
  local SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -q
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
}
install_missing "${packages[@]}"

# The browser tests' node packages (playwright-core, pinned in tests/browser/package-lock.json;
# it never downloads a browser: the tests use /usr/bin/chromium). Skipped when up to date.
lock=tests/browser/package-lock.json
if [ ! -f tests/browser/node_modules/.package-lock.json ] || [ "$lock" -nt tests/browser/node_modules/.package-lock.json ]; then
  PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix tests/browser --no-audit --no-fund
fi

# The fuzz step only (scripts/fuzz.sh): clang-14 with its sanitizer and libFuzzer
# runtimes, and LLVM's OpenMP for clang.
if [ "${1:-}" = "--fuzz" ]; then
  install_missing clang-14 libclang-rt-14-dev libomp-14-dev
  exit 0
fi

[ "${1:-}" = "--no-build" ] && exit 0
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j"$(nproc)"
