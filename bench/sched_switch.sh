#!/usr/bin/env bash
# What topdown costs the scheduler, side by side in one run.
#
# `perf bench sched pipe` pinned to one CPU makes two processes switch as
# fast as they can. Its throughput is measured with nothing attached, under
# `perf stat -a` counting the same software events, under topdown filtering
# for another process (the non-target path), under topdown --system-wide
# with 4 counters, and under a minimal program that only reads the same 4
# counters per switch, and under a program that does nothing (the floor of
# what bpf_stats can report: its own two clock reads per run). The target
# path has its own anchor: the benchmark counted per task by `perf stat -e
# EVENTS -- perf bench ...` (the kernel's own per-task counting, inherited
# by the benchmark's child), against `topdown collect --process perf
# --events EVENTS` following the benchmark (both of its processes are
# named perf). With
# kernel.bpf_stats_enabled the kernel times each BPF program: the run
# time of a configuration's programs on sched_switch and sched_wakeup*,
# over its sched_switch program's run count, is its cost per switch.
# Those timings cost every program run two clock reads that neither perf
# nor topdown pays in use, so the throughput is measured with them off,
# and the cost per switch in a second, shorter run with them on.
# minimal-reads reads the counters as topdown does (the count alone where
# the kernel never multiplexes the event); minimal-reads-timed reads each
# with its enabled and running times, as bpf_perf_event_read_value does.
#
# usage: sudo [ALSO="LABEL=DIR..."] bench/sched_switch.sh [BUILD_DIR] [ROUNDS] [LOOPS]
# Prints a Markdown table of medians over ROUNDS interleaved rounds.
# ALSO: other builds (say, the commit before a change), each a directory
# holding a topdown binary; their target, filter and system-wide rows
# (topdown-target-LABEL ...) are measured in the same interleaved rounds.
# Each round measures every configuration once, in a random order.
# SAMPLES=FILE keeps every round's figures (name, ops/s, ns per switch),
# each round after a line "round N".
# ONLY=REGEX measures only the configurations whose names match (an
# extended regex over the whole name, e.g. 'topdown-system-wide.*|minimal-reads'),
# and NS_ONLY=1 skips the throughput runs: a quick comparison of builds'
# BPF cost per switch, a few seconds a configuration.
# After the table: the issue's goals and each ALSO build against BUILD_DIR,
# as ratios paired within each round.
set -euo pipefail
out=${1:-build}
rounds=${2:-5}
loops=${3:-200000}
events=task-clock,context-switches,cpu-migrations,page-faults
db=$(mktemp -d)/bench.db
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work" "$(dirname "$db")"; sysctl -qw kernel.bpf_stats_enabled=0' EXIT

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF and perf)" >&2; exit 1; }
command -v perf >/dev/null || { echo "bench: needs perf (make deps installs linux-perf)" >&2; exit 1; }
command -v jq >/dev/null || { echo "bench: needs jq (apt-get install jq)" >&2; exit 1; }
sysctl -qw kernel.bpf_stats_enabled=0

# An idle process for the filter path: topdown follows it, never the benchmark.
cp "$(command -v sleep)" "$work/td-bench-idle"
"$work/td-bench-idle" 100000 &
# And one named perf, so that `collect --process perf` has a process to
# start with; it follows the benchmark's processes as they exec.
cp "$(command -v sleep)" "$work/perf"
"$work/perf" 100000 &

pipe_ops() { # [PREFIX...]: ops/sec of one pinned run, under PREFIX
	pipe_run "$loops" "$@"
}

pipe_run() { # LOOPS [PREFIX...]
	local n=$1
	shift
	taskset -c 0 "$@" perf bench sched pipe -l "$n" 2>/dev/null | awk '/ops\/sec/ {print $1}'
}

