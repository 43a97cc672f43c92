#!/usr/bin/env bash
# A sweep through a single-node Slurm started for it (scripts/single_node_slurm.sh), as
# docs/experiments/scaleout-measurements-2026-12-03.md measures it: the whole sweep's wall time (submission to the
# merged outputs), the median of the points' own evaluation times, and Slurm's task
# starts. Usage: bench/sweep_slurm.sh [SPEC] [OUT] [MAX_PARALLEL]
set -euo pipefail
cd "$(dirname "$0")/.."
spec=${1:-tests/fixtures/sweeps/so400m-c600.json}
out=${2:-bench/out/sweep-so400m}
parallel=${3:-2}
bin=./build/tilevit
[ -x "$bin" ] || { echo "build first: bash scripts/setup.sh" >&2; exit 2; }
source scripts/single_node_slurm.sh
work=$(mktemp -d)
trap 'stop_slurm; rm -rf "$work"' EXIT
start_slurm "$work"
rm -rf "$out"
mkdir -p "$(dirname "$out")"
start=$(date +%s.%N)
"$bin" sweep "$spec" --out "$out" --slurm --max-parallel "$parallel" --wait --json >"$work/submit.json"
end=$(date +%s.%N)
cp "$work/slurmctld.log" "$out/slurm/slurmctld.log"
/usr/bin/python3 - "$out/sweep.json" "$start" "$end" "$parallel" <<'PY'
import json, statistics, sys
merged = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
records = merged["records"]
seconds = [r["seconds"] for r in records if "seconds" in r]
ok = [r["seconds"] for r in records if r["status"] == "ok"]
failed = [r["seconds"] for r in records if r["status"] == "failed"]
print(f"points {len(records)}: {merged['ok']} compiled, {merged['failed']} failed, {merged['missing']} missing, "
      f"{merged['pareto']} on the Pareto front")
print(f"wall {wall:.1f} s with {sys.argv[4]} tasks at once: {wall / len(records):.2f} s per point")
print(f"median point seconds (in the task): all {statistics.median(seconds):.2f}, "
      f"compiled {statistics.median(ok) if ok else 0:.2f}, failed {statistics.median(failed) if failed else 0:.2f}")
PY
