#!/usr/bin/env bash
# Every command the README shows runs here, as a new user would run it,
# or the README says what it needs that a test host lacks. Each line of a
# ```sh block is one case:
#   - topdown commands run against a fresh HOME (the default store), with
#     the bundled workload started under the process names they follow
#     (redis-server, memtier, postgres), and these changes only: windows
#     and durations of seconds or more become 1 s, agents stop after two
#     windows, run ids and pids are ones that exist, counts.csv/json are the
#     import test files, /var/lib paths and the /metrics port are scratch
#     ones; each must exit 0;
#   - lines that need what no test host has (a PostgreSQL server at the
#     README's example host, systemd as init, a hardware PMU, a terminal
#     for topdown top's screen; tests/check_top.sh drives it) must say so
#     in their comment;
#   - make targets and `sudo build/topdown doctor` are covered elsewhere in
#     the suite (named below).
# A README line this script cannot place fails it, so a new example is
# never left untested.
#
# usage: tests/check_readme.sh BUILD_DIR   (from the project root; as root)
set -u
out=$(realpath "${1:-build}")
[ "$(id -u)" -eq 0 ] || { echo "skipped: the README's collect and agent examples need root (BPF)"; exit 77; }
work=$(mktemp -d)
pids=()
cleanup() {
	for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "README: $*"; exit 1; }

export HOME=$work
unset TOPDOWN_DB_PATH TOPDOWN_BACKEND TOPDOWN_DSN TOPDOWN_LABELS
topdown=$out/topdown
port=$((20000 + RANDOM % 20000))

# The workload under the names the examples follow.
for name in redis-server memtier postgres; do
	ln -s "$out/td-workload" "$work/$name"
	"$work/$name" --duration-ms 600000 --io-threads 2 >/dev/null 2>&1 &
	pids+=($!)
	eval "pid_${name//-/_}=$!"
done
# Runs with Top-Down trees, for the examples that query and compare them.
for f in skx-l1.csv skx-l1.json; do
	"$topdown" import "tests/data/import/$f" --cpu-model skx --label git_branch=main --label build=old \
		>/dev/null 2>&1 || fail "cannot import tests/data/import/$f"
done
# The store the examples' /var/lib path stands for, as the agent would have
# made it: readers (list, query, ...) open a store, they never create one.
"$topdown" import tests/data/import/skx-l1.csv --cpu-model skx --db "$work/runs.db" >/dev/null 2>&1 ||
	fail "cannot import into $work/runs.db"
ids=$("$topdown" list --label build=old --json | sed -n 's/.*"run_id": "\([0-9a-f-]*\)".*/\1/p')
run_a=$(sed -n 1p <<<"$ids" | cut -c1-8) run_b=$(sed -n 2p <<<"$ids" | cut -c1-8)
[ -n "$run_a" ] && [ -n "$run_b" ] || fail "the imported runs are not listed"

# The README's sh lines, continuations joined.
mapfile -t lines < <(awk '/^```sh/ {f = 1; next} /^```/ {f = 0} f' README.md |
	awk '{ if (sub(/\\$/, "")) printf "%s", $0; else print }' | sed 's/  */ /g')
[ "${#lines[@]}" -gt 30 ] || fail "found only ${#lines[@]} example lines; did the README's code blocks change shape?"

# "what it needs" must be in the line's comment
needs() { # LINE WORDS
	[[ $1 == *"# "*"$2"* ]] || fail "'$1' needs $2, and its comment must say so"
	echo "needs $2: $1"
}

ran=0
for line in "${lines[@]}"; do
	cmd=${line%%#*}
	cmd=${cmd%% }
	case $cmd in
	"make demo"*) echo "covered by tests/check_demo.sh: $cmd"; continue ;;
	"make test-arm64"* | "make arm64"*) echo "covered by the suite's arm64 section: $cmd"; continue ;;
	"make test"*) echo "the suite itself: $cmd"; continue ;;
	"make install"* | "make deb"* | "rpmbuild"*) echo "covered by tests/check_packaging.sh: $cmd"; continue ;;
	"sudo build/topdown doctor"*) echo "covered by tests/test_doctor_e2e.c: $cmd"; continue ;;
	"systemctl "* | *"uninstall-service"*) needs "$line" "systemd"; continue ;;
	*"install-service"*"--preview"*) ;;
	*"install-service"*) needs "$line" "systemd"; continue ;;
	"perf stat"*"-M Topdown"*) needs "$line" "a hardware PMU"; continue ;;
	*"db.example"* | *"@db/"*) needs "$line" "a PostgreSQL server"; continue ;;
	"topdown top "*"--batch"*) ;;
	"topdown top "*) needs "$line" "a terminal"; continue ;;
	"topdown "* | "TOPDOWN_LABELS="*"topdown "*) ;;
	*) fail "no rule for the README line '$line': run it here, or say what it needs" ;;
	esac
	run=$cmd
	run=${run//topdown /$topdown }
	run=$(sed -E -e 's/--duration [0-9]+(s|m)/--duration 1s/; s/--every [0-9]+(s|m)/--every 1s/' \
		-e "s/4242,4243/$pid_redis_server,$pid_memtier/; s/3f2a9c1e/$run_a/; s/7b01d4aa/$run_b/" \
		-e "s#counts.csv#tests/data/import/skx-l1.csv#; s#counts.json#tests/data/import/neoverse-v2-l1-per-thread.json#" \
		-e "s#/var/lib/topdown/runs.db#$work/runs.db#; s/127.0.0.1:9464/127.0.0.1:$port/" <<<"$run")
	if [[ $run == *" agent "* ]]; then
		run=${run/--duration 1s/--duration 500ms}
		run+=" --windows 2"
	fi
	run=${run//> runs.csv/> $work/runs.csv}
	run=${run//--output week.json/--output $work/week.json}
	run=${run//--output flame.svg/--output $work/flame.svg}
	run=${run//--output diff.svg/--output $work/diff.svg}
	run=${run//--output report.html/--output $work/report.html}
	run=${run//> stacks.folded/> $work/stacks.folded}
	if ! (eval "$run") >"$work/out" 2>&1; then
		cat "$work/out"
		fail "'$line' failed, run as: $run"
	fi
	echo "ran: $line"
	ran=$((ran + 1))
done
[ -s "$work/runs.csv" ] && [ -s "$work/week.json" ] || fail "the export examples wrote nothing"
[ -s "$work/flame.svg" ] && [ -s "$work/stacks.folded" ] || fail "the locate examples wrote nothing"
grep -q '<section id="compare"' "$work/report.html" || fail "the report example wrote no comparison"
echo "README: $ran examples ran, every other line says what it needs or is covered elsewhere"
