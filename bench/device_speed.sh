#!/usr/bin/env bash
# Host speed of the device model next to the FP32 reference. Each round runs, one after
# the other, the FP32 reference's median of 3 forward passes (`tilevit reference
# --fp32-only --repeat 3`) and the device model's median of 3 resident calls (`tilevit run
# --inferences 3`; a call = image upload + execute + embedding download; weight upload and
# compile are not counted), both So400m/14, batch 1, FP8 scale -4, random model seed 0,
# same threads, and prints their ratio; last, the median over rounds. Rounds, because the
# machine is shared: a neighbour's load moves either time by 10-50% between runs, so one
# pair is not a measurement. Builds nothing.
# Usage: bench/device_speed.sh [BINARY] [LAYERS] [THREADS] [ROUNDS]
#   defaults: ./build/tilevit, 27 layers, 2 threads, 3 rounds. Goal (issue 4): ratio <= 1.5.
set -euo pipefail
bin=${1:-./build/tilevit}
layers=${2:-27}
threads=${3:-2}
rounds=${4:-3}
[ -x "$bin" ] || { echo "no tilevit binary at $bin (build first)" >&2; exit 2; }
out=$(mktemp -d /tmp/device_speed.XXXXXX)
trap 'rm -rf "$out"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3

for r in $(seq "$rounds"); do
  echo "round $r: load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  "$bin" reference --layers "$layers" --fp32-only --repeat 3 --threads "$threads" --json 2>/dev/null > "$out/ref$r.json"
  "$bin" run --layers "$layers" --no-reference --no-profile --inferences 3 --threads "$threads" --out "$out/run" --json \
    2>/dev/null > "$out/dev$r.json"
done

OUT="$out" ROUNDS="$rounds" LAYERS="$layers" THREADS="$threads" "$py" - <<'PY'
import json, os, statistics
out, rounds = os.environ["OUT"], int(os.environ["ROUNDS"])
print(f"layers {os.environ['LAYERS']}, threads {os.environ['THREADS']}, {rounds} rounds")
ratios = []
for r in range(1, rounds + 1):
    ref = json.load(open(f"{out}/ref{r}.json"))
    dev = json.load(open(f"{out}/dev{r}.json"))
    calls = [c["host_ms"]["upload"] + c["host_ms"]["execute"] + c["host_ms"]["download"] for c in dev["calls"]]
    ref_ms, dev_ms = ref["fp32_seconds"] * 1000.0, statistics.median(calls)
    ratios.append(dev_ms / ref_ms)
    print(f"round {r}: FP32 reference {ref_ms:,.0f} ms (median of 3); device calls "
          + " / ".join(f"{c:,.0f}" for c in calls) + f" ms, median {dev_ms:,.0f}; ratio {dev_ms / ref_ms:.2f}"
          + ("" if dev["identical_across_calls"] else "; EMBEDDINGS DIFFER ACROSS CALLS"))
print(f"median ratio device / FP32 reference: {statistics.median(ratios):.2f} (goal <= 1.5)")
PY
