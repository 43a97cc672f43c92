# A single-node Slurm for tests and measurements, sourced (bash): start_slurm DIR starts
# munged (a key of its own), slurmctld and slurmd with every file under DIR and ports on
# localhost, exports SLURM_CONF, and waits until the node is idle; stop_slurm stops the
# daemons by the process ids start_slurm started. Debian packages: munge, slurm-wlm.
# A daemon that does not come up is an error (return 1, the logs on stderr), never a skip.

slurm_pids=()

slurm_logs() {
  local log
  for log in "$1"/*.log "$1"/*.out; do
    [ -f "$log" ] && { echo "== $log" >&2; tail -20 "$log" >&2; }
  done
  return 0
}

start_slurm() {
  local dir=$1 tool port
  for tool in munged mungekey slurmctld slurmd sbatch sinfo; do
    command -v "$tool" >/dev/null || { echo "start_slurm: $tool is not on PATH (Debian: munge, slurm-wlm)" >&2; return 1; }
  done
  mungekey --create --keyfile="$dir/munge.key"
  chmod 600 "$dir/munge.key"
  munged --foreground --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" >"$dir/munged.out" 2>&1 &
  slurm_pids+=($!)
  for _ in $(seq 50); do [ -S "$dir/munge.sock" ] && break; sleep 0.1; done
  [ -S "$dir/munge.sock" ] || { slurm_logs "$dir"; echo "start_slurm: munged did not create its socket" >&2; return 1; }

  port=$((20000 + ($$ % 5000) * 2))  # two ports picked from this shell's process id
  mkdir -p "$dir/state" "$dir/spool"
  cat >"$dir/slurm.conf" <<CONF
ClusterName=tilevitsweep
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=sched_min_interval=0,batch_sched_delay=0
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=sweep Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
  export SLURM_CONF="$dir/slurm.conf"
  slurmctld -D -i -f "$SLURM_CONF" >"$dir/slurmctld.out" 2>&1 &
  slurm_pids+=($!)
  slurmd -D -f "$SLURM_CONF" >"$dir/slurmd.out" 2>&1 &
  slurm_pids+=($!)
  for _ in $(seq 100); do
    [ "$(sinfo -h -o %T 2>/dev/null)" = idle ] && return 0
    sleep 0.2
  done
  slurm_logs "$dir"
  echo "start_slurm: the Slurm node did not come up idle" >&2
  return 1
}

stop_slurm() {
  local pid
  for pid in "${slurm_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${slurm_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  slurm_pids=()
}
