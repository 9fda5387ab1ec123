#!/usr/bin/env bash
# How long a command takes to start and answer, for two builds side by
# side: `topdown list` (the newest 20 runs) and `topdown list --help` (the
# option table's usage, no store) on a SQLite store of RUNS synthetic runs
# (td-gen-runs), OLD's binary and NEW's taking turns round after round so
# that drift on the host hits both alike. Each command runs once to warm
# the caches, then ROUNDS times per binary; the table shows the median
# wall time of the whole process (exec, parse, open, query, print) with
# the fastest and slowest round in parentheses, and the median CPU time
# (user + system, which a busy host disturbs less than the wall clock).
#
# OLD is a topdown binary from before the change, e.g.
#   git worktree add /tmp/old fed48a8 && make -C /tmp/old -j2 all
#   bench/bench_cli_start.sh /tmp/old/build/topdown
#
# usage: bench/bench_cli_start.sh OLD_TOPDOWN [NEW_BUILD_DIR] [RUNS] [ROUNDS]
# needs: NEW_BUILD_DIR/topdown and NEW_BUILD_DIR/td-gen-runs (make bench-tools)
set -euo pipefail
old=${1:?usage: bench/bench_cli_start.sh OLD_TOPDOWN [NEW_BUILD_DIR] [RUNS] [ROUNDS]}
out=${2:-build}
runs=${3:-1000}
rounds=${4:-50}
new=$out/topdown
gen=$out/td-gen-runs

for tool in "$old" "$new" "$gen"; do
	[ -x "$tool" ] || { echo "bench: $tool is missing (make bench-tools builds td-gen-runs)" >&2; exit 1; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=$work TOPDOWN_DB_PATH= TOPDOWN_BACKEND= TOPDOWN_DSN=
db=$work/runs.db
"$gen" --runs "$runs" --threads 8 --metrics 10 --seed 42 --db "$db" >/dev/null

# "WALL CPU" of one run of "$@" in microseconds (CPU: user + system of
# the child, from bash's times); its output is dropped.
micros() {
	local start before after
	times >"$work/times" # in this shell: a subshell would count its own children
	before=$(children_cpu "$work/times")
	start=$EPOCHREALTIME
	"$@" >/dev/null 2>&1 || { echo "bench: '$*' failed" >&2; exit 1; }
	times >"$work/times"
	after=$(children_cpu "$work/times")
	awk -v s="$start" -v e="$EPOCHREALTIME" -v b="$before" -v a="$after" \
		'BEGIN { printf "%d %d\n", (e - s) * 1e6, (a - b) * 1e6 }'
}

# Seconds of CPU the shell's children had used, from the output of times in file $1.
children_cpu() {
	awk 'NR == 2 { gsub(/[ms]/, " "); print $1 * 60 + $2 + $3 * 60 + $4 }' "$1"
}

# "median (min-max)" in ms of column 1 of file $1 (wall), then column 2's median (CPU).
summary() {
	awk '{ print $1 }' "$1" | sort -n | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.2f (%.2f-%.2f)", m / 1000, v[1] / 1000, v[NR] / 1000 }'
	awk '{ print $2 }' "$1" | sort -n | awk '{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "  cpu %.2f", m / 1000 }'
}

printf '%-22s  %-36s  %-36s\n' "command ($runs runs)" "old: wall ms median (min-max), cpu" \
	"new: wall ms median (min-max), cpu"
for label in "list" "list --help"; do
	case $label in
	list) args=(list --db "$db") ;;
	*) args=(list --help) ;;
	esac
	micros "$old" "${args[@]}" >/dev/null
	micros "$new" "${args[@]}" >/dev/null
	: >"$work/old.times"
	: >"$work/new.times"
	for ((i = 0; i < rounds; i++)); do
		micros "$old" "${args[@]}" >>"$work/old.times"
		micros "$new" "${args[@]}" >>"$work/new.times"
	done
	printf '%-22s  %-36s  %-36s\n' "topdown $label" "$(summary "$work/old.times")" "$(summary "$work/new.times")"
done
