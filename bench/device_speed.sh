#!/usr/bin/env bash
# Host speed of the device model next to the FP32 reference, in one invocation: the
# FP32 reference's median of 3 forward passes (`tilevit reference --fp32-only --repeat 3`)
# and the device model's median of 3 resident calls (`tilevit run --inferences 3`; a
# call = image upload + execute + embedding download; weight upload and compile are not
# counted), both So400m/14, batch 1, FP8 scale -4, random model seed 0, same threads.
# Builds nothing. Usage: bench/device_speed.sh [BINARY] [LAYERS] [THREADS]
#   defaults: ./build/tilevit, 27 layers, 2 threads. Goal (issue 4): ratio <= 1.5.
set -euo pipefail
bin=${1:-./build/tilevit}
layers=${2:-27}
threads=${3:-2}
[ -x "$bin" ] || { echo "no tilevit binary at $bin (build first)" >&2; exit 2; }
out=$(mktemp -d /tmp/device_speed.XXXXXX)
trap 'rm -rf "$out"' EXIT
py=/usr/bin/python3
[ -x "$py" ] || py=python3

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
ref=$("$bin" reference --layers "$layers" --fp32-only --repeat 3 --threads "$threads" --json 2>/dev/null)
dev=$("$bin" run --layers "$layers" --no-reference --no-profile --inferences 3 --threads "$threads" --out "$out" --json 2>/dev/null)
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)" >&2

REF="$ref" DEV="$dev" LAYERS="$layers" THREADS="$threads" "$py" - <<'EOF'
import json, os, statistics
ref = json.loads(os.environ["REF"])
dev = json.loads(os.environ["DEV"])
calls = [c["host_ms"]["upload"] + c["host_ms"]["execute"] + c["host_ms"]["download"] for c in dev["calls"]]
ref_ms = ref["fp32_seconds"] * 1000.0
dev_ms = statistics.median(calls)
print(f"layers {os.environ['LAYERS']}, threads {os.environ['THREADS']}")
print(f"FP32 reference (median of 3): {ref_ms:,.0f} ms")
print("device model calls: " + ", ".join(f"{c:,.0f}" for c in calls) + " ms")
print(f"device model (median of {len(calls)}): {dev_ms:,.0f} ms")
print(f"ratio device / FP32 reference: {dev_ms / ref_ms:.2f} (goal <= 1.5)")
print(f"embeddings identical across calls: {dev['identical_across_calls']}")
EOF
