#!/usr/bin/env bash
# A client that leaves in the middle of a streamed collect_topdown: the
# server notices (its next write fails) and cancels the collection, whose
# collector process ends long before its 20 s; the server serves on.
#
# usage: tests/check_mcp_disconnect.sh BUILD_DIR   (from the project root; as root)
set -u
out=$(realpath "${1:-build}")
topdown=$out/topdown
work=$(mktemp -d)
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "disconnect: $*"; [ -s "$work/serve.log" ] && cat "$work/serve.log"; exit 1; }
[ "$(id -u)" -eq 0 ] || { echo "skipped: collect_topdown loads BPF programs: needs root"; exit 77; }

# shellcheck source=tests/mcp_http_server.sh
. tests/mcp_http_server.sh
start_mcp_http "$topdown" "$work/serve.log" --allow-collect --max-duration 30s --db "$work/runs.db" ||
	fail "the server did not start"
post() { # SESSION BODY [curl options...]
	local session=$1 body=$2
	shift 2
	curl -sS -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
		${session:+-H "Mcp-Session-Id: $session"} "$@" --data "$body" "$url"
}
session=$(post "" '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
	-D - -o /dev/null | tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
[ -n "$session" ] || fail "no session"
post "$session" '{"jsonrpc":"2.0","method":"notifications/initialized"}' >/dev/null

collectors() { pgrep -P "$server" | wc -l; }
# curl itself in the background (not a subshell around it), so that killing it drops the connection
curl -sS -N -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
	-H "Mcp-Session-Id: $session" --data \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"collect_topdown","arguments":{"pid":"1","duration":"20s"},"_meta":{"progressToken":7}}}' \
	"$url" >"$work/stream.out" 2>/dev/null &
client=$!
sleep 2
[ "$(collectors)" -ge 1 ] || fail "no collection running 2 s into a 20 s one"
grep -q 'notifications/progress' "$work/stream.out" || fail "no progress streamed within 2 s: $(cat "$work/stream.out")"
kill "$client"
wait "$client" 2>/dev/null
for waited in $(seq 50); do
	[ "$(collectors)" -eq 0 ] && break
	sleep 0.2
done
[ "$(collectors)" -eq 0 ] || fail "the collection still runs 10 s after its client left"
answer=$(post "$session" '{"jsonrpc":"2.0","id":3,"method":"ping"}')
[[ $answer == *'"result"'* ]] || fail "the server does not answer after the disconnect: $answer"
echo "disconnect: the collection ended $((waited / 5)) s after its client left; the server answers on"
