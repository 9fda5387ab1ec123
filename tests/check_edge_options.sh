#!/usr/bin/env bash
# Bad values at the command line's edge: each is refused with one line
# that names the problem and the fix, exit 2 (usage), and leaves every
# store and file as it was: nothing created, replaced or deleted, and no
# window collected first.
#
# Durations run from 1ms to 100 years everywhere (past about 106,751
# days, int64 nanoseconds wrap: `gc --older-than 127600d` once deleted
# every run). Label values must be UTF-8 text without control characters,
# which both stores accept, checked before any collection starts.
#
# Scratch stores only (mktemp -d); never ~/.topdown.
# usage: tests/check_edge_options.sh [BUILD_DIR]   (from the project root)
set -u
out=${1:-build}
topdown=$(realpath "$out/topdown")
[ -x "$topdown" ] || { echo "no $out/topdown; run make first"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HOME=$work/home TOPDOWN_DB_PATH= TOPDOWN_BACKEND= TOPDOWN_DSN= TOPDOWN_LABELS=
mkdir -p "$HOME"
db=$work/runs.db
failures=0

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# The runs in $db, one id a line.
run_ids() { "$topdown" list --db "$db" --json --limit 1000 | sed -n 's/.*"run_id": "\([0-9a-f-]*\)".*/\1/p'; }

# refuse WANT CMD...: CMD exits 2 with one line on stderr holding WANT,
# prints nothing on stdout, and $db, $work/new.db and $work/units are as
# they were.
refuse() {
	local want=$1 before after rc
	shift
	before=$(run_ids; sha256sum "$db" | cut -d' ' -f1)
	"$@" >"$work/stdout" 2>"$work/stderr" </dev/null
	rc=$?
	after=$(run_ids; sha256sum "$db" | cut -d' ' -f1)
	local what="${*:2}"
	[ "$rc" -eq 2 ] || fail "$what: exit $rc, not 2 (stderr: $(head -c 300 "$work/stderr"))"
	[ "$(wc -l <"$work/stderr")" -eq 1 ] || fail "$what: not one line on stderr: $(head -c 300 "$work/stderr")"
	grep -qF -- "$want" "$work/stderr" || fail "$what: stderr lacks '$want': $(head -c 300 "$work/stderr")"
	[ -s "$work/stdout" ] && fail "$what: printed on stdout: $(head -c 200 "$work/stdout")"
	[ "$before" = "$after" ] || fail "$what: changed the store $db"
	[ -e "$work/new.db" ] && { fail "$what: created $work/new.db"; rm -f "$work/new.db"*; }
	[ -z "$(ls -A "$work/units" 2>/dev/null)" ] || { fail "$what: wrote into $work/units"; rm -rf "$work/units"; }
	return 0
}

# Two runs to keep (imported ones: no PMU or privilege needed).
for f in skx-l1.csv skx-l1.json; do
	"$topdown" import "tests/data/import/$f" --cpu-model skx --db "$db" >/dev/null ||
		{ echo "cannot import tests/data/import/$f"; exit 1; }
done
[ "$(run_ids | wc -l)" -eq 2 ] || { echo "the imported runs are not listed"; exit 1; }

too_long="longer than 100 years; use at most 36500d"

# --- durations: past 100 years, an error naming the option, never a wrap ---
for d in 127600d 150000d 200000d 213503d; do
	refuse "'$d' for --older-than: it is $too_long" "$topdown" gc --older-than "$d" --db "$db"
	refuse "for --older-than" "$topdown" gc --older-than "$d" --dry-run --db "$db"
done
refuse "'36500.5d' for --older-than" "$topdown" gc --older-than 36500.5d --db "$db"
refuse "'110000d' for --duration: it is $too_long" "$topdown" collect --system-wide --duration 110000d --db "$work/new.db"
refuse "'0.5ms' for --interval: it is shorter than 1ms" "$topdown" collect --system-wide --interval 0.5ms --db "$work/new.db"
refuse "'213503d' for --every: it is $too_long" "$topdown" agent --system-wide --every 213503d --windows 1 --db "$work/new.db"
refuse "for --duration" "$topdown" agent --system-wide --duration 150000d --db "$work/new.db"
refuse "'150000d' for --last: it is $too_long" "$topdown" list --last 150000d --db "$db"
refuse "for --last" "$topdown" query bottlenecks --last 150000d --db "$db"
refuse "for --last" "$topdown" export --last 150000d --db "$db"
refuse "for --interval" "$topdown" top --system-wide --interval 110000d
refuse "for --max-duration" "$topdown" mcp-serve --max-duration 110000d --db "$db"
refuse "for --every" "$topdown" install-service --system-wide --every 213503d --unit-dir "$work/units" \
	--env-file "$work/units/env" --no-systemctl

# The longest duration is accepted, and deletes nothing newer than 100 years.
"$topdown" gc --older-than 36500d --db "$db" >"$work/stdout" 2>&1 || fail "gc --older-than 36500d: $(cat "$work/stdout")"
grep -q "^deleted 0 runs started before 19[0-9][0-9]-" "$work/stdout" || fail "gc --older-than 36500d: $(cat "$work/stdout")"
[ "$(run_ids | wc -l)" -eq 2 ] || fail "gc --older-than 36500d deleted runs"

# --- labels: checked whole at the edge, before any window ---
bad=$'k=\xff'
refuse "bad label 'k=?': the value is not UTF-8 text" "$topdown" collect --system-wide --label "$bad" --db "$work/new.db"
refuse "not UTF-8" "$topdown" agent --system-wide --label "$bad" --windows 1 --db "$work/new.db"
refuse "TOPDOWN_LABELS: bad label 'k=?': the value is not UTF-8" \
	env TOPDOWN_LABELS="$bad" "$topdown" agent --system-wide --windows 1 --db "$work/new.db"
refuse "not UTF-8" "$topdown" import tests/data/import/skx-l1.csv --cpu-model skx --label "$bad" --db "$db"
refuse "not UTF-8" "$topdown" list --label "$bad" --db "$db"
refuse "not UTF-8" "$topdown" install-service --system-wide --label "$bad" --unit-dir "$work/units" \
	--env-file "$work/units/env" --no-systemctl
refuse "control character" "$topdown" collect --system-wide --label $'k=a\xc2\x85b' --db "$work/new.db"

# --- the rotation offset: auto or 0..65535, for the agent and the service it installs ---
for v in 65536 -1 x 1.5 AUTO; do
	refuse "bad value '$v' for --rotation-offset: use auto, or" "$topdown" agent --system-wide --rotation-offset "$v" \
		--windows 1 --db "$work/new.db"
done
refuse "for --rotation-offset: use auto, or" "$topdown" install-service --system-wide --rotation-offset 70000 \
	--unit-dir "$work/units" --env-file "$work/units/env" --no-systemctl
"$topdown" install-service --system-wide --rotation-offset 3 --unit-dir "$work/units" --env-file "$work/units/env" \
	--no-systemctl --preview >"$work/stdout" 2>&1 || fail "install-service --rotation-offset 3: $(cat "$work/stdout")"
grep -q "^ExecStart=.* agent .*--rotation-offset 3" "$work/stdout" ||
	fail "install-service --rotation-offset 3: the unit does not pass it on: $(grep ExecStart "$work/stdout")"
rm -rf "$work/units"

# --- MCP arguments: the same bounds ---
mcp_call() { # tool, arguments (JSON)
	printf '%s\n' \
		'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"check","version":"1"}}}' \
		'{"jsonrpc":"2.0","method":"notifications/initialized"}' \
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"$1\",\"arguments\":$2}}" |
		"$topdown" mcp-serve --db "$db" | tail -1
}
reply=$(mcp_call list_profiling_runs '{"last":"150000d"}')
grep -qF "\"isError\":true" <<<"$reply" && grep -qF "'150000d' for argument 'last': it is $too_long" <<<"$reply" ||
	fail "MCP last=150000d: $reply"
reply=$(mcp_call list_profiling_runs '{"labels":{"k":"a\u0085b"}}')
grep -qF "\"isError\":true" <<<"$reply" && grep -qF "control character" <<<"$reply" ||
	fail "MCP labels with U+0085: $reply"
[ "$(run_ids | wc -l)" -eq 2 ] || fail "the runs are not all there at the end"

echo "edge options: $failures failure(s)"
[ "$failures" -eq 0 ]
