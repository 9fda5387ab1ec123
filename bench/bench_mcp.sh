#!/usr/bin/env bash
# MCP server speed as a client sees it (bench/bench_mcp.c): server start to
# initialize answered, and tools/call round trips in one session on a
# SQLite store of RUNS synthetic runs (td-gen-runs: 8 threads and 40 tree
# nodes per thread, thread name and process; labels git_branch branch-00..99,
# test_name test-00..19, one run every 4 minutes back from now).
#
# usage: bench/bench_mcp.sh [BUILD_DIR] [RUNS] [CALLS]
# needs: make bench-tools (build/topdown, build/td-gen-runs, build/bench_mcp)
set -euo pipefail
out=${1:-build}
runs=${2:-10000}
calls=${3:-1000}
work=$out/bench-mcp

for tool in "$out/topdown" "$out/td-gen-runs" "$out/bench_mcp"; do
	[ -x "$tool" ] || { echo "bench: $tool is missing; run make bench-tools" >&2; exit 1; }
done
rm -rf "$work"
mkdir -p "$work"
trap 'rm -rf "$work"' EXIT
db=$work/runs.db
"$out/td-gen-runs" --runs "$runs" --threads 8 --metrics 40 --seed 42 --db "$db"
echo "store: $runs runs, $(du -sh "$db" | cut -f1)" >&2

bench() { "$out/bench_mcp" --topdown "$out/topdown" --db "$db" "$@"; }

echo "| measurement | n | median ms | p90 ms | p99 ms | max ms |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
bench --starts 101 --label "server start to initialize answered"
bench --calls "$calls" --label "ping (the protocol alone)" --tool ping
bench --calls "$calls" --label 'query_bottlenecks, labels {git_branch: branch-07} (100 runs)' \
	--args '{"labels":{"git_branch":"branch-07"}}'
bench --calls "$calls" --label 'query_bottlenecks, labels {git_branch: branch-07, test_name: test-07} (5 runs)' \
	--args '{"labels":{"git_branch":"branch-07","test_name":"test-07"}}'
bench --calls "$calls" --label 'query_bottlenecks, labels {test_name: test-07} (500 runs)' \
	--args '{"labels":{"test_name":"test-07"}}'
bench --calls 50 --label 'query_bottlenecks, last 24h (360 runs)' --args '{"last":"24h"}'
bench --calls 20 --label "query_bottlenecks, no filter ($runs runs)" --args '{}'
bench --calls "$calls" --label 'list_profiling_runs (20 newest)' --tool list_profiling_runs --args '{}'
bench --calls "$calls" --label 'explain_metric DRAM_Bound' --tool explain_metric \
	--args '{"name":"DRAM_Bound"}'
