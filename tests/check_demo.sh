#!/usr/bin/env bash
# The README's first command as a new user meets it: tests/demo.sh (what
# `make demo` runs after building) with an empty HOME, then `topdown list`
# must show the run it stored, and ~/.topdown must be private (0700).
#
# usage: tests/check_demo.sh BUILD_DIR   (from the project root; as root)
set -u
out=${1:-build}
[ "$(id -u)" -eq 0 ] || { echo "skipped: the demo collects with BPF, which needs root"; exit 77; }
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
fail() { echo "demo: $*"; exit 1; }

env -u TOPDOWN_DB_PATH -u TOPDOWN_BACKEND -u TOPDOWN_DSN HOME="$home" ./tests/demo.sh "$out" >"$home/demo.log" 2>&1 ||
	{ cat "$home/demo.log"; fail "tests/demo.sh failed with an empty HOME"; }
[ "$(stat -c %a "$home/.topdown")" = 700 ] || fail "~/.topdown is not private: mode $(stat -c %a "$home/.topdown")"
listed=$(env -u TOPDOWN_DB_PATH HOME="$home" "$out/topdown" list --label test_name=demo --json) ||
	fail "topdown list failed after the demo"
runs=$(printf '%s\n' "$listed" | grep -c '"run_id"')
[ "$runs" -eq 1 ] || fail "topdown list shows $runs runs labeled test_name=demo, not 1: $listed"
grep -q 'td-workload' "$home/demo.log" || fail "the demo printed no td-workload threads"
echo "demo: one run stored and listed, ~/.topdown 0700"
