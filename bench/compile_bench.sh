#!/usr/bin/env bash
# Compile time of the full build (So400m/14, 27 layers + MAP, batch 1, --fp8-scale -4,
# --exchange-stream-words 1024) on the embedded C600: median of N runs, package SHA-256
# of each run (they must all be equal). Usage: bench/compile_bench.sh [N] [THREADS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
threads=${2:-2}
bin=./build/tilevit
[ -x "$bin" ] || { echo "build first: bash scripts/setup.sh" >&2; exit 2; }
mkdir -p bench/out
times=()
shas=()
for i in $(seq "$runs"); do
  json=$("$bin" compile --fp8-scale -4 --exchange-stream-words 1024 --threads "$threads" \
         --package bench/out/full.tvpkg --json 2>/dev/null)
  times+=("$(echo "$json" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["compile_seconds"])')")
  shas+=("$(echo "$json" | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["package_sha256"])')")
done
median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
unique=$(printf '%s\n' "${shas[@]}" | sort -u | wc -l)
echo "compile seconds: ${times[*]}"
echo "median ${median} s over ${runs} runs, ${threads} threads; distinct package SHA-256: ${unique} (${shas[0]})"
[ "$unique" -eq 1 ]
