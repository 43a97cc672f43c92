#!/usr/bin/env bash
# The plan search on the main job (So400m/14, 27 layers + MAP, batch 1, --fp8-scale -4,
# W 1024 baseline, embedded C600): per step count, the estimated cycles of the baseline and
# the result, the search time, why it stopped, and the package SHA-256 at 1 and 2 threads
# (they must be equal), then that the written plan rebuilds the same package.
# Then batch 2 at the default 8 steps (2 threads).
# Usage: bench/plan_search.sh [STEPS...]   (default: 8 64)
set -euo pipefail
cd "$(dirname "$0")/.."
bin=./build/tilevit
[ -x "$bin" ] || { echo "build first: bash scripts/setup.sh" >&2; exit 2; }
mkdir -p bench/out
field() { /usr/bin/python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
[ $# -gt 0 ] || set -- 8 64
for steps_n in "$@"; do
  shas=()
  for threads in 2 1; do
    json=$("$bin" compile --fp8-scale -4 --exchange-stream-words 1024 --threads "$threads" \
           --optimization-steps "$steps_n" --write-plan "bench/out/plan-$steps_n.json" --json 2>/dev/null)
    shas+=("$(echo "$json" | field 'd["package_sha256"]')")
    echo "$json" | field "f'steps $steps_n, threads $threads: baseline {d[\"optimization\"][\"baseline\"][\"estimated_cycles\"]}, result {d[\"estimated_cycles\"]}, search {d[\"optimization\"][\"search_seconds\"]:.1f} s, {d[\"optimization\"][\"candidates_compiled\"]} candidates, stopped: {d[\"optimization\"][\"stopped\"]}'"
  done
  rebuilt=$("$bin" compile --plan "bench/out/plan-$steps_n.json" --json 2>/dev/null | field 'd["package_sha256"]')
  echo "steps $steps_n: SHA-256 ${shas[0]} (threads 2), ${shas[1]} (threads 1), ${rebuilt} (rebuilt from the plan)"
  [ "${shas[0]}" = "${shas[1]}" ] && [ "${shas[0]}" = "$rebuilt" ]
done
json=$("$bin" compile --fp8-scale -4 --exchange-stream-words 1024 --threads 2 --batch 2 --optimization-steps 8 \
       --json 2>/dev/null)
echo "$json" | field "f'batch 2, steps 8: baseline {d[\"optimization\"][\"baseline\"][\"estimated_cycles\"]}, result {d[\"estimated_cycles\"]}, search {d[\"optimization\"][\"search_seconds\"]:.1f} s, stopped: {d[\"optimization\"][\"stopped\"]}'"
