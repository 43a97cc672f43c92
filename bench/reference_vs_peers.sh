#!/usr/bin/env bash
# tilevit's FP32 host reference vs the CPU peers a user would run instead (ONNX Runtime and
# PyTorch, both FP32), measured in one run on the same random So400m/14 model and input.
#
#   bench/reference_vs_peers.sh [--layers N] [--repeat N] [--seed N] [--tilevit PATH]
#                               [--threads N] [--wait-idle MINUTES] [--skip-setup]
#
#   --layers N    encoder layers of the model (default 27, the whole So400m/14)
#   --repeat N    timed runs per peer after one warm-up (default 3)
#   --seed N      seed of tilevit's random model (default 0)
#   --tilevit P   the tilevit binary (default build/tilevit)
#   --threads N   threads for every peer (default 2)
#   --wait-idle M before each measurement wait up to M minutes for other work on the
#                 machine to stop (default 0: just report how busy the CPUs were)
#
# Steps: bench/peers/setup.sh; `tilevit export-weights` into bench/out/; ONNX export of the
# same weights (bench/peers/export_onnx.py, via tools/torch_siglip.py); a fixed random
# preprocessed input (numpy, standard normal x 0.5, [3,378,378]); then tilevit
# `reference --fp32-only`, ONNX Runtime (bench/peers/run_onnxruntime.mjs) and PyTorch
# (bench/peers/run_torch.py, OPENBLAS_CORETYPE=COOPERLAKE; again with jemalloc preloaded if
# libjemalloc2 is installed) one after the other. Prints a
# table (ms per image, GFLOP/s, cosine of each peer's embedding vs tilevit's) and writes
# bench/out/reference_vs_peers.json. The ONNX export is cached in bench/out/ (keyed by the
# weights' checksum).
#
# Memory: 27 layers are 1.7 GB of FP32 weights; the ONNX export needs about 8 GB of RAM.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PY=/usr/bin/python3
layers=27
repeat=3
seed=0
threads=2
tilevit="$root/build/tilevit"
setup=1
wait_minutes=0

while [[ $# -gt 0 ]]; do
  case "$1" in
    --layers) layers="$2"; shift 2 ;;
    --repeat) repeat="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --tilevit) tilevit="$2"; shift 2 ;;
    --skip-setup) setup=0; shift ;;
    --wait-idle) wait_minutes="$2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "reference_vs_peers: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
for v in layers repeat seed threads wait_minutes; do
  [[ "${!v}" =~ ^[0-9]+$ ]] || { echo "reference_vs_peers: --$v needs a number" >&2; exit 2; }
done
(( layers >= 1 && layers <= 27 )) || { echo "reference_vs_peers: --layers must be 1..27" >&2; exit 2; }
(( repeat >= 1 && threads >= 1 )) || { echo "reference_vs_peers: --repeat/--threads must be >= 1" >&2; exit 2; }
[[ -x "$tilevit" ]] || { echo "reference_vs_peers: no tilevit binary at $tilevit (build first)" >&2; exit 1; }

log() { echo "[reference_vs_peers $(date +%H:%M:%S)] $*" >&2; }

if (( setup )); then bash "$root/bench/peers/setup.sh"; fi

out="$root/bench/out"
mkdir -p "$out"
weights="$out/so400m_L${layers}_seed${seed}.safetensors"
onnx="$out/so400m_L${layers}_seed${seed}.onnx"
input="$out/input_378.npy"

# 1. Weights from tilevit's random model (always re-exported: a few seconds, and the
#    current binary decides what its random model is).
export_cmd=("$tilevit" export-weights "$weights" --preset so400m --layers "$layers" --seed "$seed")
log "exporting weights: ${export_cmd[*]}"
"${export_cmd[@]}" >/dev/null
sum="$(sha256sum "$weights" | cut -d' ' -f1)"

# 2. ONNX export of the same weights (cached by the weights' checksum).
if [[ ! -f "$onnx" || ! -f "$onnx.sha256" || "$(cat "$onnx.sha256")" != "$sum" ]]; then
  log "exporting ONNX (float32, opset 17): $onnx"
  rm -f "$onnx.sha256"
  "$PY" "$root/bench/peers/export_onnx.py" "$weights" "$onnx"
  printf '%s' "$sum" > "$onnx.sha256"
fi

# 3. A fixed preprocessed input.
if [[ ! -f "$input" ]]; then
  "$PY" -c 'import sys, numpy as np
x = np.random.default_rng(20240601).standard_normal((3, 378, 378)) * 0.5
np.save(sys.argv[1], x.astype(np.float32))' "$input"
fi

rm -f "$out"/{tilevit,onnxruntime,torch,torch_jemalloc}.{json,others} \
      "$out"/emb_{tilevit,onnxruntime,torch,torch_jemalloc}.npy

