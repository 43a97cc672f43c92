#!/usr/bin/env bash
# The original's shard shapes against its in-model kernel measurements: compiles the main
# job (So400m/14, 27 layers + MAP, batch 1) with each seed plan pinned (bench/plans/,
# docs/COMPILER.md "Plan files") and prints, per kernel of one layer, the modelled longest
# call over tiles (`compile --kernels`: its matrix-product term, which is what the original
# timed as its own GEMM kernel) next to every matching in-model measurement in
# ../shared/reference/measurements/kernels.json and the difference in percent.
# Whatever coefficients the machine holds are used: re-run after a recalibration.
# Usage: bench/seed_shards.sh [MACHINE_FILE] [KERNELS_JSON]
set -euo pipefail
cd "$(dirname "$0")/.."
machine=${1:-}
kernels=${2:-../shared/reference/measurements/kernels.json}
bin=./build/tilevit
[ -x "$bin" ] || { echo "build first: bash scripts/setup.sh" >&2; exit 2; }
[ -f "$kernels" ] || { echo "$kernels: not found (second argument: kernels.json)" >&2; exit 2; }
machine_flag=()
[ -n "$machine" ] && machine_flag=(--machine "$machine")
mkdir -p bench/out
# One attention split fixes QK^T and P.V together (a key block feeds both), so the original's
# two attention shapes need two plans: QK^T 81 rows x 80 keys, P.V 49 rows x 128 keys.
for plan in seed-shards seed-pv-shards; do
  "$bin" compile "${machine_flag[@]}" --plan "bench/plans/so400m-$plan.json" --kernels --steps --json \
    > "bench/out/$plan.json" 2>/dev/null
done
"$bin" machine "${machine_flag[@]}" --json > bench/out/seed-machine.json
/usr/bin/python3 - "$kernels" <<'EOF'
import json, sys

measurements = json.load(open(sys.argv[1]))["measurements"]
machine = json.load(open("bench/out/seed-machine.json"))
plans = {p: json.load(open(f"bench/out/{p}.json")) for p in ("seed-shards", "seed-pv-shards")}

# label, plan, (operation, kind) of our program, (kernel, rows, keys) in kernels.json
ROWS = [
    ("QKV", "seed-shards", ("layer.qkv", "gemm_fp8"), ("gemm_f8 fused QKV", 244, 128)),
    ("MLP up", "seed-shards", ("layer.mlp.fc1", "gemm_fp8"), ("gemm_f8 MLP up", 82, 192)),
    ("MLP down", "seed-shards", ("layer.mlp.fc2", "gemm_fp8"), ("gemm_f8 MLP down", 122, 160)),
    ("out-proj", "seed-shards", ("layer.out", "gemm_fp8"), ("gemm_f8 attention out-proj", 146, 96)),
    ("QK^T FP16", "seed-shards", ("layer.attention", "attention_scores"), ("gemm_f16 QK", 81, 80)),
    ("P.V FP16", "seed-pv-shards", ("layer.attention", "attention_values"), ("gemm_f16 PV", 49, 128)),
]

generation = machine.get("generation") or machine.get("costs", {}).get("generation") or "not named"
print(f"machine {machine['name']} (kernel generation: {generation}); modelled = longest call of the layer "
      f"over tiles, its matrix-product term; estimated cycles per call: "
      f"seed-shards {plans['seed-shards']['estimated_cycles']:,}, seed-pv-shards {plans['seed-pv-shards']['estimated_cycles']:,}")
print(f"{'kernel':10} {'plan':15} {'our shape':12} {'modelled':>9} {'whole call':>10} {'measured':>9} "
      f"{'their shape':14} {'date':17} {'diff':>7}  mode")
table = []  # also written to bench/out/seed-shards-table.json
for label, plan, (op, kind), (name, rows, keys) in ROWS:
    ours = [r for r in plans[plan]["kernel_maxima"] if r["operation"] == op and r["kind"] == kind]
    if len(ours) != 1:
        sys.exit(f"{plan}: no single {kind} row for {op} in compile --kernels")
    r = ours[0]
    matches = [m for m in measurements if m["kernel"] == name and m.get("rows") == rows and m.get("keys") == keys]
    if not matches:
        sys.exit(f"{sys.argv[1]}: no measurement of {name} {rows} x {keys}")
    for m in matches:
        entry = measurements.index(m)
        diff = 100.0 * (r["matrix_cycles"] - m["cycles"]) / m["cycles"]
        shape = m.get("shape", f"R{rows}/K{keys}")
        print(f"{label:10} {plan:15} {r['shape']:12} {r['matrix_cycles']:>9,} {r['max_cycles']:>10,} {m['cycles']:>9,} "
              f"{shape:14} {m['date']:17} {diff:>+6.1f}%  {m.get('mode', '')}")
        table.append({"entry": entry, "label": label, "plan": plan, "shape": r["shape"], "modelled": r["matrix_cycles"],
                      "whole_call": r["max_cycles"], "measured": m["cycles"], "their_shape": shape,
                      "date": m["date"], "diff_percent": round(diff, 2), "mode": m.get("mode", "")})
json.dump(table, open("bench/out/seed-shards-table.json", "w"), indent=1)
print("our shapes: GEMM rows x inner x cols; attention queries x keys x head_dim (72, the original padded it to 80: "
      "the same number of 16-wide panels); 'whole call' adds the fused passes (row maxima, softmax) the original ran as "
      "separate kernels")
EOF
