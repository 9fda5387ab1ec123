# Shared by the fault tests (tests/faults/io.sh, crash.sh): scratch
# space, the injector, the checks every run ends with, and the tally.
# Sourced with $out (the build directory) set.
#
# A run under a fault passes when it either succeeds with its result
# whole, or exits non-zero with one line on stderr and leaves the store
# as it was; either way every run in the store is whole (whole.sql) and
# nothing stored before the run is gone.

faults_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
topdown="$out/topdown"
workload="$out/td-workload"
scratch=$(mktemp -d)
tally="$scratch/tally"   # one line per run: command|fault|mode|rc|verdict|first stderr line
problems=0
: >"$tally"

# pids this script started in the background, stopped at exit
started=()
faults_cleanup() {
	for p in "${started[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "${FAULT_TALLY:-}" ] && cp "$tally" "$FAULT_TALLY"
	rm -rf "$scratch"
}
trap faults_cleanup EXIT

skip() { echo "$1"; exit 77; }

faults_require() {
	[ -x "$topdown" ] || skip "no $topdown (make all builds it)"
	[ -r /usr/lib/fiu/fiu_posix_preload.so ] && [ -r /usr/include/fiu-control.h ] ||
		skip "libfiu is not installed (make deps installs fiu-utils and libfiu-dev)"
	command -v sqlite3 >/dev/null || skip "no sqlite3 (make deps installs it)"
	${CC:-cc} -shared -fPIC -O1 -Wall -Wextra -Werror -o "$scratch/inject.so" \
		"$faults_dir/inject.c" -lfiu -ldl || { echo "cannot build tests/faults/inject.c"; exit 1; }
}

# The collector needs root for BPF and CPU-wide counters.
faults_require_root() {
	[ "$(id -u)" -eq 0 ] || skip "collect and agent need root (BPF); run as root"
}

problem() { # message
	echo "FAULT TEST PROBLEM: $*"
	problems=$((problems + 1))
}

# Runs a command under the injector: POINTS then the mode, "nth=N",
# "nth=N+" (the Nth call and every later one) or "p=P@SEED". Sets rc, and
# leaves stdout and stderr in $scratch/out and $scratch/err. A run that
# does not end within FAULT_TIMEOUT seconds is a hang: its threads'
# stacks go to $scratch/hang.bt (with gdb), then it is killed (rc 137).
faulted() { # points mode command...
	local points=$1 mode=$2 nth="" persist="" prob="" seed="" pid ticks=0
	shift 2
	case $mode in
	nth=*+) nth=${mode#nth=}; nth=${nth%+}; persist=1 ;;
	nth=*) nth=${mode#nth=} ;;
	p=*@*) prob=${mode#p=}; seed=${prob#*@}; prob=${prob%@*} ;;
	none) ;;
	esac
	rm -f "$scratch/fault.log" "$scratch/hang.bt"
	env LD_PRELOAD="$scratch/inject.so /usr/lib/fiu/fiu_posix_preload.so" \
		TD_FAULT_POINTS="$points" TD_FAULT_NTH="$nth" TD_FAULT_PERSIST="$persist" \
		TD_FAULT_PROB="$prob" TD_FAULT_SEED="$seed" TD_FAULT_LOG="$scratch/fault.log" \
		"$@" >"$scratch/out" 2>"$scratch/err" &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		if [ $ticks -ge $((${FAULT_TIMEOUT:-60} * 20)) ]; then
			command -v gdb >/dev/null &&
				gdb -q -batch -p $pid -ex 'thread apply all bt 20' >"$scratch/hang.bt" 2>&1
			kill -KILL $pid
			break
		fi
		sleep 0.05
		ticks=$((ticks + 1))
	done
	{ wait $pid; } 2>/dev/null
	rc=$?
}

# How many calls to POINTS the command makes when none fails.
count_calls() { # points command...
	faulted "$1" none "${@:2}"
	[ $rc -eq 0 ] || { problem "the run without faults failed ($rc): $(head -3 "$scratch/err")"; echo 0; return; }
	sed -n 's/^calls //p' "$scratch/fault.log" | tail -1
}