# 4. The three measurements, one after the other on an otherwise idle machine.
# Contention check. Other engineers' builds share this machine: before each peer, wait (up
# to --wait-idle minutes) until the CPUs are idle, and record which share of all CPU time
# during that peer's run went to processes other than this script's children.
cpu_busy() {  # percent of CPU time busy over the next 3 s
  local a b total=0 i
  read -r -a a < <(grep '^cpu ' /proc/stat); sleep 3; read -r -a b < <(grep '^cpu ' /proc/stat)
  for i in 1 2 3 4 5 6 7 8; do total=$(( total + b[i] - a[i] )); done
  local idle=$(( b[4] - a[4] + b[5] - a[5] ))
  echo $(( total > 0 ? 100 * (total - idle) / total : 0 ))
}
cpu_mark() {  # "busy_ticks total_ticks our_waited_children_ticks"
  local a total=0 i st f
  read -r -a a < <(grep '^cpu ' /proc/stat)
  for i in 1 2 3 4 5 6 7 8; do total=$(( total + a[i] )); done
  st="$(cat /proc/$$/stat)"; st="${st##*) }"; read -r -a f <<< "$st"
  echo "$(( total - a[4] - a[5] )) $total $(( f[13] + f[14] ))"  # fields 16, 17: cutime, cstime
}
others_percent() {  # $1, $2: cpu_mark before and after
  local b0 t0 c0 b1 t1 c1 other
  read -r b0 t0 c0 <<< "$1"; read -r b1 t1 c1 <<< "$2"
  other=$(( (b1 - b0) - (c1 - c0) )); (( other < 0 )) && other=0
  echo $(( t1 > t0 ? 100 * other / (t1 - t0) : 0 ))
}
wait_idle() {
  local deadline=$(( SECONDS + 60 * wait_minutes )) busy
  while :; do
    busy="$(cpu_busy)"
    (( busy < 10 || SECONDS >= deadline )) && break
    log "CPUs ${busy}% busy with other work; waiting (--wait-idle $wait_minutes)"
    sleep 20
  done
  log "CPUs ${busy}% busy before the next measurement"
}
measure() {  # NAME COMMAND...: runs COMMAND with stdout to $out/NAME.json
  local name="$1" m0 m1; shift
  wait_idle
  m0="$(cpu_mark)"
  "$@" > "$out/$name.json"
  m1="$(cpu_mark)"
  others_percent "$m0" "$m1" > "$out/$name.others"
  log "$name: other processes used $(cat "$out/$name.others")% of all CPU time during the run"
}

tv_cmd=("$tilevit" reference --preset so400m --layers "$layers" --weights "$weights"
        --image "$input" --fp32-only
        --repeat "$repeat" --threads "$threads" --save-fp32 "$out/emb_tilevit.npy" --json)
log "tilevit: ${tv_cmd[*]}"
measure tilevit "${tv_cmd[@]}"

log "ONNX Runtime: $threads intra-op threads, 1 inter-op, $repeat runs after a warm-up"
# shellcheck disable=SC2016  # $1 and $@ belong to the inner bash
measure onnxruntime bash -c 'cd "$1" && shift && exec node run_onnxruntime.mjs "$@"' _ \
  "$root/bench/peers" "$onnx" --input "$input" --repeat "$repeat" --threads "$threads" \
  --out "$out/emb_onnxruntime.npy"

log "PyTorch FP32: torch.set_num_threads($threads), OPENBLAS_CORETYPE=COOPERLAKE, $repeat runs after a warm-up"
measure torch env OPENBLAS_CORETYPE=COOPERLAKE OMP_NUM_THREADS="$threads" \
  "$PY" "$root/bench/peers/run_torch.py" "$weights" --input "$input" --repeat "$repeat" \
  --threads "$threads" --out "$out/emb_torch.npy"

# The same, with jemalloc keeping freed memory (see docs/BENCHMARKS.md: on this VM a fresh
# 34 MB attention-score tensor costs ~70 ms of page faults under glibc malloc, which hands
# allocations over 32 MB back to the kernel on free; ONNX Runtime and tilevit reuse memory).
jemalloc=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2
if [[ -f "$jemalloc" ]]; then
  log "PyTorch FP32 with jemalloc (retain, no decay): same settings otherwise"
  measure torch_jemalloc env LD_PRELOAD="$jemalloc" \
    MALLOC_CONF="retain:true,dirty_decay_ms:-1,muzzy_decay_ms:-1" \
    OPENBLAS_CORETYPE=COOPERLAKE OMP_NUM_THREADS="$threads" \
    "$PY" "$root/bench/peers/run_torch.py" "$weights" --input "$input" --repeat "$repeat" \
    --threads "$threads" --out "$out/emb_torch_jemalloc.npy"
fi

"$PY" "$root/bench/peers/summarize.py" "$out" --layers "$layers" --repeat "$repeat" \
  --weights "$weights" --onnx "$onnx" --input "$input" --tilevit-command "${tv_cmd[*]}" \
  --tilevit-version "$("$tilevit" --version 2>/dev/null || echo tilevit)"
log "wrote $out/reference_vs_peers.json"
