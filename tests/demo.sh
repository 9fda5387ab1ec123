#!/usr/bin/env bash
# The README's demo: start the bundled workload (named threads: a spinner,
# io threads, short-lived threads), collect it for a few seconds, print the
# per-thread result, store the run, and list the stored runs.
set -euo pipefail
out=${1:-build}
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: collecting needs root (BPF and CPU-wide counters); run: sudo make demo" >&2
	exit 1
fi
# The store is topdown's default (~/.topdown/data.db, or TOPDOWN_DB_PATH):
# the one a new user's `topdown list` reads afterwards.
"$out/td-workload" --duration-ms 6000 --io-threads 4 --short-threads 400 --short-work-us 2000 &
workload=$!
trap 'kill $workload 2>/dev/null || true' EXIT
sleep 0.2
"$out/topdown" collect --process td-workload --duration 4s --interval 1s \
	--label test_name=demo --label git_branch="$(git rev-parse --abbrev-ref HEAD 2>/dev/null || echo none)"
wait $workload
echo
"$out/topdown" list --limit 5
