#!/usr/bin/env bash
# topdown import on counts perf stat cannot have written, as a person runs
# it: one line on stderr naming the file, the line and the range of a
# count, exit 2, and nothing stored (the database stays without runs).
#
# usage: tests/check_edge_import.sh BUILD_DIR   (from the project root)
set -u
out=$(realpath "${1:-build}")
topdown=$out/topdown
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "import edge: $*"; exit 1; }

db=$work/runs.db
count_runs() { sqlite3 "$db" "SELECT count(*) FROM runs"; }
"$topdown" import tests/data/import/zen4-l1.csv --cpu-model zen4 --db "$db" >/dev/null || fail "a good import failed"
[ "$(count_runs)" -eq 1 ] || fail "the good import did not store one run"
good="6000000000,,cycles,3000456789,100.00,,
7200000000,,de_no_dispatch_per_slot.no_ops_from_frontend,3000456789,100.00,,"

refused() { # NAME CONTENT EXPECTED-MESSAGE
	local file=$work/$1 err rc
	printf '%s\n' "$2" >"$file"
	err=$("$topdown" import "$file" --cpu-model zen4 --db "$db" 2>&1 >/dev/null)
	rc=$?
	[ $rc -eq 2 ] || fail "$1: exit $rc, expected 2: $err"
	[ "$(printf '%s\n' "$err" | wc -l)" -eq 1 ] || fail "$1: more than one line on stderr: $err"
	[[ $err == "topdown import: $file: $3"* ]] || fail "$1: stderr is '$err', expected 'topdown import: $file: $3...'"
}

refused negative.csv "$good
-5,,ex_ret_ops,3000456789,100.00,," \
	"line 3: count '-5' for ex_ret_ops is negative; perf stat counts are whole numbers from 0 to 2^64-1"
refused hex.csv "$good
0x10,,ex_ret_ops,3000456789,100.00,," "line 3: count '0x10' for ex_ret_ops is hexadecimal"
refused huge.json '{"counter-value" : "1e30", "event" : "cycles"}' "line 1: count '1e30' for cycles is above 2^64-1"
refused thread.csv "w-1,6000000000,,cycles,1,100.00,,
w-1,7200000000,,ex_ret_ops,1,100.00,,
w-2,7200000000,,ex_ret_ops,1,100.00,," "line 3: thread w-2 has no count for cycles in the run"

# Nothing was stored: the good run alone.
[ "$(count_runs)" -eq 1 ] || fail "a refused import stored a run"
echo "4 impossible inputs refused with file and line, exit 2, nothing stored"
