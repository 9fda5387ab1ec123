#!/usr/bin/env bash
# Export of one long run: wall time, CPU time and peak memory (RSS) of
# `topdown export` as JSON and as CSV, and of the import that stores the
# run, for the build under test and, with OLD=DIR, another build measured
# in the same rounds, side by side.
#
# The run comes from a generated `perf stat -x, -I 100` file of INTERVALS
# intervals (seven Zen 4 counts each, the events of tests/data/import/
# zen4-l1.csv) imported with --cpu-model zen4: INTERVALS intervals of one
# thread, 15 metric rows each. Each round imports the file once per build
# (into a store of its own) and exports the run of the first build's
# store with each build; the exports of every build must be the same
# bytes, or the script stops. The table shows the median of ROUNDS rounds
# with the lowest and highest in parentheses. On a shared host wall time
# follows the load; CPU time (user + system) does less.
#
# BENCH_PG=1: the same exports from a private PostgreSQL server
# (bench/pg_private.sh) too, rows "pg-export-json" and "pg-export-csv";
# the first build imports the file into it once ("pg-import").
#
# usage: bench/bench_export.sh [BUILD_DIR] [INTERVALS] [ROUNDS]
#        OLD=/tmp/old/build bench/bench_export.sh build 100000 3
# needs: BUILD_DIR/topdown (and OLD/topdown), GNU time (/usr/bin/time);
# for 100,000 intervals about 1 GB of scratch space in $TMPDIR per build,
# and about 15 minutes on a busy host (most of it the old build's JSON).
set -euo pipefail
out=${1:-build}
intervals=${2:-100000}
rounds=${3:-3}
names=(new)
dirs=("$out")
if [ -n "${OLD:-}" ]; then
	names+=(old)
	dirs+=("$OLD")
fi
for dir in "${dirs[@]}"; do
	[ -x "$dir/topdown" ] || { echo "bench: $dir/topdown is missing; run make" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time (GNU time) is missing" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/td-bench-export-XXXXXX")
. bench/pg_private.sh
trap 'pg_private_stop; rm -rf "$work"' EXIT
steps=(import export-json export-csv)
pg=()
if [ -n "${BENCH_PG:-}" ]; then
	chmod 711 "$work" # the server, run as postgres when we are root, must reach its directory
	pg_private_start "$work/pg"
	pg=(--backend postgresql --dsn "$pg_dsn")
	steps+=(pg-import pg-export-json pg-export-csv)
fi

awk -v n="$intervals" 'BEGIN {
	for (i = 1; i <= n; i++) {
		t = sprintf("%.9f", i * 0.1)
		c = 100000000 + (i % 97) * 100000
		printf "%s,%d,,cycles,100000000,100.00,,\n", t, c
		printf "%s,%d,,de_no_dispatch_per_slot.no_ops_from_frontend,100000000,100.00,,\n", t, c * 1.2
		printf "%s,%d,,cpu/event=0x1a0,umask=0x1e/,100000000,100.00,,\n", t, c * 1.8
		printf "%s,%d,,de_no_dispatch_per_slot.smt_contention,100000000,100.00,,\n", t, c * 0.3
		printf "%s,%d,,de_src_op_disp.all,100000000,100.00,,\n", t, c * 2.6
		printf "%s,%d,,ex_ret_ops,100000000,100.00,,\n", t, c * 2.3
		printf "%s,100.00,msec,task-clock,100000000,100.00,1.000,CPUs utilized\n", t
	}
}' >"$work/long.csv"
echo "generated $intervals intervals: $(du -h "$work/long.csv" | cut -f1)" >&2

# measure NAME STEP COMMAND...: one line "NAME STEP wall cpu rss_mb" into results.
measure() {
	local name=$1 step=$2
	shift 2
	/usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null
	awk -v name="$name" -v step="$step" '{ printf "%s %s %.2f %.2f %.0f\n", name, step, $1, $2 + $3, $4 / 1024 }' \
		"$work/time" >>"$work/results"
}

# export_all PREFIX STORE-FLAGS...: each build exports the run as JSON and CSV; the same bytes.
export_all() {
	local prefix=$1
	shift
	for i in "${!names[@]}"; do
		for format in json csv; do
			measure "${names[$i]}" "${prefix}export-$format" "${dirs[$i]}/topdown" export --format "$format" \
				"$@" --output "$work/${names[$i]}.out.$format"
			if [ "$i" -gt 0 ] && ! cmp -s "$work/${names[0]}.out.$format" "$work/${names[$i]}.out.$format"; then
				echo "bench: ${names[$i]} and ${names[0]} export different $format" >&2
				exit 1
			fi
		done
	done
	rm -f "$work"/*.out.*
}

[ ${#pg[@]} -eq 0 ] || measure "${names[0]}" pg-import "${dirs[0]}/topdown" import "$work/long.csv" \
	--cpu-model zen4 "${pg[@]}"
for ((round = 1; round <= rounds; round++)); do
	for i in "${!names[@]}"; do
		rm -f "$work/${names[$i]}.db"
		measure "${names[$i]}" import "${dirs[$i]}/topdown" import "$work/long.csv" --cpu-model zen4 \
			--db "$work/${names[$i]}.db"
	done
	export_all "" --db "$work/${names[0]}.db"
	[ ${#pg[@]} -eq 0 ] || export_all pg- "${pg[@]}"
	echo "round $round of $rounds done" >&2
done

# median (lowest-highest) of column COL for a name and step
summary() {
	awk -v name="$1" -v step="$2" '$1 == name && $2 == step { print $'"$3"' }' "$work/results" | sort -g |
		awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2;
			printf "%s (%s-%s)", m, v[1], v[NR] }'
}

echo
echo "$intervals intervals, $rounds rounds: median (lowest-highest)"
printf "%-6s %-15s %-24s %-24s %s\n" BUILD STEP "WALL S" "CPU S" "PEAK RSS MB"
for name in "${names[@]}"; do
	for step in "${steps[@]}"; do
		grep -q "^$name $step " "$work/results" || continue
		printf "%-6s %-15s %-24s %-24s %s\n" "$name" "$step" "$(summary "$name" "$step" 3)" \
			"$(summary "$name" "$step" 4)" "$(summary "$name" "$step" 5)"
	done
done
[ "${#names[@]}" -gt 1 ] && echo "the exports of both builds were the same bytes in every round"
exit 0
