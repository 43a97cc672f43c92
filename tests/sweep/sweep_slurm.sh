#!/bin/bash
# A 20-point sweep through a real single-node Slurm (scripts/single_node_slurm.sh starts
# munged, slurmctld and slurmd with every file in a temporary directory and stops them by
# the process ids it started): `tilevit sweep SPEC --out DIR --slurm --wait`, a job array
# of 20 tasks, 2 at a time, and a merge job after it; the merged CSV must have 20 rows and
# equal a local run's; then a sweep whose tasks fail must end with its merge job cancelled
# and exit 1. A daemon that does not start fails the test.
# Usage: sweep_slurm.sh TILEVIT
set -euo pipefail
tilevit=$1
here=$(dirname "$0")
source "$here/sweep_common.sh"
source "$here/../../scripts/single_node_slurm.sh"
work=$(mktemp -d)
trap 'stop_slurm; rm -rf "$work"' EXIT
start_slurm "$work" || fail "the single-node Slurm did not start"

write_spec "$work/spec.json" 20
"$tilevit" sweep "$work/spec.json" --out "$work/sweep" --slurm --max-parallel 2 --wait --json >"$work/submit.json" ||
  { slurm_logs "$work"; cat "$work/sweep/slurm/"*.log >&2 || true; fail "tilevit sweep --slurm --wait exited with $?"; }
grep -q '"array_job"' "$work/submit.json" || fail "no array job id: $(cat "$work/submit.json")"
rows=$(($(wc -l <"$work/sweep/sweep.csv") - 1))
[ "$rows" = 20 ] || fail "merged CSV has $rows rows, expected 20"
logs=$(ls "$work/sweep/slurm/"point-*.log | wc -l)
[ "$logs" = 20 ] || fail "$logs array task logs, expected 20 (one task per point)"
[ -s "$work/sweep/pareto.png" ] && [ -s "$work/sweep/pareto.html" ] || fail "the merge job wrote no chart"
missing=$(grep -c ',missing,' "$work/sweep/sweep.csv" || true)
[ "$missing" = 0 ] || fail "$missing points missing after the merge"
"$tilevit" sweep "$work/spec.json" --out "$work/local" --threads 1 >/dev/null 2>&1 || fail "local sweep"
diff <(csv_without_timings "$work/sweep/sweep.csv") <(csv_without_timings "$work/local/sweep.csv") >&2 ||
  fail "the Slurm sweep's CSV differs from a local run's"

# An array task that fails (here: its sweep's machine file is gone when the tasks start;
# the partition is held down until then) cancels the merge job, and --wait says so: exit 1.
cp "$(dirname "$0")/../../src/target/machines/test16.machine" "$work/gone.machine"
sed 's/"machine": "test16"/"machine": "gone.machine"/' "$work/spec.json" >"$work/broken.json"
scontrol update PartitionName=sweep State=DOWN
set +e
"$tilevit" sweep "$work/broken.json" --out "$work/broken" --slurm --max-parallel 2 --wait 2>"$work/broken.err" &
submitter=$!
for _ in $(seq 100); do [ -s "$work/broken/slurm/merge.sh" ] && break; sleep 0.1; done
sleep 1  # both jobs submitted
rm "$work/gone.machine"
scontrol update PartitionName=sweep State=UP
wait "$submitter"
status=$?
set -e
[ "$status" = 1 ] || { cat "$work/broken.err" >&2; fail "a failed array task: exit $status, expected 1"; }
grep -q "merge job [0-9]* ended CANCELLED" "$work/broken.err" || fail "no cancelled merge job: $(cat "$work/broken.err")"
echo "PASS: 20 points as a Slurm job array, merged by a dependent job; a failed task cancels the merge"
