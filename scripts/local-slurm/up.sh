#!/usr/bin/env bash
# Bring up a single-node SLURM cluster on localhost whose state lives in STATE_DIR:
# munged (if none runs), slurmctld and slurmd, one partition `gpu` with two fake GPUs
# (character devices standing in for GPUs: jobs see CUDA_VISIBLE_DEVICES but no driver).
# The node advertises 8 CPUs and 64 GB (SlurmdParameters=config_overrides), so the
# production profile's requests can be submitted on a small machine.
#   scripts/local-slurm/up.sh STATE_DIR
#   scripts/local-slurm/down.sh STATE_DIR    stops the daemons by the PIDs in their pid files
# The configuration goes to /etc/slurm/ (the slurm executor plugin drops SLURM_CONF for the
# srun it runs inside each job, so only the default location works); an existing
# configuration that this script did not write is never overwritten.
set -euo pipefail
state=$(mkdir -p "$1" && cd "$1" && pwd)
ctld_port=${LOCAL_SLURM_CTLD_PORT:-16817}
slurmd_port=${LOCAL_SLURM_SLURMD_PORT:-16818}
host=$(hostname -s)
mkdir -p "$state/ctld" "$state/spool" "$state/dev"

for n in 0 1; do
  [ -e "$state/dev/fakegpu$n" ] || mknod -m 0666 "$state/dev/fakegpu$n" c 1 3
done

conf_dir=/etc/slurm
marker="# written by rnnrepro scripts/local-slurm/up.sh"
if [ -e "$conf_dir/slurm.conf" ] && ! grep -qF "$marker" "$conf_dir/slurm.conf"; then
  echo "local-slurm: $conf_dir/slurm.conf exists and is not ours; not touching a real cluster's configuration" >&2
  exit 1
fi
mkdir -p "$conf_dir"
cat > "$conf_dir/slurm.conf" <<CONF
$marker (state in $state)
ClusterName=rnnrepro-local
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=$state/ctld
SlurmdSpoolDir=$state/spool
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=512
MinJobAge=3600
KillWait=30
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
SlurmdParameters=config_overrides
GresTypes=gpu
MpiDefault=none
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 RealMemory=64000 Gres=gpu:2 State=UNKNOWN
PartitionName=gpu Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
printf '%s\nNodeName=%s Name=gpu File=%s/dev/fakegpu[0-1]\n' "$marker" "$host" "$state" > "$conf_dir/gres.conf"
unset SLURM_CONF

# munge: reuse a running munged, else start one (it refuses to start as root).
if ! munge -n >/dev/null 2>&1; then
  [ -s /etc/munge/munge.key ] || { dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null; }
  chown munge:munge /etc/munge/munge.key && chmod 0400 /etc/munge/munge.key
  mkdir -p /run/munge /var/log/munge /var/lib/munge && chown munge:munge /run/munge /var/log/munge /var/lib/munge
  runuser -u munge -- /usr/sbin/munged
  cp /run/munge/munged.pid "$state/munged.pid" 2>/dev/null || true
fi

/usr/sbin/slurmctld -i
/usr/sbin/slurmd

for _ in $(seq 100); do
  if sinfo -h -o %T 2>/dev/null | grep -qE '^idle'; then
    echo "local-slurm: up (configuration in $conf_dir, state in $state)" >&2
    exit 0
  fi
  sleep 0.2
done
echo "local-slurm: the node did not become idle; logs in $state" >&2
sinfo >&2 || true
exit 1
