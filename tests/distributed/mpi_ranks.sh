#!/bin/sh
# A two-chip pipeline (siglip2-tiny on test16x2) run in one process, under
# `mpirun -np 1` and `mpirun -np 2`: the embeddings' bytes and the cycles must be the same;
# `-np 3` (more ranks than chips) must be one line and exit 2. Then four test16 chips
# (one layer each) under -np 1, 2 (two chips per rank) and 4: the same again.
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

# test16 x 4: the test machine's text with a [system] of four chips on a line
"$tilevit" machine --machine test16x2 | sed '/^# derived/,$d' | sed '/^\[system\]/,$d' >"$scratch/test16x4.machine"
for link in 0-1 1-2 2-3; do
  printf '\n[link %s]\nbytes_per_second = 31_250_000_000\nlatency_cycles = 1500\n' $link >>"$scratch/test16x4.machine"
done
printf '\n[system]\nchips = 4\ntopology = line\n' >>"$scratch/test16x4.machine"
four="--preset siglip2-tiny --machine $scratch/test16x4.machine --batch 2 --inferences 1 --no-reference"
for np in 1 2 4; do
  mpirun --oversubscribe -np $np "$tilevit" run $four --out "$scratch/x4np$np" >/dev/null 2>&1
done
for run in x4np2 x4np4; do
  cmp "$scratch/x4np1/embeddings.npy" "$scratch/$run/embeddings.npy"
  test "$(cycles "$scratch/x4np1")" = "$(cycles "$scratch/$run")"
done
echo "np 1 and np 2 (2 chips), np 1, 2 and 4 (4 chips): same embeddings and cycles"
