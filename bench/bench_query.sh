#!/usr/bin/env bash
# Query and storage speed on a large store, SQLite and PostgreSQL side by
# side, from the same generated data.
#
# td-gen-runs writes RUNS runs of 50 threads with 40 tree nodes each (for
# every thread, thread name and the process: about 2,200 metric rows a run)
# into a SQLite file and, with the same seed, into a private PostgreSQL
# server (tests/pg_server.sh, stopped at the end). Each command then runs
# once to warm the caches and ROUNDS times more; the table shows the median
# wall time of the whole command (process start, connection, query, output).
# "store one run" is the median time of td_store_write_run for a run of
# 1,000 threads (about 41,000 metric rows), measured inside td-gen-runs.
#
# usage: bench/bench_query.sh [BUILD_DIR] [RUNS] [ROUNDS]
# needs: make bench-tools (build/topdown and build/td-gen-runs); about 3 GB
# of disk per 10,000 runs and backend under BUILD_DIR.
set -euo pipefail
out=${1:-build}
runs=${2:-10000}
rounds=${3:-10}
topdown=$out/topdown
gen=$out/td-gen-runs
work=$out/bench-query
keep=

for tool in "$topdown" "$gen"; do
	[ -x "$tool" ] || { echo "bench: $tool is missing; run make bench-tools" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work"
cleanup() {
	# Closing our end stops the server; it removes its directory when done.
	[ -n "$keep" ] && exec {keep}>&-
	for _ in $(seq 300); do
		[ -d "$work/pg" ] || break
		sleep 0.1
	done
	rm -rf "$work"
}
trap cleanup EXIT

# The server lives as long as our end of the pipe to its stdin stays open.
exec {keep}> >(tests/pg_server.sh "$work/pg" >"$work/pg.status")
for _ in $(seq 100); do
	grep -q . "$work/pg.status" 2>/dev/null && break
	sleep 0.1
done
read -r state dsn <"$work/pg.status"
[ "$state" = ready ] || { echo "bench: PostgreSQL: $state $dsn" >&2; exit 1; }

ms_since() {
	awk -v start="$1" -v now="$EPOCHREALTIME" 'BEGIN { printf "%.1f", (now - start) * 1000 }'
}

sqlite=(--db "$work/runs.db")
postgres=(--backend postgresql --dsn "$dsn")

for backend in sqlite postgres; do
	declare -n flags=$backend
	start=$EPOCHREALTIME
	"$gen" --runs "$runs" --threads 50 --metrics 40 --seed 42 "${flags[@]}"
	echo "generated $runs runs into $backend in $(ms_since "$start") ms" >&2
done

# Median wall time in ms of ROUNDS runs of a command, after one to warm up.
median_ms() {
	local times=() start
	"$@" >/dev/null
	for _ in $(seq "$rounds"); do
		start=$EPOCHREALTIME
		"$@" >/dev/null
		times+=("$(ms_since "$start")")
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%.1f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

commands=(
	"list --limit 20"
	"query --bottlenecks --label test_name=test-07"
	"query --bottlenecks --label git_branch=branch-07"
	"compare --label-a git_branch=branch-02 --label-b git_branch=branch-03"
	"query --funnel --label test_name=test-07"
	"query --trend DRAM_Bound --label test_name=test-07"
	"query --bottleneck DRAM_Bound --min-pct 9.5 --top-n 20"
)

echo "| operation | SQLite | PostgreSQL |"
echo "| --- | ---: | ---: |"
for cmd in "${commands[@]}"; do
	read -ra args <<<"$cmd"
	printf '| `%s` | %s ms | %s ms |\n' "$cmd" \
		"$(median_ms "$topdown" "${args[@]}" "${sqlite[@]}")" \
		"$(median_ms "$topdown" "${args[@]}" "${postgres[@]}")"
done
printf '| store one run of 1,000 threads | %s ms | %s ms |\n' \
	"$("$gen" --time-one --threads 1000 --repeat "$rounds" "${sqlite[@]}")" \
	"$("$gen" --time-one --threads 1000 --repeat "$rounds" "${postgres[@]}")"
echo
echo "runs: $runs (sizes: SQLite $(du -sh "$work/runs.db" | cut -f1)," \
	"PostgreSQL $(du -sh "$work/pg" 2>/dev/null | cut -f1))"
