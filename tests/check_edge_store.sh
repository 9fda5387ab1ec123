#!/usr/bin/env bash
# The store at the command line's edge: which store a command opens, and how.
# - Readers (list, query, compare, export, flamegraph, report, mcp-serve)
#   never create a store: a mistyped --db is one line, exit 1, no file.
# - --db "" is refused (exit 2); TOPDOWN_DSN alone selects PostgreSQL; both
#   TOPDOWN_DSN and TOPDOWN_DB_PATH without TOPDOWN_BACKEND are refused.
# - A database readable but not writable by a user (0644, root's, in a 0755
#   directory) is read by that user (run as nobody when we are root).
# - A Top-Down node no model knows is refused with a suggestion (exit 2 on
#   the command line, isError over MCP), never answered with nothing.
#
# usage: tests/check_edge_store.sh BUILD_DIR   (from the project root)
set -u
out=$(realpath "${1:-build}")
topdown=$out/topdown
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "edge store: $*"; exit 1; }
[ -x "$topdown" ] || fail "no $topdown; build it first"
export HOME=$work/home # the default store, if anything wrongly fell back to it
mkdir "$HOME"
unset TOPDOWN_DB_PATH TOPDOWN_BACKEND TOPDOWN_DSN

# refused STATUS WORDS COMMAND...: exits STATUS with one line on stderr
# holding WORDS, and prints nothing on stdout.
refused() {
	local want=$1 words=$2 rc
	shift 2
	"$@" >"$work/stdout" 2>"$work/stderr" </dev/null
	rc=$?
	[ "$rc" -eq "$want" ] || fail "'$*' exited $rc, not $want: $(cat "$work/stderr")"
	[ "$(wc -l <"$work/stderr")" -eq 1 ] || fail "'$*' did not say one line: $(cat "$work/stderr")"
	grep -qF -- "$words" "$work/stderr" || fail "'$*' did not say '$words': $(cat "$work/stderr")"
	[ ! -s "$work/stdout" ] || fail "'$*' printed on stdout: $(head -c 300 "$work/stdout")"
}

# MCP over stdio: one tools/call after the handshake; its result line.
mcp_call() { # TOOL ARGUMENTS_JSON SERVER_ARGS...
	local tool=$1 args=$2
	shift 2
	printf '%s\n' \
		'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"check","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"$tool\",\"arguments\":$args}}" |
		"$topdown" mcp-serve "$@" 2>/dev/null | grep '"id":2'
}

# ---- readers never create a store ----
typo=$work/typo.db
nothing_made() {
	[ ! -e "$typo" ] || fail "$* created $typo"
	[ ! -e "$HOME/.topdown" ] || fail "$* created $HOME/.topdown"
}
for cmd in "list" "query" "query --funnel" "export" "compare --label-a k=a --label-b k=b" \
	"flamegraph --output $work/f.svg" "report --output $work/r.html"; do
	# shellcheck disable=SC2086 # the command's words
	refused 1 "no database at $typo; run \`topdown collect\` first" "$topdown" $cmd --db "$typo"
	nothing_made "$cmd"
done
if [ -e "$work/f.svg" ] || [ -e "$work/r.html" ]; then fail "a reader wrote its output without a store"; fi
# The default store, when there is none yet, is not made by a reader either.
refused 1 "no database at $HOME/.topdown/data.db" "$topdown" list
nothing_made "list without --db"
answer=$(mcp_call list_profiling_runs '{}' --db "$typo")
[[ $answer == *'"isError":true'* && $answer == *"no database at $typo"* ]] ||
	fail "MCP on a missing store: $answer"
nothing_made "mcp-serve"

# ---- which store: --db "", TOPDOWN_DSN ----
for cmd in list query export "gc --older-than 30d"; do
	# shellcheck disable=SC2086
	refused 2 '--db was given an empty path' "$topdown" $cmd --db ""
done
nothing_made '--db ""'
# TOPDOWN_DSN alone is PostgreSQL (here a server that is not there), not
# a SQLite file in HOME.
TOPDOWN_DSN="host=$work/nosocket port=1" refused 1 "cannot connect to PostgreSQL" "$topdown" list
TOPDOWN_DSN="host=$work/nosocket port=1" refused 1 "cannot connect to PostgreSQL" \
	"$topdown" import tests/data/import/skx-l1.csv --cpu-model skx
