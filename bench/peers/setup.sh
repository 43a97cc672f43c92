#!/usr/bin/env bash
# Idempotent setup of the CPU peers that bench/reference_vs_peers.sh compares tilevit's
# FP32 reference with (see docs/BENCHMARKS.md):
#   - PyTorch FP32: Debian's python3-torch and python3-numpy (apt), run with /usr/bin/python3;
#     libjemalloc2 (apt) for a second PyTorch run with jemalloc preloaded
#   - ONNX Runtime: npm onnxruntime-node, version pinned in bench/peers/package.json and
#     package-lock.json, installed into bench/peers/node_modules (git-ignored). Its CPU
#     binaries ship inside the package; ONNXRUNTIME_NODE_INSTALL=skip stops its install
#     script from trying to download GPU binaries (which fails without internet access).
# Safe to run again: does nothing when everything is already there.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY=/usr/bin/python3  # Debian's python: another python3 may come first on PATH

log() { echo "peers/setup: $*" >&2; }

as_root() {
  if [[ $(id -u) -eq 0 ]]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    log "need root for: $*"; return 1; fi
}

apt_updated=0
apt_install() {
  export DEBIAN_FRONTEND=noninteractive
  if ! as_root apt-get install -y --no-install-recommends "$@"; then
    if [[ $apt_updated -eq 0 ]]; then
      apt_updated=1
      as_root apt-get update
      as_root apt-get install -y --no-install-recommends "$@"
    else
      return 1
    fi
  fi
}

# 1. PyTorch + numpy (Debian packages)
if ! "$PY" -c 'import torch, numpy' 2>/dev/null; then
  log "installing python3-torch python3-numpy (apt)"
  apt_install python3-torch python3-numpy
fi
"$PY" -c 'import torch, numpy' || { log "torch/numpy still not importable by $PY"; exit 1; }

# 1b. jemalloc, for the second PyTorch row (an allocator that keeps freed memory; optional)
if [[ ! -f /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 ]]; then
  log "installing libjemalloc2 (apt)"
  apt_install libjemalloc2 || log "libjemalloc2 not installed: the PyTorch + jemalloc row is skipped"
fi

# 2. Node.js + npm (normally preinstalled; Debian's nodejs otherwise)
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  log "installing nodejs npm (apt)"
  apt_install nodejs npm
fi

# 3. onnxruntime-node at the pinned version
want="$(node -p "require('$here/package.json').dependencies['onnxruntime-node']")"
have="$(node -p "try { require('$here/node_modules/onnxruntime-node/package.json').version } catch (e) { '' }")"
if [[ "$have" != "$want" ]]; then
  log "installing onnxruntime-node $want into bench/peers/node_modules (npm ci)"
  (cd "$here" && ONNXRUNTIME_NODE_INSTALL=skip npm ci --no-audit --no-fund --loglevel=error)
fi
# The native CPU binding must load (it ships inside the package).
(cd "$here" && node --input-type=module -e \
  "import ort from 'onnxruntime-node'; if (!ort.InferenceSession) process.exit(1);") ||
  { log "onnxruntime-node does not load"; exit 1; }
log "ok: $("$PY" -c 'import torch; print("torch", torch.__version__)'), onnxruntime-node $want, node $(node --version)"
