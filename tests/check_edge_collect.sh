#!/usr/bin/env bash
# What topdown collect does with its targets and its run, as a user sees
# it: --pid stores the process's comm (list --process finds the run);
# kernel threads and zombies are refused at once; the window ends when
# every target has exited; a busy store sends the run to the spool, and
# the next collect moves it to the store exactly once; SIGHUP and SIGQUIT
# stop the window as SIGTERM does, the run stored and marked partial.
#
# usage: tests/check_edge_collect.sh BUILD_DIR   (from the project root; as root)
# exit 0 when all pass, 77 when it cannot run here (the last line says
# why), else 1 with what failed.
set -u
out=$(realpath "${1:-build}")
[ "$(id -u)" -eq 0 ] || { echo "skipped: topdown collect loads BPF, which needs root"; exit 77; }
[ -r /sys/kernel/btf/vmlinux ] || { echo "skipped: this kernel has no BTF (/sys/kernel/btf/vmlinux)"; exit 77; }
command -v jq >/dev/null || { echo "skipped: jq is missing (make deps installs it)"; exit 77; }
command -v python3 >/dev/null || { echo "skipped: python3 is missing (it holds the database's lock)"; exit 77; }
topdown=$out/topdown
work=$(mktemp -d)
# Every default path in scratch: the spool's (~/.topdown/spool.db) and the database's.
export HOME=$work/home
unset STATE_DIRECTORY TOPDOWN_DB_PATH TOPDOWN_BACKEND TOPDOWN_DSN
mkdir -p "$HOME"
db=$work/runs.db
spool=$work/spool.db
failures=()
children=()
cleanup() {
	for pid in "${children[@]}"; do kill "$pid" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAILED: $*"; failures+=("$*"); }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
runs_of() { "$topdown" list --json --db "$db" | jq -r --arg p "$1" '[.[] | select(.process == $p)] | length'; }
count_runs() { "$topdown" list --json --db "$db" | jq length; }

# A sleeper whose comm no other process has: a copy of sleep under a made-up name.
comm=tdedge$$
cp "$(command -v sleep)" "$work/$comm"
"$work/$comm" 600 &
sleeper=$!
children+=("$sleeper")

# --- --pid stores the comm: list --process finds the run ---
"$topdown" collect --pid "$sleeper" --duration 300ms --db "$db" >"$work/out" 2>"$work/err" ||
	fail "collect --pid $sleeper failed: $(cat "$work/err")"
grep -q "^target $comm, " "$work/out" || fail "collect --pid did not name the target $comm: $(head -2 "$work/out")"
[ "$(runs_of "$comm")" = 1 ] || fail "list --process $comm does not find the run of --pid $sleeper"
"$topdown" list --process "$comm" --db "$db" | grep -q " $comm " ||
	fail "topdown list --process $comm lists no run"
"$topdown" list --json --db "$db" | jq -e --arg p "$sleeper" 'any(.[]; .labels.pid == $p)' >/dev/null ||
	fail "the run lost its pid label"

# Two programs: both comms, each once; the same program twice: its comm.
"$work/$comm" 600 &
twin=$!
children+=("$twin")
"$topdown" collect --pid "$sleeper,$$,$twin" --duration 200ms --db "$db" >"$work/out" 2>"$work/err" ||
	fail "collect --pid of three failed: $(cat "$work/err")"
self=$(cat /proc/$$/comm)
grep -q "^target $comm,$self, " "$work/out" || fail "collect --pid of three did not name $comm,$self: $(sed -n 2p "$work/out")"
"$topdown" collect --pid "$sleeper,$twin" --duration 200ms --db "$db" >"$work/out" 2>"$work/err" ||
	fail "collect --pid of twins failed: $(cat "$work/err")"
[ "$(runs_of "$comm")" = 2 ] || fail "list --process $comm does not find the run of two $comm processes"

# --- refused at once, nothing stored: a kernel thread and a zombie ---
refused() { # WHAT EXPECT PID
	local before start rc elapsed
	before=$(count_runs)
	start=$(now_ms)
	"$topdown" collect --pid "$3" --duration 30s --db "$db" >"$work/out" 2>"$work/err"
	rc=$? elapsed=$(($(now_ms) - start))
	[ "$rc" = 2 ] || fail "collect --pid $3 ($1) exited $rc, not 2: $(cat "$work/err")"
	[ "$(wc -l <"$work/err")" = 1 ] || fail "collect --pid $3 ($1) said more than one line: $(cat "$work/err")"
	grep -q "$2" "$work/err" || fail "collect --pid $3 ($1) did not say '$2': $(cat "$work/err")"
	[ "$elapsed" -lt 2000 ] || fail "collect --pid $3 ($1) took $elapsed ms to refuse"
	[ "$(count_runs)" = "$before" ] || fail "collect --pid $3 ($1) stored a run"
}
if grep -q '^kthreadd$' /proc/2/comm 2>/dev/null; then
	refused "kthreadd" "pid 2 (kthreadd) is a kernel thread" 2
else
	fail "pid 2 is not kthreadd here: $(cat /proc/2/comm 2>&1)"
fi
# A zombie: the parent execs a program that never reaps its child.
bash -c 'sleep 0 & echo $! >"$1"; exec sleep 60' zombie-parent "$work/zombie.pid" &
children+=($!)
for _ in $(seq 100); do
	zombie=$(cat "$work/zombie.pid" 2>/dev/null)
	[ -n "$zombie" ] && [ "$(awk '{ print $3 }' "/proc/$zombie/stat" 2>/dev/null)" = Z ] && break
	sleep 0.05
done
if [ "$(awk '{ print $3 }' "/proc/$zombie/stat" 2>/dev/null)" = Z ]; then
	refused "a zombie" "pid $zombie has exited and waits for its parent to reap it (a zombie)" "$zombie"
else
	fail "no zombie to refuse: pid ${zombie:-?} is not in state Z"
fi

# --- a --spool that cannot work is refused before the window ---
for bad in "$work/no/such/dir/spool.db" "$db"; do
	start=$(now_ms)
	"$topdown" collect --pid "$sleeper" --duration 30s --db "$db" --spool "$bad" >/dev/null 2>"$work/err"
	rc=$? elapsed=$(($(now_ms) - start))
	[ "$rc" = 2 ] && [ "$(wc -l <"$work/err")" = 1 ] && grep -q -- "--spool '$bad'" "$work/err" ||
		fail "collect --spool $bad: exit $rc, $(cat "$work/err")"
	[ "$elapsed" -lt 2000 ] || fail "collect --spool $bad took $elapsed ms to refuse"
done

# --- every target exited: the window ends there, a whole run of its true duration ---
# The target writes the time it exits; the run must end within 300 ms of it.
bash -c 'sleep 1; date +%s%N >"$1"' target "$work/exit_ns" &
short=$!
start=$(now_ms)
"$topdown" collect --pid "$short" --duration 30s --json --db "$db" >"$work/early.json" 2>"$work/err" ||
	fail "collect of a target that exits failed: $(cat "$work/err")"
elapsed=$(($(now_ms) - start))
wait "$short"
[ "$elapsed" -lt 4000 ] || fail "collect waited $elapsed ms for a target that exited after 1 s (--duration 30s)"
jq -e '.partial == false and .targets_exited == true and .duration_s > 0 and .duration_s < 1.3' \
	"$work/early.json" >/dev/null || fail "the early run is not a whole run of at most 1 s: $(jq -c '{partial, targets_exited, duration_s}' "$work/early.json")"
id=$(jq -r .run_id "$work/early.json")
"$topdown" list --json --db "$db" | jq -e --arg id "$id" --argjson exit "$(cat "$work/exit_ns")" \
	'any(.[]; .run_id == $id and .partial == false and .started_ns < $exit and
	     .ended_ns >= $exit and .ended_ns - $exit < 300000000)' >/dev/null ||
	fail "the stored early run does not end when its target exited ($(cat "$work/exit_ns")): $("$topdown" list --json --db "$db" | jq -c --arg id "$id" '.[] | select(.run_id == $id) | {started_ns, ended_ns, partial}')"

