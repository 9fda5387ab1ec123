#!/usr/bin/env bash
# MCP over HTTPS as a remote assistant would reach it: a self-signed
# certificate, `mcp-serve --transport http --tls-cert --tls-key`, and curl
# speaking TLS to it (initialize, then a tool call in the session); plain
# HTTP to the TLS port is refused; a key file that does not parse is one
# line and a non-zero exit.
#
# usage: tests/check_mcp_tls.sh BUILD_DIR   (from the project root)
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
fail() { echo "tls: $*"; [ -s "$work/serve.log" ] && cat "$work/serve.log"; exit 1; }
command -v openssl >/dev/null && command -v curl >/dev/null || { echo "skipped: needs openssl and curl"; exit 77; }

openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost -keyout "$work/key.pem" \
	-out "$work/cert.pem" >/dev/null 2>&1 || fail "openssl could not make a certificate"
"$topdown" import tests/data/import/skx-l1.csv --cpu-model skx --db "$work/runs.db" >/dev/null 2>&1 ||
	fail "import failed"

# shellcheck source=tests/mcp_http_server.sh
. tests/mcp_http_server.sh
start_mcp_http "$topdown" "$work/serve.log" --tls-cert "$work/cert.pem" --tls-key "$work/key.pem" \
	--db "$work/runs.db" || fail "the server did not start"
[[ $url == https:* ]] || fail "the server does not say it serves https: $url"

init='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"tls","version":"1"}}}'
headers=$(curl -sS --cacert "$work/cert.pem" -D - -o "$work/init.json" -H 'Content-Type: application/json' \
	-H 'Accept: application/json, text/event-stream' --data "$init" "${url/127.0.0.1/localhost}") ||
	fail "curl over TLS failed"
session=$(tr -d '\r' <<<"$headers" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
[ -n "$session" ] || fail "no Mcp-Session-Id over TLS: $headers"
grep -q '"protocolVersion"' "$work/init.json" || fail "no initialize result over TLS: $(cat "$work/init.json")"
call='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_profiling_runs","arguments":{}}}'
answer=$(curl -sS --cacert "$work/cert.pem" -H 'Content-Type: application/json' -H 'Accept: application/json' \
	-H "Mcp-Session-Id: $session" -H 'MCP-Protocol-Version: 2025-06-18' --data "$call" \
	"${url/127.0.0.1/localhost}") || fail "the tool call over TLS failed"
[[ $answer == *'"isError":false'* ]] || fail "the tool call over TLS answered: $answer"
# Plain HTTP to the TLS port gets no MCP answer.
plain=$(curl -sS -m 5 -H 'Content-Type: application/json' --data "$init" "${url/https:/http:}" 2>&1)
[[ $plain != *'"protocolVersion"'* ]] || fail "plain HTTP was answered on the TLS port"

# A key that does not parse: one line, non-zero, no server.
echo "not a key" >"$work/bad.pem"
if "$topdown" mcp-serve --transport http --port 0 --tls-cert "$work/cert.pem" --tls-key "$work/bad.pem" \
	--db "$work/runs.db" >"$work/bad.out" 2>&1; then
	fail "a bad key file was accepted"
fi
[ "$(wc -l <"$work/bad.out")" -eq 1 ] || fail "a bad key file gave more than one line: $(cat "$work/bad.out")"
echo "tls: initialize and a tool call over HTTPS, plain HTTP refused, a bad key one line"
