#!/usr/bin/env bash
# A one-node Slurm on this machine, for trying kernlab under srun and sbatch without a cluster
# (issue 15; results history: 2026-11-26-slurm-local/). Debian's Slurm (22.05 on Debian 12) and MUNGE;
# slurmctld and slurmd run on localhost as root, no cgroups, PMIx as the default MPI plugin.
#   scripts/slurm_local.sh         install (when missing), write /etc/slurm/slurm.conf, start
#   scripts/slurm_local.sh stop    stop the three daemons this script started
# Logs and state in /tmp/slurm. Then: sinfo; srun -n 2 hostname; srun -n 2 --mpi=pmix PROGRAM.
# Not for CI: the srun tests of tests/unit/mpi/test_mpi.cpp skip where no Slurm answers.
set -euo pipefail
dir=/tmp/slurm

stop() {
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" /run/munge/munged.pid; do
    [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
  done
}
if [ "${1:-}" = stop ]; then
  stop
  exit 0
fi

if ! command -v slurmctld >/dev/null || ! command -v munged >/dev/null; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y slurm-wlm munge
fi

cpus=$(nproc)
mkdir -p "$dir/state" "$dir/spool" /etc/slurm
cat >/etc/slurm/slurm.conf <<EOF
ClusterName=kernlab
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MailProg=/bin/true
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmix
ReturnToService=2
NodeName=localhost NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
EOF

stop
sleep 1
# MUNGE: the package made the key; its daemon runs as the munge user.
mkdir -p /run/munge /var/log/munge /var/lib/munge
chown munge:munge /run/munge /var/log/munge /var/lib/munge /etc/munge /etc/munge/munge.key
runuser -u munge -- munged
slurmctld -i
slurmd -N localhost
for _ in $(seq 30); do
  state=$(sinfo -h -o %T 2>/dev/null || true)
  case "$state" in idle* | mixed* | allocated*) break ;; esac
  sleep 1
done
sinfo
srun --mpi=list