nothing_made "TOPDOWN_DSN alone"
TOPDOWN_DSN="host=$work/nosocket" TOPDOWN_DB_PATH=$typo \
	refused 2 "TOPDOWN_DSN and TOPDOWN_DB_PATH are both set" "$topdown" query
nothing_made "TOPDOWN_DSN with TOPDOWN_DB_PATH"

# ---- a node no model knows ----
db=$work/runs.db
"$topdown" import tests/data/import/skx-l1.csv --cpu-model skx --db "$db" >/dev/null 2>&1 ||
	fail "import into $db failed"
refused 2 "unknown metric 'Frontend_Bond'; did you mean Frontend_Bound?" \
	"$topdown" query --bottleneck Frontend_Bond --db "$db"
refused 2 "unknown metric 'NoSuch'" "$topdown" query --bottleneck NoSuch --db "$db"
refused 2 "did you mean Frontend_Bound?" "$topdown" query --trend Frontend_Bond --db "$db"
refused 2 "did you mean Retiring?" "$topdown" query --threads --sort Retirng --db "$db"
answer=$(mcp_call query_by_bottleneck '{"node":"Frontend_Bond"}' --db "$db")
[[ $answer == *'"isError":true'* && $answer == *"did you mean Frontend_Bound?"* ]] ||
	fail "MCP query_by_bottleneck with a typo: $answer"
# A known node is still an answer (empty or not), exit 0.
"$topdown" query --bottleneck Frontend_Bound --db "$db" >/dev/null 2>&1 ||
	fail "query --bottleneck Frontend_Bound failed"

# ---- another user's database, readable but not writable ----
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	echo "ok without the unprivileged reader (needs root and setpriv)"
	exit 0
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
shared=$work/shared
mkdir "$shared"
chmod 755 "$work" "$shared"
cp "$topdown" "$shared/topdown" # the build tree may be closed to nobody
chmod 755 "$shared/topdown"
sdb=$shared/data.db
"$topdown" import tests/data/import/skx-l1.csv --cpu-model skx --db "$sdb" >/dev/null 2>&1 ||
	fail "import into $sdb failed"
chmod 644 "$sdb"
# Its -wal and -shm kept the 0600 the file had: the reader says so.
refused 1 "may not read its files $sdb-wal and $sdb-shm" as_nobody "$shared/topdown" list --db "$sdb"
# A writer gives them the file's permissions; then every reader reads.
"$topdown" gc --older-than 3650d --db "$sdb" >/dev/null 2>&1 || fail "gc on $sdb failed"
for cmd in "list" "query" "export" "query --bottleneck Retiring"; do
	# shellcheck disable=SC2086
	as_nobody "$shared/topdown" $cmd --db "$sdb" >"$work/stdout" 2>"$work/stderr" ||
		fail "'$cmd' as nobody on a 0644 database failed: $(cat "$work/stderr")"
done
grep -q skx-l1 "$work/stdout" || grep -q Retiring "$work/stdout" ||
	fail "query as nobody showed no run: $(head -c 300 "$work/stdout")"
answer=$(cd "$shared" && as_nobody "$shared/topdown" mcp-serve --db "$sdb" < <(printf '%s\n' \
	'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"check","version":"1"}}}' \
	'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
	'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_profiling_runs","arguments":{}}}') 2>/dev/null |
	grep '"id":2')
[[ $answer == *'"isError":false'* && $answer == *skx-l1* ]] || fail "MCP as nobody: $answer"
# Without -wal and -shm, in a directory it cannot write: named, with the fix.
rm -f "$sdb-wal" "$sdb-shm"
refused 1 "are missing and this user cannot create them" as_nobody "$shared/topdown" list --db "$sdb"
[ ! -e "$sdb-shm" ] || fail "a reader left $sdb-shm"
echo "ok: readers create nothing, --db \"\" and TOPDOWN_DSN choose plainly, unknown nodes are refused, nobody reads a 0644 store"