# Did the run end as a run under a fault may? 0: succeeded, 1: refused
# with one line; else records a problem and returns 2. Agents log a line
# per window: MAX_LINES says how many stderr lines a failure may have.
# libbpf's warnings ("libbpf: ...", a few at most) may come before the
# line: the collector's message points at them.
judge_exit() { # label
	local label=$1 lines libbpf
	# libbpf's own warnings, which the collector's message refers to
	libbpf=$(grep -c '^libbpf: ' "$scratch/err")
	lines=$(($(wc -l <"$scratch/err") - libbpf))
	if [ $rc -eq 137 ]; then
		problem "$label: hung (killed after ${FAULT_TIMEOUT:-60}s)$([ -s "$scratch/hang.bt" ] &&
			printf '; its stacks: '; grep '^#' "$scratch/hang.bt" 2>/dev/null | head -12 | tr '\n' '|')"
	elif [ $rc -ge 128 ]; then
		problem "$label: crashed (signal $((rc - 128))): $(tail -3 "$scratch/err")"
	elif [ $rc -eq 0 ]; then
		return 0
	elif [ "$lines" -lt 1 ]; then
		problem "$label: exit $rc with nothing on stderr"
	elif [ "$lines" -gt "${MAX_LINES:-1}" ] || [ "$libbpf" -gt 5 ]; then
		problem "$label: exit $rc with $lines lines on stderr: $(head -5 "$scratch/err" | tr '\n' '|')"
	elif ! grep -q '[a-z]' "$scratch/err"; then
		problem "$label: exit $rc without a message"
	else
		return 1
	fi
	return 2
}

# Is every run of DB whole, and are the run ids listed in KEEP all there?
check_store() { # label db [keep-file]
	local label=$1 db=$2 keep=${3:-} found
	[ -e "$db" ] || return 0
	# Migrations are one transaction: a file has all of the schema or none.
	found=$(sqlite3 "$db" "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name IN
		('schema_migrations', 'runs', 'run_labels', 'intervals', 'threads', 'counters',
		 'metrics', 'profiles', 'profile_frames', 'profile_stacks')" 2>&1)
	case $found in
	10) ;;
	0) found=$(sqlite3 "$db" 'PRAGMA integrity_check' 2>&1)
	   [ "$found" = ok ] || problem "$label: $db without a schema fails integrity_check: $found"
	   return 0 ;;
	*) problem "$label: $db has part of the schema ($found of 10 tables)"; return 0 ;;
	esac
	if ! found=$(sqlite3 "$db" <"$faults_dir/whole.sql" 2>&1); then
		problem "$label: sqlite3 cannot read $db: $found"
	elif [ -n "$found" ]; then
		problem "$label: $(echo "$found" | head -5 | tr '\n' '|')"
	fi
	if [ -n "$keep" ] && [ -s "$keep" ]; then
		sqlite3 "$db" 'SELECT id FROM runs' 2>/dev/null | sort >"$scratch/ids"
		found=$(comm -23 "$keep" "$scratch/ids" | head -3 | tr '\n' ' ')
		[ -z "$found" ] || problem "$label: runs stored before the run are gone: $found"
	fi
}

runs_in() { # db
	[ -e "$1" ] && sqlite3 "$1" 'SELECT count(*) FROM runs' 2>/dev/null || echo 0
}

record() { # command points mode verdict
	printf '%s|%s|%s|%s|%s|%s\n' "$1" "$2" "$3" "$rc" "$4" "$(tail -1 "$scratch/err" | cut -c1-200)" >>"$tally"
}

# A table of the runs: per command, how many succeeded, were refused with
# one line, were refused with libbpf's misreading (oom.sh), or showed a
# problem; then the distinct messages of refusals.
summary() {
	echo
	printf '%-8s %6s %9s %8s %7s %9s\n' command runs succeeded refused libbpf problems
	awk -F'|' '{ n[$1]++; v[$1 "|" $5]++ }
		END { for (c in n) printf "%-8s %6d %9d %8d %7d %9d\n", c, n[c], v[c "|ok"], v[c "|refused"],
			v[c "|libbpf"], v[c "|problem"] }' "$tally" | sort
	echo
	echo "messages of the refusals (runs: message, numbers and paths elided):"
	awk -F'|' '$5 == "refused" { print $6 }' "$tally" |
		sed -E 's#/tmp/[^ '"'"']*#PATH#g; s/[0-9a-f]{8}-[0-9a-f-]{27}/ID/g; s/[0-9]+/N/g' |
		sort | uniq -c | sort -rn
}
