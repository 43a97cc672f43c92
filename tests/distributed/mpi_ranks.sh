#!/bin/sh
# A two-chip pipeline (siglip2-tiny on test16x2) run in one process, under
# `mpirun -np 1` and `mpirun -np 2`: the embeddings' bytes and the cycles must be the same;
# `-np 3` (more ranks than chips) must be one line and exit 2.
# Usage: mpi_ranks.sh TILEVIT SCRATCH_DIR
set -eu
tilevit=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI runs as root
model="--preset siglip2-tiny --machine test16x2 --batch 2 --inferences 1 --check-numerics"

"$tilevit" run $model --out "$scratch/local" >/dev/null 2>&1
for np in 1 2; do
  mpirun --oversubscribe -np $np "$tilevit" run $model --out "$scratch/np$np" >/dev/null 2>&1
done
cycles() { grep -m1 '"device_cycles"' "$1/run.json"; }
for run in np1 np2; do
  cmp "$scratch/local/embeddings.npy" "$scratch/$run/embeddings.npy"
  cmp "$scratch/local/model.tvpkg" "$scratch/$run/model.tvpkg"
  test "$(cycles "$scratch/local")" = "$(cycles "$scratch/$run")"
  grep -q '"bit_exact_vs_device_numerics": true' "$scratch/$run/run.json"
  grep -q '"passed": true' "$scratch/$run/run.json"
done
grep -q '"ranks": 2' "$scratch/np2/run.json"

status=0
mpirun --oversubscribe -np 3 "$tilevit" run $model --out "$scratch/np3" >"$scratch/np3.out" 2>&1 || status=$?
test "$status" -eq 2
grep -q "tilevit: error: mpirun -np 3: more ranks than the machine's 2 chips" "$scratch/np3.out"
echo "np 1 and np 2: same embeddings, package and cycles ($(cycles "$scratch/np2"))"