# PID's BPF cost in ns per sched_switch, from bpf_stats: the run time of
# its programs on the scheduler's tracepoints (named *switch*, *wakeup*)
# over the switch program's runs. Read from PID's own program fds, so that
# another user's topdown loaded meanwhile is not counted.
prog_cost() {
	local fd id name runs time total=0 switches=0
	for fd in /proc/"$1"/fdinfo/*; do
		id=$(awk '$1 == "prog_id:" {print $2}' "$fd" 2>/dev/null)
		[ -n "$id" ] || continue
		name=$(bpftool -j prog show id "$id" 2>/dev/null | jq -r .name)
		case $name in *switch*|*wakeup*) ;; *) continue ;; esac
		read -r time runs < <(awk '$1 == "run_time_ns:" {t = $2} $1 == "run_cnt:" {c = $2} END {print t + 0, c + 0}' "$fd")
		total=$((total + time))
		case $name in *switch*) switches=$((switches + runs)) ;; esac
	done
	awk -v t="$total" -v c="$switches" 'BEGIN { if (c > 0) printf "%.1f", t / c; else print "n/a" }'
}

wait_for_prog() { # NAME PID: until PID has attached a BPF program (a link fd)
	local fd
	for _ in $(seq 400); do
		for fd in /proc/"$2"/fd/*; do
			case $(readlink "$fd" 2>/dev/null) in *bpf[-_]link*) return ;; esac
		done
		kill -0 "$2" 2>/dev/null || break
		sleep 0.05
	done
	echo "bench: $1 did not load:" >&2; cat "$work/cmd.err" >&2; exit 1
}

# measure NAME PROG -- COMMAND...: throughput while COMMAND runs, and its BPF cost
measure() {
	local name=$1 prog=$2 pid ops cost=n/a
	shift 3
	"$@" >/dev/null 2>"$work/cmd.err" &
	pid=$!
	if [ "$prog" != - ]; then wait_for_prog "$prog" $pid; else sleep 0.5; fi
	ops=n/a
	[ -n "${NS_ONLY:-}" ] || ops=$(pipe_ops)
	if [ "$prog" != - ]; then
		sysctl -qw kernel.bpf_stats_enabled=1
		pipe_run $((loops / 4)) >/dev/null
		cost=$(prog_cost $pid)
		sysctl -qw kernel.bpf_stats_enabled=0
	fi
	# SIGTERM: background jobs of a script ignore SIGINT. topdown stores its run
	# on SIGTERM; perf's child sleep goes with it.
	pkill -TERM -P $pid 2>/dev/null || true
	kill -TERM $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
	echo "$name $ops $cost" >>"$work/samples"
}

# The configurations, each "NAME PATH BINARY" for topdown's ("PATH -"
# for the others). Each round measures them all in a new random order: in
# a fixed order, a configuration always measured right after another
# (say, the target path after perf's per-task counting) carries whatever
# that position costs, and the paired ratios would not cancel it.
configs=("none - -" "perf-stat - -" "perf-stat-task - -")
for build in "=$out" ${ALSO:-}; do
	label=${build%%=*} bin=${build#*=}/topdown
	for path in target filter system-wide; do
		configs+=("topdown-$path${label:+-$label} $path $bin")
	done
done
configs+=("minimal-reads - -" "minimal-reads-timed - -" "empty-program - -")
if [ -n "${ONLY:-}" ]; then
	mapfile -t configs < <(printf '%s\n' "${configs[@]}" | grep -E "^(${ONLY}) " || true)
	[ ${#configs[@]} -gt 0 ] || { echo "bench: ONLY='$ONLY' matches no configuration" >&2; exit 2; }
fi

# run_config NAME PATH BINARY: one measurement of a configuration, into the samples
run_config() {
	local name=$1 path=$2 bin=$3
	case $name in
	none) echo "none $(pipe_ops) n/a" >>"$work/samples" ;;
	perf-stat) measure perf-stat - -- perf stat -a -e "$events" -- sleep 3600 ;;
	perf-stat-task) echo "perf-stat-task $(pipe_ops perf stat -e "$events" --) n/a" >>"$work/samples" ;;
	minimal-reads) measure minimal-reads minimal_switch -- "$out/td-minimal-reads" "$events" ;;
	minimal-reads-timed) measure minimal-reads-timed minimal_switch -- "$out/td-minimal-reads" --timed "$events" ;;
	empty-program) measure empty-program empty_switch -- "$out/td-minimal-reads" --empty ;;
	*)
		case $path in
		target) set -- collect --process perf --events "$events" ;;
		filter) set -- collect --process td-bench-idle ;;
		system-wide) set -- collect --system-wide --events "$events" ;;
		esac
		# a database per configuration: builds of different schemas refuse each other's
		measure "$name" switch_btf -- "$bin" "$@" --duration 1h --db "${db%.db}-$name.db" ;;
	esac
}

for round in $(seq "$rounds"); do
	echo "round $round" >>"$work/samples"
	while read -r config <&3; do # not stdin: the commands measured may read it
		# shellcheck disable=SC2086 # the three words of a configuration
		run_config $config
	done 3< <(printf '%s\n' "${configs[@]}" | shuf)
	echo "round $round/$rounds done" >&2
done

median() { sort -g | awk '{v[NR] = $1} END { if (NR == 0) print "n/a"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

base=$(awk '$1 == "none" {print $2}' "$work/samples" | median)
minimal=$(awk '$1 == "minimal-reads" {print $3}' "$work/samples" | median)
echo "| configuration | pipe ops/s (median) | vs none | BPF ns per sched_switch (median) | vs minimal reads |"
echo "| --- | ---: | ---: | ---: | ---: |"
names="none perf-stat perf-stat-task topdown-target topdown-filter topdown-system-wide"
for build in ${ALSO:-}; do
	names="$names topdown-target-${build%%=*} topdown-filter-${build%%=*} topdown-system-wide-${build%%=*}"
done
for name in $names minimal-reads minimal-reads-timed empty-program; do
	grep -q "^$name " "$work/samples" || continue # left out by ONLY
	ops=$(awk -v n="$name" '$1 == n && $2 != "n/a" {print $2}' "$work/samples" | median)
	cost=$(awk -v n="$name" '$1 == n && $3 != "n/a" {print $3}' "$work/samples" | median)
	ratio=n/a vs_none=n/a
	[ "$cost" != n/a ] && [ "$minimal" != n/a ] && ratio=$(awk -v a="$cost" -v b="$minimal" 'BEGIN {printf "%.2fx", a / b}')
	[ "$ops" != n/a ] && [ "$base" != n/a ] && vs_none=$(awk -v a="$ops" -v b="$base" 'BEGIN {printf "%.2f", a / b}')
	echo "| $name | $ops | $vs_none | $cost | $ratio |"
done

# paired A B FIELD [diff]: the ratio A/B of FIELD (2: ops/s, 3: ns per
# switch) within each round, or with diff the difference A-B, as "median
# (min-max)". On a loaded host the medians of the table above drift
# between configurations measured seconds apart; a ratio within one round
# cancels much of that drift.
paired() {
	awk -v a="$1" -v b="$2" -v f="$3" -v diff="${4:-}" '
		$1 == "round" { round++ }
		$1 == a && $f != "n/a" { va[round] = $f }
		$1 == b && $f != "n/a" { vb[round] = $f }
		END { for (r in va) if (r in vb && vb[r] > 0) print diff ? va[r] - vb[r] : va[r] / vb[r] }' "$work/samples" |
		sort -g | awk '{ v[NR] = $1 } END {
			if (NR == 0) { print "n/a"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.3f (%.3f-%.3f)\n", m, v[1], v[NR] }'
}

echo
echo "Paired within each round, median (min-max) over the rounds:"
echo
echo "| ratio | value | goal |"
echo "| --- | ---: | --- |"
echo "| target path ops/s / perf-stat-task ops/s | $(paired topdown-target perf-stat-task 2) | >= 1.0 |"
echo "| minimal-reads ops/s / perf-stat-task ops/s | $(paired minimal-reads perf-stat-task 2) | the target path's ceiling while it reads counters per switch |"
echo "| system-wide ns / minimal-reads ns | $(paired topdown-system-wide minimal-reads 3) | <= 1.10 |"
echo "| filter ns - empty-program ns | $(paired topdown-filter empty-program 3 diff) | <= 30 |"
for build in ${ALSO:-}; do
	label=${build%%=*}
	for path in target filter system-wide; do
		echo "| $path-$label / $path: ns, ops/s | $(paired "topdown-$path-$label" "topdown-$path" 3), $(paired "topdown-$path-$label" "topdown-$path" 2) | |"
	done
done
[ -n "${SAMPLES:-}" ] && cp "$work/samples" "$SAMPLES"
echo
echo "$rounds rounds, perf bench sched pipe -l $loops pinned to CPU 0, events $events; $(uname -r), $(nproc) CPUs"
