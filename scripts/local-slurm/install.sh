#!/usr/bin/env bash
# Install Debian's SLURM (controller, node daemon, clients) and munge when they are missing.
# Needs root and Debian's package registry; prints why when it cannot.
set -euo pipefail
if command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v munged >/dev/null && command -v sbatch >/dev/null; then
  exit 0
fi
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
  echo "local-slurm: slurm-wlm and munge are missing and cannot be installed here (needs root and apt-get)" >&2
  exit 1
fi
echo "local-slurm: installing slurm-wlm and munge with apt-get" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
