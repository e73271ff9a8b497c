# A one-machine Slurm cluster for the tests, started the way an admin
# starts one: munged with a key of its own, slurmctld and slurmd on
# private ports, every file under one directory.  Needs root and
# Debian's slurmctld, slurmd, slurm-client and munge (mk/deps.sh check).
#
#   slurm_up CPUS     sets SLURM_DIR and exports SLURM_CONF
#   slurm_down        stops the daemons, removes the directory

# Wait until process PID is gone (a zombie counts: PID 1 may be slow to
# reap it).
slurm_gone() {
	local i st
	for i in $(seq 100); do
		[ -e "/proc/$1" ] || return 0
		st=$(awk '{ print $3 }' "/proc/$1/stat" 2> /dev/null || echo Z)
		[ "$st" = Z ] && return 0
		sleep 0.05
	done
	return 1
}

slurm_up() {
	local cpus=${1:-4}
	# munged refuses a socket whose directories it cannot traverse.
	SLURM_DIR=$(mktemp -d /tmp/tfkit-slurm.XXXXXX)
	chmod 755 "$SLURM_DIR"
	local d=$SLURM_DIR m=$SLURM_DIR/munge
	mkdir -p "$m" "$d/state" "$d/spool" "$d/log"
	chown munge: "$m"
	chmod 755 "$m"
	head -c 1024 /dev/urandom > "$m/key"
	chown munge: "$m/key"
	chmod 400 "$m/key"
	runuser -u munge -- /usr/sbin/munged --key-file="$m/key" \
		--socket="$m/socket" --pid-file="$m/pid" --log-file="$m/log" \
		--seed-file="$m/seed" || return 1
	local ctl node
	read -r ctl node < <(free_ports 2 | paste -sd ' ')
	cat > "$d/slurm.conf" <<EOF
ClusterName=tfkit
SlurmctldHost=localhost
SlurmctldPort=$ctl
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$m/socket
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
SchedulerParameters=bf_interval=1
ReturnToService=2
SlurmdParameters=config_overrides
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd-%n.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd-%n.log
NodeName=localhost NodeAddr=127.0.0.1 Port=$node CPUs=$cpus RealMemory=1000
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:8
EOF
	export SLURM_CONF=$d/slurm.conf
	slurmctld -i || return 1
	slurmd -N localhost || return 1
	local i
	for i in $(seq 200); do
		[ "$(sinfo -h -t idle -o %D 2> /dev/null)" = 1 ] && return 0
		sleep 0.05
	done
	echo "slurm did not come up:"
	cat "$d"/log/*.log
	return 1
}

slurm_down() {
	[ -n "${SLURM_DIR:-}" ] || return 0
	local f p
	for f in "$SLURM_DIR"/slurmd-localhost.pid "$SLURM_DIR"/slurmctld.pid \
		"$SLURM_DIR"/munge/pid; do
		[ -e "$f" ] || continue
		p=$(cat "$f")
		kill "$p" 2> /dev/null || true
		slurm_gone "$p" || kill -9 "$p" 2> /dev/null || true
	done
	rm -rf "$SLURM_DIR"
	SLURM_DIR=
}
