#!/usr/bin/env bash
# A one-node SLURM on 127.0.0.1 (Debian's slurm-wlm and munge), for trying `lingdiag submit
# --executor slurm` and for its test. Run as root; idempotent: starts only what is not running.
#   apt-get install -y slurm-wlm munge && bash scripts/slurm-single-node.sh
set -euo pipefail
host=$(hostname -s)
cpus=$(nproc)
mkdir -p /etc/slurm /var/spool/slurmd /var/spool/slurmctld /var/log/slurm /run/munge
if [ ! -f /etc/slurm/slurm.conf ]; then
  cat > /etc/slurm/slurm.conf <<CONF
ClusterName=lingdiag
SlurmctldHost=${host}(127.0.0.1)
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/spool/slurmd
StateSaveLocation=/var/spool/slurmctld
SlurmUser=root
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
MpiDefault=none
NodeName=${host} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP
CONF
fi
chown munge:munge /run/munge
[ -f /etc/munge/munge.key ] || mungekey --create
pgrep -x munged >/dev/null || munged --force
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 30); do
  sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)' && exit 0
  sleep 1
done
echo "slurm did not come up; see /var/log/slurm/" >&2
exit 1
