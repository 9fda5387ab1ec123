# shellcheck shell=bash
# Sourced by the scripts that talk to `topdown mcp-serve --transport http`
# (tests/check_mcp_*.sh, tests/conformance/run.sh, bench/bench_mcp_http.sh):
# start_mcp_http TOPDOWN LOG ARGS... starts it on a free port (--port 0,
# told on stderr as "serving MCP at URL") and sets server (its pid) and url,
# or returns 1 with the log's end on stderr when it does not come up within
# 10 s. The caller stops it: kill "$server".
start_mcp_http() {
	local topdown=$1 log=$2
	shift 2
	: >"$log" # there before the first look, whenever the child opens it
	"$topdown" mcp-serve --transport http --port 0 "$@" </dev/null >/dev/null 2>"$log" &
	server=$!
	url=
	for _ in $(seq 100); do
		url=$(sed -n 's/.*serving MCP at \(http[^ ]*\).*/\1/p' "$log" | head -1)
		[ -n "$url" ] && return 0
		kill -0 "$server" 2>/dev/null || break
		sleep 0.1
	done
	tail -5 "$log" >&2
	echo "topdown mcp-serve --transport http did not start" >&2
	return 1
}
