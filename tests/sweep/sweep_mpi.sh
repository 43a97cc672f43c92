#!/bin/bash
# `mpirun --oversubscribe -np 2 tilevit sweep SPEC --out DIR --mpi`: rank r evaluates
# points r, r+2, ...; rank 0 merges after a barrier. The merged CSV must equal a local
# run's (host times aside). Usage: sweep_mpi.sh TILEVIT
set -euo pipefail
tilevit=$1
source "$(dirname "$0")/sweep_common.sh"
command -v mpirun >/dev/null || fail "mpirun is not on PATH (Debian: openmpi-bin)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

write_spec "$work/spec.json" 12
mpirun --oversubscribe -np 2 "$tilevit" sweep "$work/spec.json" --out "$work/mpi" --mpi --threads 1 --json \
  >"$work/mpi.json" 2>"$work/mpi.err" || { cat "$work/mpi.err" >&2; fail "mpirun exited with $?"; }
grep -q '"ranks": 2' "$work/mpi.json" || fail "rank 0's summary does not say 2 ranks: $(cat "$work/mpi.json")"
# The summary counts every rank's points, not rank 0's (issue 34, item 8).
grep -q '"evaluated": 12' "$work/mpi.json" || fail "the summary does not count all 12 points: $(cat "$work/mpi.json")"
for rank in 0 1; do
  grep -q "rank $rank of 2: point" "$work/mpi.err" || fail "rank $rank evaluated no point"
done
rank1=$(grep -c "rank 1 of 2: point" "$work/mpi.err")
[ "$rank1" = 6 ] || fail "rank 1 evaluated $rank1 points, expected 6 (points 1, 3, ..., 11)"
[ "$(wc -l <"$work/mpi/sweep.csv")" = 13 ] || fail "merged CSV: $(wc -l <"$work/mpi/sweep.csv") lines, expected 13"
for f in sweep.json pareto.png pareto.html; do [ -s "$work/mpi/$f" ] || fail "$f not written"; done

"$tilevit" sweep "$work/spec.json" --out "$work/local" --workers 2 --threads 1 >/dev/null 2>&1 || fail "local sweep"
diff <(csv_without_timings "$work/mpi/sweep.csv") <(csv_without_timings "$work/local/sweep.csv") >&2 ||
  fail "the MPI sweep's CSV differs from the local one"

# A rerun under MPI evaluates nothing.
mpirun --oversubscribe -np 2 "$tilevit" sweep "$work/spec.json" --out "$work/mpi" --mpi --threads 1 --json \
  >"$work/again.json" 2>/dev/null || fail "mpirun rerun"
grep -q '"evaluated": 0' "$work/again.json" || fail "the rerun evaluated points: $(cat "$work/again.json")"
echo "PASS: 12 points over 2 MPI ranks, merged by rank 0, equal to a local run"
