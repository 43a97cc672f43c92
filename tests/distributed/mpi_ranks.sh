#!/bin/sh
# A two-chip pipeline (siglip2-tiny on test16x2) run in one process, under
# `mpirun -np 1` and `mpirun -np 2`: the embeddings' bytes and the cycles must be the same;
# `-np 3` (more ranks than chips) must be one line and exit 2. The same two chips with a
# call of 3 micro-batches of batch 1 in one process, under -np 1 and -np 2: the same bytes
# and cycles (the makespan and the first micro-batch's). Then four test16 chips (one
# layer each) under -np 1, 2 (two chips per rank) and 4, one call of one batch and of 3
# micro-batches: the same again.
# Usage: mpi_ranks.sh TILEVIT SCRATCH_DIR
set -eu
tilevit=$1
scratch=$2
rm -rf "$scratch"
mkdir -p "$scratch"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1  # CI runs as root
model="--preset siglip2-tiny --machine test16x2 --batch 2 --inferences 1 --check-numerics"

cycles() { grep -m1 '"device_cycles"' "$1/run.json"; }
first() { grep -m1 '"first_micro_batch_cycles"' "$1/run.json"; }
# Runs the model flags given in one process and under mpirun -np 1 and -np 2, into
# $scratch/NAME-local, -np1, -np2: the same embeddings, package and cycles (the call's
# and its first micro-batch's), every run bit for bit the device-numerics reference's.
same_at_np1_np2() {
  name=$1
  shift
  "$tilevit" run "$@" --out "$scratch/$name-local" >/dev/null 2>&1
  for np in 1 2; do
    run="$scratch/$name-np$np"
    mpirun --oversubscribe -np $np "$tilevit" run "$@" --out "$run" >/dev/null 2>&1
    cmp "$scratch/$name-local/embeddings.npy" "$run/embeddings.npy"
    cmp "$scratch/$name-local/model.tvpkg" "$run/model.tvpkg"
    test "$(cycles "$scratch/$name-local")" = "$(cycles "$run")"
    test "$(first "$scratch/$name-local")" = "$(first "$run")"
    grep -q '"cycles_match_model": true' "$run/run.json"
    grep -q '"bit_exact_vs_device_numerics": true' "$run/run.json"
    grep -q '"passed": true' "$run/run.json"
  done
}
same_at_np1_np2 batch2 $model
grep -q '"ranks": 2' "$scratch/batch2-np2/run.json"
same_at_np1_np2 micro3 --preset siglip2-tiny --machine test16x2 --batch 1 --micro-batches 3 --inferences 1 --check-numerics
grep -q '"images": 3' "$scratch/micro3-np2/run.json"

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
for k in 1 3; do
  for np in 1 2 4; do
    mpirun --oversubscribe -np $np "$tilevit" run $four --micro-batches $k --out "$scratch/x4k${k}np$np" >/dev/null 2>&1
  done
  for run in x4k${k}np2 x4k${k}np4; do
    cmp "$scratch/x4k${k}np1/embeddings.npy" "$scratch/$run/embeddings.npy"
    test "$(cycles "$scratch/x4k${k}np1")" = "$(cycles "$scratch/$run")"
  done
done
echo "np 1 and np 2 (2 chips, 1 and 3 micro-batches), np 1, 2 and 4 (4 chips): same embeddings and cycles"
