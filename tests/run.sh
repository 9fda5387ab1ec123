#!/usr/bin/env bash
# Runs the whole suite: every cmocka test binary (plain build, then the
# ASan+UBSan build), the unit tests again under valgrind, and a short run
# of every fuzz target. The last line is the summary: "N passed, N failed, N skipped".
#
# usage: tests/run.sh [BUILD_DIR]     (run from the project root; make test does)
set -u
out=${1:-build}
passed=0 failed=0 skipped=0
failures=()

# cmocka prints "[  PASSED  ] N test(s)." and friends at the end of a binary.
count_cmocka() {
	local log=$1 n
	n=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1); passed=$((passed + ${n:-0}))
	n=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -1); failed=$((failed + ${n:-0}))
	n=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -1); skipped=$((skipped + ${n:-0}))
}

run_binary() { # label, command...
	local label=$1 log rc
	shift
	log=$(mktemp)
	"$@" >"$log" 2>&1
	rc=$?
	cat "$log"
	count_cmocka "$log"
	if [ $rc -ne 0 ] && ! grep -q '^\[  FAILED  \]' "$log"; then
		# crashed or failed before cmocka could report: count it as one failure
		failed=$((failed + 1))
	fi
	[ $rc -ne 0 ] && failures+=("$label")
	rm -f "$log"
}

echo "== unit and end-to-end tests ($out)"
for t in "$out"/tests/test_*; do
	[ -x "$t" ] && run_binary "$(basename "$t")" "$t"
done

echo "== the same tests under ASan+UBSan ($out/asan)"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "$out"/asan/tests/test_*; do
	[ -x "$t" ] && run_binary "asan/$(basename "$t")" "$t"
done

echo "== unit tests under valgrind"
for t in "$out"/tests/test_*; do
	case $t in *_e2e) continue ;; esac # BPF syscalls are beyond valgrind's models
	[ -x "$t" ] && run_binary "valgrind/$(basename "$t")" \
		valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$t"
done

echo "== fuzz smoke (${FUZZ_SECONDS:-10}s each)"
for f in "$out"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	corpus=$(mktemp -d)
	if "$f" -max_total_time="${FUZZ_SECONDS:-10}" -rss_limit_mb=2048 "$corpus" >"$corpus.log" 2>&1; then
		echo "[       OK ] $(basename "$f"): $(grep -o 'Done [0-9]* runs' "$corpus.log" | tail -1)"
		passed=$((passed + 1))
	else
		tail -30 "$corpus.log"
		echo "[  FAILED  ] $(basename "$f")"
		failed=$((failed + 1))
		failures+=("$(basename "$f")")
	fi
	rm -rf "$corpus" "$corpus.log"
done

[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
