#!/usr/bin/env bash
# I/O and memory faults: collect, agent, import, gc and export each run
# RUNS times under libfiu, with one of the fault sets below failing
# either a chosen call (the Nth of the set, counted in a run without
# faults first; alone or with every later call, a disk that stays
# broken) or calls at random from a seed. After each run: the run
# succeeded whole or said why on one line (lib.sh judge_exit), every run
# in the store is whole (whole.sql), nothing stored before is gone, and
# what the command promises holds (a stored run listed, gc's runs gone,
# export's file equal to the one written without faults).
#
# usage: tests/faults/io.sh BUILD_DIR [RUNS] [SEED] [COMMANDS]
#   RUNS per command (default 6); SEED picks the calls (default random,
#   printed: the same seed on the same build replays the same faults);
#   COMMANDS: a subset of "import gc export collect agent".
set -u
out=${1:-build}
per=${2:-6}
seed=${3:-$((RANDOM * 32768 + RANDOM))}
commands=${4:-import gc export collect agent}
source "$(dirname "$0")/lib.sh"
faults_require
case " $commands " in *" collect "* | *" agent "*) faults_require_root ;; esac

# The fault sets: the system calls a store, a log and an output file use.
# SQLite writes with pwrite and syncs with fdatasync; stdio with write.
sets=(
	"write posix/io/rw/write,posix/io/rw/pwrite,posix/io/rw/writev,posix/io/rw/pwritev"
	"fsync posix/io/sync/fsync,posix/io/sync/fdatasync"
	"open posix/io/oc/open"
	"mmap posix/mm/mmap"
	"read posix/io/rw/read,posix/io/rw/pread"
	"malloc libc/mm/malloc,libc/mm/calloc,libc/mm/realloc"
)

echo "seed $seed, $per runs per command: $commands"

# A store with runs to keep, delete and export: the import test files.
template="$scratch/template.db"
for f in skx-l1.csv skx-l1.json zen4-l1.csv zen4-l1-percore.json neoverse-v2-l1-interval.csv; do
	model=${f%%-l1*}
	"$topdown" import "$faults_dir/../data/import/$f" --cpu-model "$model" --label src="$f" \
		--db "$template" >/dev/null || { echo "cannot import $f"; exit 1; }
done
sqlite3 "$template" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
sqlite3 "$template" 'SELECT id FROM runs' | sort >"$scratch/template.ids"
for format in json csv; do
	"$topdown" export --format $format --output "$scratch/reference.$format" --db "$template" ||
		{ echo "cannot export the template store"; exit 1; }
done
db="$scratch/store/db.db"
spool="$scratch/store/spool.db"

fresh_store() { # with_runs
	rm -rf "$scratch/store"
	mkdir -p "$scratch/store"
	[ "$1" = 1 ] && cp "$template" "$db"
	keep="$scratch/template.ids"
	[ "$1" = 1 ] || keep=/dev/null
}

new_ids() { # db: ids beyond the template's
	[ -e "$1" ] && sqlite3 "$1" 'SELECT id FROM runs' 2>/dev/null | sort | comm -23 - "$scratch/template.ids"
}

# ---- the commands: each runs one faulted command and checks its promise ----

do_import() { # points mode run
	local id
	fresh_store $(($3 % 2)) # every other run creates the store
	faulted "$1" "$2" "$topdown" import "$faults_dir/../data/import/spr-l1-percpu.csv" \
		--cpu-model spr --db "$db"
	judge_exit import; verdict=$?
	id=$(sed -n 's/^imported .* as run //p' "$scratch/out")
	case $verdict in
	0) [ -n "$id" ] && [ "$(new_ids "$db")" = "$id" ] ||
		{ problem "import: exit 0 but its run ${id:-(none printed)} is not the one new run"; verdict=2; } ;;
	1) [ -z "$(new_ids "$db")" ] || { problem "import: refused yet stored a run"; verdict=2; } ;;
	esac
}

do_collect() {
	local id
	fresh_store 1
	faulted "$1" "$2" "$topdown" collect --pid "$workload_pid" --events task-clock,page-faults \
		--duration 400ms --interval 200ms --db "$db"
	judge_exit collect; verdict=$?
	id=$(sed -n 's/^run \([^ ]*\) stored in .*/\1/p' "$scratch/out")
	# a database that does not take the run leaves it in the spool beside it
	spooled=$(sed -n 's/^run \([^ ]*\) waits in the spool .*/\1/p' "$scratch/out")
	check_store collect-spool "$db.spool"
	case $verdict in
	0) if [ -n "$spooled" ]; then
		[ "$(new_ids "$db.spool")" = "$spooled" ] && [ -z "$(new_ids "$db")" ] ||
			{ problem "collect: exit 0, its run $spooled said to wait in the spool, which does not hold it alone"; verdict=2; }
	   else
		[ -n "$id" ] && [ "$(new_ids "$db")" = "$id" ] && [ -z "$(new_ids "$db.spool")" ] ||
			{ problem "collect: exit 0 but its run ${id:-(none printed)} is not the one new run"; verdict=2; }
	   fi ;;
	1) [ -z "$(new_ids "$db")" ] && [ -z "$(new_ids "$db.spool")" ] ||
		{ problem "collect: refused yet stored a run"; verdict=2; } ;;
	esac
}

