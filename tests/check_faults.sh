#!/usr/bin/env bash
# Faults, the short form (make test-faults runs the long one; docs/FAULTS.md
# has its figures): first the store checker (tests/faults/whole.sql) must
# see each kind of half-stored run in hand-broken copies of a store; then
# I/O and memory faults under libfiu across import, gc, export, collect
# and agent (tests/faults/io.sh), one failed allocation at points spread
# over import, export and collect (tests/faults/oom.sh), and SIGKILL at random moments and
# inside writes of collect and agent (tests/faults/crash.sh). Each run
# prints its seed: tests/faults/io.sh BUILD RUNS SEED replays it.
#
# usage: tests/check_faults.sh [BUILD_DIR]
set -u
out=${1:-build}
here=$(dirname "$0")
source "$here/faults/lib.sh"
faults_require

# ---- the checker sees what it is for ----
good="$scratch/good.db"
"$topdown" import "$here/data/import/neoverse-v2-l1-interval.csv" --cpu-model neoverse-v2 --label a=b --db "$good" >/dev/null &&
	"$topdown" import "$here/data/import/skx-l1.csv" --cpu-model skx --db "$good" >/dev/null ||
	{ echo "cannot import the checker's store"; exit 1; }
sqlite3 "$good" 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null
check_store "a store written whole" "$good"
[ $problems -eq 0 ] || { echo "the checker finds problems in a whole store"; exit 1; }
sqlite3 "$good" 'SELECT count(*) FROM intervals' | grep -qv '^0$' ||
	{ echo "the checker's store has no intervals to break"; exit 1; }
broken=0
breaks=(
	"a whole-run thread row and its counters gone|DELETE FROM counters WHERE (run_pk, interval_seq, tid) IN (SELECT run_pk, interval_seq, tid FROM threads WHERE interval_seq = -1 LIMIT 1); DELETE FROM threads WHERE (run_pk, interval_seq, tid) IN (SELECT run_pk, interval_seq, tid FROM threads WHERE interval_seq = -1 LIMIT 1)"
	"an interval's thread rows gone|DELETE FROM counters WHERE interval_seq = (SELECT max(seq) FROM intervals); DELETE FROM threads WHERE interval_seq = (SELECT max(seq) FROM intervals)"
	"the counters of one thread gone|DELETE FROM counters WHERE (run_pk, interval_seq, tid) IN (SELECT run_pk, interval_seq, tid FROM threads LIMIT 1)"
	"an interval row gone|DELETE FROM intervals WHERE seq = (SELECT max(seq) FROM intervals)"
	"a run_labels row gone|DELETE FROM run_labels WHERE key = 'a'"
	"the last half of the metric rows gone|DELETE FROM metrics WHERE ordinal >= (SELECT count(*) / 2 FROM metrics m WHERE m.run_pk = metrics.run_pk)"
	"the last tree gone|DELETE FROM metrics WHERE run_pk = 1 AND ordinal >= (SELECT count(*) FROM metrics WHERE run_pk = 1) - 5"
	"the runs row gone, its children left|PRAGMA foreign_keys = OFF; DELETE FROM runs WHERE pk = 1"
	"a table of the schema missing|DROP TABLE metrics"
	"labels that are not JSON|UPDATE runs SET labels = '{\"arch\":\"x86_64\",\":\"6.18\"}' WHERE pk = 1"
	"a counter of an event the run lacks|UPDATE counters SET event = 99 WHERE (run_pk, interval_seq, tid, event) IN (SELECT run_pk, interval_seq, tid, event FROM counters LIMIT 1)"
)
for b in "${breaks[@]}"; do
	cp "$good" "$scratch/broken.db"
	sqlite3 "$scratch/broken.db" "PRAGMA foreign_keys = OFF; ${b#*|}" || { echo "cannot break: ${b%%|*}"; exit 1; }
	before=$problems
	check_store "$(printf '%s' "${b%%|*}")" "$scratch/broken.db" >/dev/null
	if [ $problems -eq $before ]; then
		echo "the checker misses: ${b%%|*}"
		exit 1
	fi
	broken=$((broken + 1))
done
problems=0
echo "the checker finds all $broken kinds of half-stored runs"

# ... and so does the judge of a run's end: a hang, a crash, two lines,
# a silent failure; one line and a non-zero exit passes.
judged=0
for bad in "sleep 30" "kill -SEGV \$\$" "echo one >&2; echo two >&2; exit 1" "exit 1"; do
	FAULT_TIMEOUT=1 faulted posix/io/rw/write none sh -c "$bad" 2>/dev/null
	if FAULT_TIMEOUT=1 judge_exit "$bad" >/dev/null; [ $? -ne 2 ]; then
		echo "the judge lets pass: $bad"
		exit 1
	fi
	judged=$((judged + 1))
done
faulted posix/io/rw/write none sh -c 'echo "topdown x: cannot; do this" >&2; exit 1'
judge_exit "one line"; [ $? -eq 1 ] || { echo "the judge refuses one line and exit 1"; exit 1; }
problems=0
echo "the judge sees all $judged kinds of bad ends"

# ---- faults ----
commands="import gc export"
if [ "$(id -u)" -eq 0 ]; then
	commands="$commands collect agent"
else
	echo "not root: collect, agent and the crash tests are left out"
fi
"$here/faults/io.sh" "$out" "${FAULT_RUNS:-8}" "${FAULT_SEED:-}" "$commands" | tee "$scratch/io.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
summary_line="$broken kinds of half-stored runs and $judged of bad ends seen; $(tail -1 "$scratch/io.log")"
"$here/faults/oom.sh" "$out" "${FAULT_OOM_RUNS:-12}" "${FAULT_SEED:-}" | tee "$scratch/oom.log"
[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
summary_line="$summary_line; $(tail -1 "$scratch/oom.log")"
if [ "$(id -u)" -eq 0 ]; then
	"$here/faults/crash.sh" "$out" "${FAULT_KILLS:-20}" "${FAULT_SEED:-}" | tee "$scratch/crash.log"
	[ "${PIPESTATUS[0]}" -eq 0 ] || exit 1
	summary_line="$summary_line; $(tail -1 "$scratch/crash.log")"
fi
echo "$summary_line"
