#!/usr/bin/env bash
# Query and storage speed on a large store, SQLite and PostgreSQL side by
# side, from the same generated data.
#
# td-gen-runs writes RUNS runs of 50 threads with 40 tree nodes each (for
# every thread, thread name and the process: about 2,200 metric rows a run)
# into a SQLite file and, with the same seed, into a private PostgreSQL
# server (tests/pg_server.sh, stopped at the end). Each command then runs
# once to warm the caches and ROUNDS times more; the table shows the median
# wall time of the whole command (process start, connection, query, output),
# with the fastest and slowest round in parentheses.
# "store one run" is the median time of td_store_write_run for a run of
# 1,000 threads (about 41,000 metric rows), measured inside td-gen-runs.
#
# The answers of bottlenecks, funnel and compare (--json) must be the same
# from both backends, to the last digit; the script stops at the first
# that is not. (Lists of runs differ: ids and start times are the store's.)
#
# usage: bench/bench_query.sh [BUILD_DIR] [RUNS] [ROUNDS]
# needs: make bench-tools (build/topdown and build/td-gen-runs), psql; about 3 GB
# of disk per 10,000 runs and backend under BUILD_DIR.
#
# BENCH_DB=FILE BENCH_DSN=DSN: use these stores instead of generating new
# ones (filling them takes most of the script's time). They must hold what
# the generation here would put there: td-gen-runs --runs RUNS --threads 50
# --metrics 40 --seed 42, with --db FILE and with --backend postgresql
# --dsn DSN.
set -euo pipefail
out=${1:-build}
runs=${2:-10000}
rounds=${3:-10}
topdown=$out/topdown
gen=$out/td-gen-runs
work=$out/bench-query

for tool in "$topdown" "$gen"; do
	[ -x "$tool" ] || { echo "bench: $tool is missing; run make bench-tools" >&2; exit 1; }
done
command -v psql >/dev/null || { echo "bench: psql is missing; install postgresql-client" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
. bench/pg_private.sh
trap 'pg_private_stop; rm -rf "$work"' EXIT

ms_since() {
	awk -v start="$1" -v now="$EPOCHREALTIME" 'BEGIN { printf "%.1f", (now - start) * 1000 }'
}

if [ -n "${BENCH_DB:-}" ] && [ -n "${BENCH_DSN:-}" ]; then
	sqlite=(--db "$BENCH_DB")
	postgres=(--backend postgresql --dsn "$BENCH_DSN")
else
	pg_private_start "$work/pg"
	sqlite=(--db "$work/runs.db")
	postgres=(--backend postgresql --dsn "$pg_dsn")
	for backend in sqlite postgres; do
		declare -n flags=$backend
		start=$EPOCHREALTIME
		"$gen" --runs "$runs" --threads 50 --metrics 40 --seed 42 "${flags[@]}"
		echo "generated $runs runs into $backend in $(ms_since "$start") ms" >&2
	done
fi
# A server that has been running has had autovacuum through its tables,
# which lets the bottlenecks statement read its indexes alone; a store
# filled a minute ago has not yet.
psql "${postgres[3]}" -qc "VACUUM (ANALYZE)"

# Median wall time in ms of ROUNDS runs of a command, after one to warm up,
# and the fastest and slowest of them.
median_ms() {
	local times=() start
	"$@" >/dev/null
	for _ in $(seq "$rounds"); do
		start=$EPOCHREALTIME
		"$@" >/dev/null
		times+=("$(ms_since "$start")")
	done
	printf '%s\n' "${times[@]}" | sort -n | awk '{ v[NR] = $1 } END {
		printf "%.1f ms (%.0f-%.0f)", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2,
			v[1], v[NR] }'
}

commands=(
	"list --limit 20"
	"query --bottlenecks"
	"query --bottlenecks --label host=ci-1"
	"query --bottlenecks --label test_name=test-07"
	"query --bottlenecks --label git_branch=branch-07"
	"compare --label-a git_branch=branch-02 --label-b git_branch=branch-03"
	"query --funnel --label test_name=test-07"
	"query --funnel --pooled --label test_name=test-07"
	"query --trend DRAM_Bound --label test_name=test-07"
	"query --bottleneck DRAM_Bound --min-pct 9.5 --top-n 20"
)

# Answers that name no run (ids and start times differ between the two
# stores) must be the same from both.
same_answer() {
	local a b
	a=$("$topdown" "$@" --json "${sqlite[@]}")
	b=$("$topdown" "$@" --json "${postgres[@]}")
	[ "$a" = "$b" ] && return
	echo "bench: '$*' answers differently on SQLite and PostgreSQL:" >&2
	diff <(echo "$a") <(echo "$b") >&2
	exit 1
}

echo "| operation | SQLite | PostgreSQL |"
echo "| --- | ---: | ---: |"
for cmd in "${commands[@]}"; do
	read -ra args <<<"$cmd"
	case $cmd in "query --bottlenecks"* | "query --funnel"* | compare*) same_answer "${args[@]}" ;; esac
	printf '| `%s` | %s | %s |\n' "$cmd" \
		"$(median_ms "$topdown" "${args[@]}" "${sqlite[@]}")" \
		"$(median_ms "$topdown" "${args[@]}" "${postgres[@]}")"
done
# Storing adds runs of its own, which would change reused stores.
if [ -z "${BENCH_DB:-}" ]; then
	printf '| store one run of 1,000 threads | %s ms | %s ms |\n' \
		"$("$gen" --time-one --threads 1000 --repeat "$rounds" "${sqlite[@]}")" \
		"$("$gen" --time-one --threads 1000 --repeat "$rounds" "${postgres[@]}")"
fi
echo
echo "runs: $runs (sizes: SQLite $(du -sh "${sqlite[1]}" | cut -f1), PostgreSQL" \
	"$(psql "${postgres[3]}" -Atc 'SELECT pg_size_pretty(pg_database_size(current_database()))'))"
