#!/usr/bin/env bash
# Progress of long work as a person sees it: import, export and gc draw one
# line on stderr when it is a terminal (script(1) gives them one here),
# wipe it at the end, and print nothing of it when stderr is a pipe or a
# file.
#
# usage: tests/check_progress.sh BUILD_DIR   (from the project root)
set -u
out=$(realpath "${1:-build}")
topdown=$out/topdown
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
command -v script >/dev/null || { echo "skipped: script(1) is not installed (bsdutils)"; exit 77; }
fail() { echo "progress: $*"; exit 1; }

# On a terminal: the line, then its wipe (ESC [K after a carriage return).
on_tty() { # WORDS COMMAND...
	local words=$1 seen
	shift
	seen=$(script -qec "$*" /dev/null 2>&1 | tr -d '\000') || fail "'$*' failed on a terminal: $seen"
	[[ $seen == *$'\r'"topdown: $words"* ]] || fail "'$*' on a terminal showed no '$words' line: $(printf %q "$seen")"
	[[ $seen == *$'\r\e[K'* ]] || fail "'$*' on a terminal did not wipe its line"
}

# Not a terminal: no carriage return, no progress words.
off_tty() { # COMMAND...
	local err
	err=$("$@" 2>&1 >/dev/null) || fail "'$*' failed: $err"
	[[ $err != *$'\r'* && $err != *"topdown: importing"* && $err != *"exporting"* && $err != *"deleting"* ]] ||
		fail "'$*' drew progress into a pipe: $(printf %q "$err")"
}

db=$work/runs.db
on_tty "parsing" "$topdown" import tests/data/import/skx-l1.csv --cpu-model skx --db "$db"
off_tty "$topdown" import tests/data/import/skx-l1.csv --cpu-model skx --db "$db"
on_tty "exporting 0/2 runs" "$topdown" export --db "$db" --output "$work/runs.json"
off_tty "$topdown" export --db "$db" --output "$work/runs.json"
# export to the terminal itself: the runs alone, no progress line through them
seen=$(script -qec "$topdown export --db $db" /dev/null 2>&1)
[[ $seen != *"exporting"* ]] || fail "export to the terminal drew progress through its own output"
off_tty "$topdown" gc --older-than 1ms --db "$db"
"$topdown" import tests/data/import/skx-l1.csv --cpu-model skx --db "$db" >/dev/null 2>&1 || fail "import failed"
on_tty "deleting 1 runs" "$topdown" gc --older-than 1ms --db "$db"
echo "progress: import, export and gc on a terminal and off it"
