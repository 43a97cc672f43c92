#!/bin/bash
# A 20-point sweep through a real single-node Slurm: this script starts munged, slurmctld
# and slurmd (Debian's munge and slurm-wlm) with every file in a temporary directory and
# ports on localhost only, submits `tilevit sweep SPEC --out DIR --slurm --wait` (a job
# array of 20 tasks, 2 at a time, and a merge job after it), checks the merged CSV, and
# stops the daemons by the process ids it started. A daemon that does not start fails
# the test. Usage: sweep_slurm.sh TILEVIT
set -euo pipefail
tilevit=$1
source "$(dirname "$0")/sweep_common.sh"
for tool in munged mungekey slurmctld slurmd sbatch sinfo; do
  command -v "$tool" >/dev/null || fail "$tool is not on PATH (Debian: munge, slurm-wlm)"
done
work=$(mktemp -d)
pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap stop EXIT
show_logs() {
  for log in "$work"/*.log "$work"/*.out; do [ -f "$log" ] && { echo "== $log" >&2; tail -20 "$log" >&2; }; done
  return 0
}

# munge: a key of this test's own, its socket in the temporary directory.
mungekey --create --keyfile="$work/munge.key"
chmod 600 "$work/munge.key"
munged --foreground --force --socket="$work/munge.sock" --key-file="$work/munge.key" --pid-file="$work/munged.pid" \
  --log-file="$work/munged.log" --seed-file="$work/munge.seed" >"$work/munged.out" 2>&1 &
pids+=($!)
for _ in $(seq 50); do [ -S "$work/munge.sock" ] && break; sleep 0.1; done
[ -S "$work/munge.sock" ] || { show_logs; fail "munged did not create its socket"; }

# Slurm: one node (this machine, as localhost), ports picked from this process id.
port=$((20000 + ($$ % 5000) * 2))
mkdir -p "$work/state" "$work/spool"
cat >"$work/slurm.conf" <<CONF
ClusterName=tilevittest
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge.sock
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=sweep Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"
slurmctld -D -i -f "$SLURM_CONF" >"$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" >"$work/slurmd.out" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
  [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && break
  sleep 0.2
done
[ "$(sinfo -h -o %T 2>/dev/null)" = idle ] || { show_logs; fail "the Slurm node did not come up idle"; }

write_spec "$work/spec.json" 20
"$tilevit" sweep "$work/spec.json" --out "$work/sweep" --slurm --max-parallel 2 --wait --json >"$work/submit.json" ||
  { show_logs; cat "$work/sweep/slurm/"*.log >&2 || true; fail "tilevit sweep --slurm --wait exited with $?"; }
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
echo "PASS: 20 points as a Slurm job array, merged by a dependent job"
