#!/usr/bin/env bash
# Crashes: collect and agent killed with SIGKILL at a random moment, RUNS
# times in all (half each), into a store that already holds runs. After
# each kill: every run in the store (and the agent's spool) is whole
# (whole.sql, integrity_check), the runs stored before are all there,
# and the store still opens for reading and for writing (list, import).
# Half the kills come at a moment spread over the whole life of the
# command, from its start to past the end of its counting, when the run
# is written. As a write is a small part of that life, the other half
# come inside the writes: the injector (inject.c, TD_FAULT_KILL) sends
# SIGKILL at a chosen call to pwrite, fsync or fdatasync, picked at
# random among the calls the command makes without faults.
#
# usage: tests/faults/crash.sh BUILD_DIR [RUNS] [SEED]
set -u
out=${1:-build}
total=${2:-20}
seed=${3:-$((RANDOM * 32768 + RANDOM))}
source "$(dirname "$0")/lib.sh"
faults_require
faults_require_root
echo "seed $seed, $total kills"

template="$scratch/template.db"
"$topdown" import "$faults_dir/../data/import/skx-l1.csv" --cpu-model skx --db "$template" >/dev/null ||
	{ echo "cannot import the template's run"; exit 1; }
sqlite3 "$template" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
sqlite3 "$template" 'SELECT id FROM runs' | sort >"$scratch/template.ids"

# Short-lived threads make runs of a few hundred thread rows: their
# write takes long enough to be hit.
workload_name="tdcrash$$"
ln -s "$(realpath "$workload")" "$scratch/$workload_name"
"$scratch/$workload_name" --duration-ms 3600000 --io-threads 2 --short-threads 100000 \
	--short-work-us 500 >/dev/null &
workload_pid=$!
started+=("$workload_pid")
sleep 0.2

db="$scratch/store/db.db"
spool="$scratch/store/spool.db"
write_points=posix/io/rw/pwrite,posix/io/rw/pwritev,posix/io/sync/fsync,posix/io/sync/fdatasync

# In the background, $pid (topdown itself: env execs it, so the kill
# reaches it); under the injector, which kills it when TD_FAULT_NTH is set.
injector=(env LD_PRELOAD="$scratch/inject.so /usr/lib/fiu/fiu_posix_preload.so"
	TD_FAULT_POINTS=$write_points TD_FAULT_LOG="$scratch/fault.log")
start_collect() {
	"${injector[@]}" "$topdown" collect --pid "$workload_pid" --events task-clock,page-faults \
		--duration 600ms --interval 200ms --db "$db" >/dev/null 2>"$scratch/err" &
	pid=$!
}
start_agent() {
	"${injector[@]}" "$topdown" agent --process "$workload_name" --every 250ms --windows 4 \
		--events task-clock --db "$db" --spool "$spool" >/dev/null 2>"$scratch/err" &
	pid=$!
}

# How many write calls each makes, to pick the one to die at.
declare -A calls
for command in collect agent; do
	rm -rf "$scratch/store" "$scratch/fault.log"
	mkdir -p "$scratch/store"
	cp "$template" "$db"
	start_$command
	wait $pid || { echo "$command fails without faults: $(cat "$scratch/err")"; exit 1; }
	calls[$command]=$(sed -n 's/^calls //p' "$scratch/fault.log" | tail -1)
	echo "$command: ${calls[$command]} write calls without faults"
done

RANDOM=$((seed % 32768))
killed=0 finished=0
for ((i = 0; i < total; i++)); do
	rm -rf "$scratch/store"
	mkdir -p "$scratch/store"
	cp "$template" "$db"
	command=collect
	[ $((i % 2)) = 0 ] || command=agent
	if [ $((i / 2 % 2)) = 0 ]; then
		# 0 to 1.3 s: the commands start in about 0.1 s and write their
		# (last) run at 0.6 to 1 s
		delay_ms=$((RANDOM % 1300))
		when="after ${delay_ms}ms"
		start_$command
		sleep "$(printf '%d.%03d' $((delay_ms / 1000)) $((delay_ms % 1000)))"
		kill -KILL $pid 2>/dev/null
	else
		call=$((1 + (RANDOM * 32768 + RANDOM) % ${calls[$command]}))
		when="at write call $call of ${calls[$command]}"
		TD_FAULT_NTH=$call TD_FAULT_KILL=1 start_$command
	fi
	{ wait $pid; } 2>/dev/null # no "Killed" from the shell
	rc=$?
	if [ $rc = 137 ]; then
		killed=$((killed + 1)) verdict=killed
	elif [ $rc = 0 ]; then
		finished=$((finished + 1)) verdict=finished
	else
		problem "$command exited $rc before the kill: $(tr '\n' '|' <"$scratch/err")"
		verdict=problem
	fi
	before=$problems
	check_store "$command" "$db" "$scratch/template.ids"
	check_store "$command-spool" "$spool"
	# the store opens afterwards, for reading and for a new run
	"$topdown" list --db "$db" >/dev/null 2>"$scratch/err" ||
		problem "$command: list fails after the kill: $(head -1 "$scratch/err")"
	"$topdown" import "$faults_dir/../data/import/skx-l1.csv" --cpu-model skx --db "$db" \
		>/dev/null 2>"$scratch/err" || problem "$command: import fails after the kill: $(head -1 "$scratch/err")"
	check_store "$command, then import" "$db" "$scratch/template.ids"
	[ $problems -gt $before ] && verdict=problem &&
		echo "  kill $i: $command $when (seed $seed)"
	printf '%s|kill|%s|%s|%s|\n' "$command" "$when" "$rc" "$verdict" >>"$tally"
done

echo
printf '%-8s %6s %7s %9s %9s\n' command runs killed finished problems
awk -F'|' '{ n[$1]++; v[$1 "|" $5]++ }
	END { for (c in n) printf "%-8s %6d %7d %9d %9d\n", c, n[c], v[c "|killed"], v[c "|finished"], v[c "|problem"] }' \
	"$tally" | sort
echo "$total kills ($killed during the command, $finished after it ended), $problems problems (seed $seed)"
[ $problems -eq 0 ]