# The same for --process: the name's last process exits after 1 s.
cp "$(command -v sleep)" "$work/${comm}p"
"$work/${comm}p" 1 &
named=$!
start=$(now_ms)
"$topdown" collect --process "${comm}p" --duration 30s --json --db "$db" >"$work/early.json" 2>"$work/err" ||
	fail "collect --process of a target that exits failed: $(cat "$work/err")"
elapsed=$(($(now_ms) - start))
wait "$named"
[ "$elapsed" -lt 4000 ] || fail "collect --process waited $elapsed ms for a name whose process exited after 1 s"
jq -e '.partial == false and .targets_exited == true and .duration_s < 1.6' "$work/early.json" >/dev/null ||
	fail "the early --process run is not whole: $(jq -c '{partial, targets_exited, duration_s}' "$work/early.json")"

# --- SIGHUP and SIGQUIT: stopped as SIGTERM stops it, stored and partial ---
for sig in HUP QUIT TERM; do
	before=$(count_runs)
	"$topdown" collect --pid "$sleeper" --duration 60s --db "$db" >"$work/out" 2>"$work/err" &
	collector=$!
	sleep 1.5
	kill -s "$sig" "$collector"
	wait "$collector"
	rc=$?
	[ "$rc" = 0 ] || fail "SIG$sig: collect exited $rc: $(cat "$work/err")"
	grep -q "partial: stopped early" "$work/out" || fail "SIG$sig: the run is not marked partial: $(head -1 "$work/out")"
	[ "$(count_runs)" = $((before + 1)) ] || fail "SIG$sig: no run stored"
done