# The agent logs a line per event; it exits non-zero only when it cannot
# start. Every window's run is stored, in the database or the spool, or
# named in the log as lost.
do_agent() {
	local stored lost
	fresh_store 1
	MAX_LINES=12 faulted "$1" "$2" "$topdown" agent --process "$workload_name" --every 300ms --windows 2 \
		--events task-clock --db "$db" --spool "$spool"
	MAX_LINES=12 judge_exit agent; verdict=$?
	check_store agent-spool "$spool"
	if [ $verdict = 0 ]; then
		stored=$({ new_ids "$db"; new_ids "$spool"; } | sort -u | wc -l)
		lost=$(grep -c ' is lost' "$scratch/err")
		[ $((stored + lost)) -eq 2 ] || {
			problem "agent: 2 windows, $stored runs stored and $lost named lost: $(tr '\n' '|' <"$scratch/err")"
			verdict=2
		}
	fi
}

do_gc() {
	fresh_store 1
	faulted "$1" "$2" "$topdown" gc --older-than 1ms --batch 2 --db "$db"
	judge_exit gc; verdict=$?
	keep=/dev/null # gc deletes them
	[ $verdict = 0 ] && [ "$(runs_in "$db")" != 0 ] &&
		{ problem "gc: exit 0 with $(runs_in "$db") runs left"; verdict=2; }
}

do_export() {
	local format=json leftover
	fresh_store 1
	[ $(($3 % 2)) = 1 ] && format=csv
	faulted "$1" "$2" "$topdown" export --format $format --output "$scratch/store/out.$format" --db "$db"
	judge_exit export; verdict=$?
	leftover=$(find "$scratch/store" -name "out.$format.*" | head -1)
	[ -z "$leftover" ] || { problem "export: a temporary file is left: $leftover"; verdict=2; }
	case $verdict in
	0) cmp -s "$scratch/store/out.$format" "$scratch/reference.$format" ||
		{ problem "export: exit 0 but out.$format differs from the export without faults"; verdict=2; } ;;
	1) [ ! -e "$scratch/store/out.$format" ] ||
		{ problem "export: refused yet wrote out.$format"; verdict=2; } ;;
	esac
}

# ---- the runs ----

if [[ " $commands " == *" collect "* || " $commands " == *" agent "* ]]; then
	workload_name="tdfault$$"
	ln -s "$(realpath "$workload")" "$scratch/$workload_name"
	"$scratch/$workload_name" --duration-ms 3600000 --io-threads 2 >/dev/null &
	workload_pid=$!
	started+=("$workload_pid")
	sleep 0.2
fi

declare -A calls # "command set" -> calls without faults
runs=0
for command in $commands; do
	for ((i = 0; i < per; i++)); do
		set_line=${sets[$(((i + seed) % ${#sets[@]}))]}
		set_name=${set_line%% *} points=${set_line#* }
		key="$command $set_name"
		if [ -z "${calls[$key]:-}" ]; then
			# the same command without faults, counting the calls
			"do_$command" "$points" none "$i" >/dev/null
			calls[$key]=$(sed -n 's/^calls //p' "$scratch/fault.log" | sort -n | tail -1)
			[ "$verdict" = 0 ] || problem "$command: fails without faults: $(tr '\n' '|' <"$scratch/err")"
		fi
		n=${calls[$key]:-0}
		[ "$n" -gt 0 ] || n=1
		r=$(((seed / 7 + i * 7919) % 1000003))
		case $((i % 3)) in
		0) mode="nth=$((1 + r % n))" ;;              # one chosen call fails
		1) mode="nth=$((1 + r % n))+" ;;             # the disk stays broken from there
		2) mode="p=$(awk -v n="$n" 'BEGIN { p = 3 / n; printf "%.4f", (p > 0.5 ? 0.5 : p) }')@$((seed + i))" ;;
		esac
		before=$problems
		"do_$command" "$points" "$mode" "$i"
		check_store "$command" "$db" "$keep"
		[ $problems -gt $before ] && verdict=2 &&
			echo "  replay: TD_FAULT_POINTS=$points mode $mode (seed $seed, run $i of $command)"
		case $verdict in 0) v=ok ;; 1) v=refused ;; *) v=problem ;; esac
		record "$command" "$set_name" "$mode/$n" "$v"
		runs=$((runs + 1))
	done
done

summary
echo "$runs runs under faults, $problems problems (seed $seed)"
[ $problems -eq 0 ]
