#!/usr/bin/env bash
# A fleet writing into one PostgreSQL: N agents at once, each storing one
# run per window as fast as it can, for a few N.
#
# Each writer is a process of td-gen-runs --writers (bench/gen_runs.c)
# that, for SECONDS, makes the run of one agent window of a process with
# 50 to 200 threads (whole-run rows of levels 1 to 3 for every thread,
# thread name and the process: 2,160 to 8,160 metric rows), opens the
# store, writes the run with td_store_write_run and closes the store, as
# the agent's sink does. td-gen-runs then checks the ids the writers were
# told were stored against the store's: none missing, twice or unasked
# for; here every run of the round is also checked to hold all its thread
# and metric rows. Every round runs on the same private server
# (tests/pg_server.sh, fsync off), which keeps the rounds before it.
#
# Prints, for each N, the median windows stored per second over ROUNDS
# rounds with the lowest and highest, and what that is in hosts sending
# one window a minute (windows/s x 60).
#
# usage: bench/bench_fleet.sh [BUILD_DIR] [SECONDS] [ROUNDS] [N...]
# needs: make bench-tools (build/td-gen-runs), psql.
set -euo pipefail
out=${1:-build}
seconds=${2:-20}
rounds=${3:-3}
shift $(($# > 3 ? 3 : $#))
writers=("${@:-1 4 16 64}")
read -ra writers <<<"${writers[*]}"
gen=$out/td-gen-runs
work=$out/bench-fleet

[ -x "$gen" ] || { echo "bench: $gen is missing; run make bench-tools" >&2; exit 1; }
command -v psql >/dev/null || { echo "bench: psql is missing; install postgresql-client" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
. bench/pg_private.sh
trap 'pg_private_stop; rm -rf "$work"' EXIT
pg_private_start "$work/pg"
store=(--backend postgresql --dsn "$pg_dsn")

# Runs of the round whose thread or metric rows are not all there: each
# has its threads, and 40 tree nodes for every thread, 3 thread names and
# the process.
incomplete() {
	psql "$pg_dsn" -Atc "SELECT count(*) FROM runs r
		WHERE r.labels @> '{\"fleet_round\": \"$1\"}'
		AND ((SELECT count(*) FROM threads t WHERE t.run_pk = r.pk) <> r.nr_threads
		  OR (SELECT count(*) FROM metrics m WHERE m.run_pk = r.pk) <> (r.nr_threads + 4) * 40)"
}

echo "| writers | windows/s, median (lowest-highest) | hosts at 1 window/min | windows stored | lost, doubled or incomplete |"
echo "| ---: | ---: | ---: | ---: | ---: |"
for n in "${writers[@]}"; do
	rates=() total=0 bad=0
	for _ in $(seq "$rounds"); do
		line=$("$gen" --writers "$n" --seconds "$seconds" --threads 50 --threads-max 200 \
			"${store[@]}") || { echo "bench: $n writers: $line" >&2; exit 1; }
		echo "$line" >&2
		declare -A f=()
		for field in $line; do f[${field%%=*}]=${field#*=}; done
		rates+=("${f[per_second]}")
		total=$((total + f[windows]))
		bad=$((bad + f[lost] + f[extra] + $(incomplete "${f[fleet_round]}")))
	done
	printf '%s\n' "${rates[@]}" | sort -n | awk -v n="$n" -v total="$total" -v bad="$bad" '
		{ v[NR] = $1 } END {
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "| %d | %.1f (%.1f-%.1f) | %.0f | %d | %d |\n", n, m, v[1], v[NR], m * 60, total, bad }'
done