# --- a busy store: the table, the run in the spool, then in the store exactly once ---
# python3 holds the database's write lock until unlock_store.
lock_store() {
	rm -f "$work/locked"
	python3 - "$db" "$work/locked" <<'EOF' &
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("BEGIN EXCLUSIVE")
db.execute("INSERT INTO schema_migrations (version, applied_ns) VALUES (-1, 0)")
open(sys.argv[2], "w").close()
time.sleep(120)
EOF
	locker=$!
	children+=("$locker")
	for _ in $(seq 200); do [ -e "$work/locked" ] && break; sleep 0.05; done
	[ -e "$work/locked" ] || fail "python3 did not lock the database"
}
unlock_store() {
	kill "$locker"
	wait "$locker" 2>/dev/null
}
"$out/td-workload" --duration-ms 60000 >/dev/null 2>&1 &
workload=$!
children+=("$workload")
lock_store
before=$(count_runs)
start=$(now_ms)
"$topdown" collect --pid "$workload" --duration 500ms --db "$db" --spool "$spool" >"$work/out" 2>"$work/err"
rc=$? elapsed=$(($(now_ms) - start))
[ "$rc" = 0 ] || fail "collect with a busy store exited $rc: $(cat "$work/err")"
grep -q "^run .* waits in the spool $spool$" "$work/out" || fail "collect did not say the run waits in the spool: $(head -1 "$work/out")"
grep -q "^spinner " "$work/out" || fail "collect with a busy store printed no table: $(cat "$work/out")"
grep -q "database is locked" "$work/err" || fail "collect did not say why the store did not take the run: $(cat "$work/err")"
grep -q "the next collect or agent start moves it there" "$work/err" || fail "collect did not say where the run goes next: $(cat "$work/err")"
[ "$elapsed" -lt 14000 ] || fail "collect waited $elapsed ms for the busy store (its bound is 10 s)"
spooled=$(sed -n 's/^run \([^ ]*\) waits in the spool.*/\1/p' "$work/out")
[ "$(count_runs)" = "$before" ] || fail "the run reached the locked store"
[ "$("$topdown" list --json --db "$spool" | jq length)" = 1 ] || fail "the spool does not hold the run"
unlock_store
# The next collect moves it, and stores its own.
"$topdown" collect --pid "$sleeper" --duration 300ms --json --db "$db" --spool "$spool" >"$work/next.json" 2>"$work/err" ||
	fail "the collect after the lock failed: $(cat "$work/err")"
grep -q "1 earlier run moved from the spool $spool into the store" "$work/err" ||
	fail "the next collect did not say it moved the spooled run: $(cat "$work/err")"
jq -e --arg db "$db" '.stored_in == $db and .spooled_in == null' "$work/next.json" >/dev/null ||
	fail "the next collect's run is not in the store: $(jq -c '{stored_in, spooled_in}' "$work/next.json")"
"$topdown" collect --pid "$sleeper" --duration 300ms --db "$db" --spool "$spool" >/dev/null 2>"$work/err" ||
	fail "a third collect failed: $(cat "$work/err")"
! grep -q "moved from the spool" "$work/err" || fail "a third collect moved runs again: $(cat "$work/err")"
[ "$("$topdown" list --json --db "$db" | jq --arg id "$spooled" '[.[] | select(.run_id == $id)] | length')" = 1 ] ||
	fail "the spooled run $spooled is not in the store exactly once"
[ "$(count_runs)" = $((before + 3)) ] || fail "the store holds $(count_runs) runs, not $((before + 3))"
[ "$("$topdown" list --json --db "$spool" | jq length)" = 0 ] || fail "the spool still holds runs"

# The agent moves what collect left in the spool too.
lock_store
"$topdown" collect --pid "$sleeper" --duration 200ms --db "$db" --spool "$spool" >"$work/out" 2>"$work/err" ||
	fail "collect with a busy store, again, failed: $(cat "$work/err")"
spooled=$(sed -n 's/^run \([^ ]*\) waits in the spool.*/\1/p' "$work/out")
[ -n "$spooled" ] || fail "the second run with a busy store is not in the spool: $(head -1 "$work/out")"
unlock_store
"$topdown" agent --system-wide --every 1s --windows 1 --db "$db" --spool "$spool" >"$work/agent.log" 2>&1 ||
	fail "the agent failed: $(cat "$work/agent.log")"
[ "$("$topdown" list --json --db "$db" | jq --arg id "$spooled" '[.[] | select(.run_id == $id)] | length')" = 1 ] ||
	fail "the agent did not move the spooled run $spooled into the store exactly once"
[ "$("$topdown" list --json --db "$spool" | jq length)" = 0 ] || fail "the spool still holds runs after the agent"

if [ ${#failures[@]} -gt 0 ]; then
	echo "${#failures[@]} failed"
	exit 1
fi
echo "collect: --pid names the process, kernel threads and zombies refused, early end, busy store spooled, HUP and QUIT partial"
