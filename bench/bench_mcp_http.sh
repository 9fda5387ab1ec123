#!/usr/bin/env bash
# MCP over Streamable HTTP under load: SESSIONS concurrent sessions x CALLS
# tools/call each (bench/mcp_http_load.mjs, Node's fetch) against one
# `topdown mcp-serve --transport http` on a store of RUNS synthetic runs
# (td-gen-runs, as bench/bench_mcp.sh), then more rounds of the same up to
# TOTAL calls with the server's RSS read between them: errors, p50 and p99
# per tool, and whether memory stays flat.
#
# usage: bench/bench_mcp_http.sh [BUILD_DIR] [RUNS] [SESSIONS] [CALLS] [TOTAL]
# needs: make bench-tools (build/topdown, build/td-gen-runs) and node
set -euo pipefail
out=${1:-build}
runs=${2:-10000}
sessions=${3:-32}
calls=${4:-500}
total=${5:-100000}
work=$(mktemp -d)
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
for tool in "$out/topdown" "$out/td-gen-runs"; do
	[ -x "$tool" ] || { echo "bench: $tool is missing; run make bench-tools" >&2; exit 1; }
done
command -v node >/dev/null || { echo "bench: node is missing" >&2; exit 1; }
# BENCH_DB=FILE reuses a store made before (the same td-gen-runs command) instead
db=${BENCH_DB:-$work/runs.db}
[ -n "${BENCH_DB:-}" ] || "$out/td-gen-runs" --runs "$runs" --threads 8 --metrics 40 --seed 42 --db "$db" >&2
# shellcheck source=tests/mcp_http_server.sh
. "$(dirname "$0")/../tests/mcp_http_server.sh"
start_mcp_http "$out/topdown" "$work/serve.log" --max-sessions 64 --db "$db" || exit 1
rss() { awk '/^VmRSS/ {print $2}' "/proc/$server/status"; }

here=$(dirname "$0")
node "$here/mcp_http_load.mjs" "$url" "$sessions" "$calls" >"$work/first.json"
done_calls=$((sessions * calls))
rss_first=$(rss)
rss_rounds="$((rss_first / 1024))" # MiB after each round
errors=$(sed -n 's/.*"errors":\([0-9]*\).*/\1/p' "$work/first.json")
grep -h '"error"' "$work/first.json" >"$work/why" || true
while [ "$done_calls" -lt "$total" ]; do
	node "$here/mcp_http_load.mjs" "$url" "$sessions" "$calls" >"$work/more.json"
	errors=$((errors + $(sed -n 's/.*"errors":\([0-9]*\).*/\1/p' "$work/more.json")))
	grep -h '"error"' "$work/more.json" >>"$work/why" || true
	done_calls=$((done_calls + sessions * calls))
	rss_rounds+=" $(($(rss) / 1024))"
done
rss_last=$(rss)

echo "| tool | calls | p50 ms | p99 ms |"
echo "| --- | ---: | ---: | ---: |"
sed -n 's/{"tool":"\([^"]*\)","n":\([0-9]*\),"p50":\([0-9.]*\),"p99":\([0-9.]*\)}/\1 \2 \3 \4/p' "$work/first.json" |
	while read -r tool n p50 p99; do printf '| %s | %s | %.2f | %.2f |\n' "$tool" "$n" "$p50" "$p99"; done
seconds=$(sed -n 's/.*"seconds":\([0-9.]*\).*/\1/p' "$work/first.json")
echo
echo "first $((sessions * calls)) calls ($sessions sessions x $calls) in $(printf %.1f "$seconds") s;" \
	"$done_calls calls in all, $errors errors;" \
	"server RSS $((rss_first / 1024)) MiB after the first, $((rss_last / 1024)) MiB after all" \
	"($(awk -v a="$rss_first" -v b="$rss_last" 'BEGIN {printf "%+.1f%%", 100 * (b - a) / a}'))"
echo "server RSS after each round, MiB:$rss_rounds"
if [ -s "$work/why" ]; then
	echo "errors, by tool and reason (a round's count each):"
	cat "$work/why"
fi
