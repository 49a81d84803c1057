#!/usr/bin/env bash
# Stop the daemons that up.sh started, by the PIDs in their pid files (never by name).
set -uo pipefail
state=$1
for daemon in slurmd slurmctld munged; do
  pidfile="$state/$daemon.pid"
  [ -s "$pidfile" ] || continue
  pid=$(cat "$pidfile")
  kill "$pid" 2>/dev/null || continue
  for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
done
# Job processes that outlived their job: proctrack/linuxproc follows the process tree, so a
# process whose parent exited escapes the kill at the end of a job (seen: a job's snakemake left
# waiting on a thread after scancel). Every process of this cluster's jobs carries its name.
for environ in /proc/[0-9]*/environ; do
  pid=${environ#/proc/}; pid=${pid%/environ}
  if { tr '\0' '\n' < "$environ"; } 2>/dev/null | grep -qx "SLURM_CLUSTER_NAME=rnnrepro-local"; then
    kill -9 "$pid" 2>/dev/null || true
  fi
done
# remove the configuration only if up.sh wrote it
for file in /etc/slurm/slurm.conf /etc/slurm/gres.conf; do
  grep -qF "# written by rnnrepro scripts/local-slurm/up.sh" "$file" 2>/dev/null && rm -f "$file"
done
exit 0
