#!/usr/bin/env bash
# Out of memory, SQLite's way: one allocation fails (malloc, calloc or
# realloc), RUNS times per command at allocations spread evenly over all
# those the command makes without faults (from an offset the seed picks);
# for import (the model's definitions, the parser, the store), export
# and, as root, collect (libbpf, the collector).
# Each run succeeds whole, or exits non-zero with one line that says
# memory ran out (not a misleading cause, such as a broken definition
# file or a damaged store), and the store is whole.
#
# usage: tests/faults/oom.sh BUILD_DIR [RUNS] [SEED]
set -u
out=${1:-build}
per=${2:-20}
seed=${3:-$((RANDOM * 32768 + RANDOM))}
source "$(dirname "$0")/lib.sh"
faults_require
echo "seed $seed, $per runs per command"
points=libc/mm/malloc,libc/mm/calloc,libc/mm/realloc

template="$scratch/template.db"
"$topdown" import "$faults_dir/../data/import/zen4-l1.csv" --cpu-model zen4 --db "$template" >/dev/null ||
	{ echo "cannot import the template's run"; exit 1; }
sqlite3 "$template" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
sqlite3 "$template" 'SELECT id FROM runs' | sort >"$scratch/template.ids"
db="$scratch/store/db.db"

run_import() {
	faulted "$points" "$1" "$topdown" import "$faults_dir/../data/import/skx-l1.csv" --cpu-model skx --db "$db"
}
run_collect() {
	faulted "$points" "$1" "$topdown" collect --pid "$workload_pid" --events task-clock \
		--duration 200ms --db "$db"
}
run_export() {
	faulted "$points" "$1" "$topdown" export --format json --output "$scratch/store/out.json" --db "$db"
}

commands=${OOM_COMMANDS:-import export}
if [ "$(id -u)" -eq 0 ]; then # collect: the BPF object, the collector
	commands="$commands collect"
	"$workload" --duration-ms 3600000 >/dev/null &
	workload_pid=$!
	started+=("$workload_pid")
fi
runs=0
for command in $commands; do
	rm -rf "$scratch/store"; mkdir -p "$scratch/store"; cp "$template" "$db"
	run_$command none
	[ $rc -eq 0 ] || { echo "$command fails without faults: $(cat "$scratch/err")"; exit 1; }
	total=$(sed -n 's/^calls //p' "$scratch/fault.log" | tail -1)
	step=$((total / per > 0 ? total / per : 1))
	for ((n = 1 + seed % step; n <= total; n += step)); do
		rm -rf "$scratch/store"; mkdir -p "$scratch/store"; cp "$template" "$db"
		run_$command "nth=$n"
		judge_exit "$command, allocation $n of $total"; verdict=$?
		# libbpf turns a failed allocation while it reads the kernel's
		# BTF into ESRCH, "failed to find valid kernel BTF": the
		# collector cannot tell that from a kernel without BTF
		if [ $verdict = 1 ] && grep -q '^libbpf: failed to find valid kernel BTF' "$scratch/err"; then
			verdict=3
		elif [ $verdict = 1 ] && { ! grep -v '^libbpf: ' "$scratch/err" | grep -q 'memory' ||
			grep -qE 'kernel with BTF|definition file|malformed|backup|UTF-8' "$scratch/err"; }; then
			problem "$command, allocation $n of $total failed, yet the message blames something else: $(cat "$scratch/err")"
			verdict=2
		fi
		check_store "$command, allocation $n" "$db" "$scratch/template.ids"
		case $verdict in 0) v=ok ;; 1) v=refused ;; 3) v=libbpf ;; *) v=problem ;; esac
		record "$command" malloc "nth=$n/$total" "$v"
		runs=$((runs + 1))
	done
done

summary
echo "$runs runs with one allocation failing, $problems problems (seed $seed)"
[ $problems -eq 0 ]
