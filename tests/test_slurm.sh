#!/usr/bin/env bash
# scripts/slurm/ for real, on a one-node Slurm cluster started here on loopback (slurmctld,
# slurmd and munged from Debian's slurm-wlm and munge, private configuration, state and
# ports under a temporary directory; every daemon stopped on exit), on the CPU backend:
#   1. submit.sh: a 4-task array of a small campaign, the dependent merge, the audit;
#   2. one task cancelled before it runs: the merge job refuses, naming the missing
#      cases and the rerun command, which is run as printed, then the printed merge.
# Every wait is bounded (the daemons too: 220 s at most). Skips (exit 77) only when Slurm
# cannot be installed, or when not run as root (slurmd needs it).
#   tests/test_slurm.sh TILEBENCH_BINARY SOURCE_DIR
set -euo pipefail
binary=$(realpath "${1:?usage: $0 TILEBENCH_BINARY SOURCE_DIR}")
source_dir=$(realpath "${2:?usage: $0 TILEBENCH_BINARY SOURCE_DIR}")
SKIP=77

have_slurm() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null &&
    command -v munged >/dev/null && command -v sbatch >/dev/null
}
if ! have_slurm; then
  # scripts/setup.sh installs them (TB_PACKAGES); a plain ctest run may come first
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "slurm test: installing slurm-wlm and munge"
    DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -qq slurm-wlm munge \
      >/dev/null 2>&1 || true
  fi
  if ! have_slurm; then
    echo "SKIPPED: Slurm could not be installed (apt-get install slurm-wlm munge, as root):" \
      "the Slurm job-array test did not run"
    exit $SKIP
  fi
fi

if [ "$(id -u)" != 0 ]; then
  echo "SKIPPED: slurmd runs jobs as their users only as root; run this test as root" \
    "(scripts/test.sh does)"
  exit $SKIP
fi

work=$(mktemp -d /tmp/tb-slurm-XXXXXX)
chmod 755 "$work"
pids=()
cleanup() {
  local status=$?
  [ -n "${SLURM_CONF:-}" ] && timeout 10 scancel --quiet --full --signal=KILL --user="$(id -un)" \
    >/dev/null 2>&1 || true
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[i]}" 2>/dev/null || true
  done
  for pid in "${pids[@]}"; do
    for _ in $(seq 50); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  done
  if [ $status -ne 0 ] && [ -d "$work/log" ]; then
    for f in "$work"/log/*.log "$work"/campaign*/slurm-*.out; do
      [ -f "$f" ] && { echo "== $f"; tail -30 "$f"; }
    done
  fi
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# bounded wait: wait_for SECONDS WHAT COMMAND...
wait_for() {
  local seconds=$1 what=$2
  shift 2
  for ((t = 0; t < seconds * 4; t++)); do
    "$@" >/dev/null 2>&1 && return 0
    sleep 0.25
  done
  echo "slurm test: timed out after ${seconds}s waiting for $what" >&2
  return 1
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

mkdir -p "$work"/{munge,state,spool,log}
chmod 711 "$work/munge"
head -c 1024 /dev/urandom >"$work/munge/munge.key"
chmod 400 "$work/munge/munge.key"
munged --foreground --force --socket="$work/munge/socket" --key-file="$work/munge/munge.key" \
  --log-file="$work/log/munged.log" --pid-file="$work/munge/munged.pid" \
  --seed-file="$work/munge/seed" >"$work/log/munged.out" 2>&1 &
pids+=($!)
wait_for 10 munged test -S "$work/munge/socket"

node=$(hostname -s)
ctld_port=$(free_port)
slurmd_port=$(free_port)
user=$(id -un)
export SLURM_CONF=$work/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=tilebench-ci
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/munge/socket
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/log/slurmctld.log
SlurmdLogFile=$work/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
MaxArraySize=64
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=ci Nodes=$node Default=YES MaxTime=10 State=UP
EOF
timeout 220 slurmctld -D -i -f "$SLURM_CONF" >"$work/log/slurmctld.out" 2>&1 &
pids+=($!)
timeout 220 slurmd -D -f "$SLURM_CONF" -N "$node" >"$work/log/slurmd.out" 2>&1 &
pids+=($!)
node_idle() { sinfo -h -N -o %t | grep -qx idle; }
wait_for 30 "the node to come up idle" node_idle
echo "slurm test: one-node cluster up ($node, ports $ctld_port/$slurmd_port)"

export TILEBENCH=$binary
campaign=(run --backend cpu --ops softmax,add --shapes 37x769,64x64 --samples 3
  --warmup-ms 1 --sample-ms 1)
job_done() { [ -z "$(squeue -h -j "$1" -o %i 2>/dev/null)" ]; }
job_state() { scontrol -o show job "$1" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }

# 1. the array and its merge
read -r array merge < <("$source_dir/scripts/slurm/submit.sh" --shards 4 \
  --sbatch --time=5 "$work/campaign" "${campaign[@]}")
echo "slurm test: array $array, merge $merge"
wait_for 90 "the merge job $merge" job_done "$merge"
test -f "$work/campaign/merged/results.json" || {
  echo "slurm test: no merged results; merge job state $(job_state "$merge")" >&2
  cat "$work"/campaign/slurm-merge-*.out >&2 || true
  exit 1
}
grep -q "tilebench audit: MERGED" "$work"/campaign/slurm-merge-*.out
python3 "$source_dir/tools/audit/tilebench_audit.py" "$work/campaign/merged" | tail -2
python3 - "$work/campaign/merged/results.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
merge = doc["run"]["merge"]
assert merge["shard_count"] == 4, merge["shard_count"]
assert sorted(s["index"] for s in merge["shards"]) == [0, 1, 2, 3]
assert len(doc["cases"]) == 2 * 2 * 2, len(doc["cases"])
assert {c["shard"] for c in doc["cases"]} == {0, 1, 2, 3}
print("slurm test: merged 4 shards,", len(doc["cases"]), "cases")
EOF
for i in 0 1 2 3; do
  grep -q "task $i of 4" "$work"/campaign/slurm-*_"$i".out
done

# 2. a task that never runs: the merge refuses and says how to rerun it
read -r array merge < <("$source_dir/scripts/slurm/submit.sh" --shards 4 \
  --sbatch --hold --sbatch --time=5 "$work/campaign2" "${campaign[@]}")
scancel "${array}_2"
scontrol release "$array" "$merge"
wait_for 90 "the merge job $merge" job_done "$merge"
log=$(ls "$work"/campaign2/slurm-merge-*.out)
grep -q "refused: 1 of 4 shard(s) missing or incomplete: 2" "$log"
grep -q "missing cases" "$log"
test ! -e "$work/campaign2/merged"
rerun=$(grep -A1 "^rerun just those" "$log" | tail -1)
merge_command=$(grep -A1 "^then merge:" "$log" | tail -1)
echo "slurm test: the merge refused; rerunning:$rerun"
eval "timeout 120 $rerun --quiet" >/dev/null
eval "timeout 120 $merge_command --quiet"
python3 "$source_dir/tools/audit/tilebench_audit.py" "$work/campaign2/merged" | tail -1
echo "slurm test: passed"
