#!/usr/bin/env bash
# Runs the whole suite: every cmocka test binary (plain build, then the
# ASan+UBSan build), the unit tests again under valgrind, a short run of
# every fuzz target, the MCP clients, and the documentation and packaging
# checks. The last line is the summary: "N passed, N failed, N skipped".
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

# A shell check: exit 0 passes, 77 skips (its last line says why), else fails.
run_check() { # label, command...
	local label=$1 log rc
	shift
	log=$(mktemp)
	"$@" >"$log" 2>&1
	rc=$?
	case $rc in
	0) echo "[       OK ] $label: $(tail -1 "$log")"; passed=$((passed + 1)) ;;
	77) echo "[  SKIPPED ] $label: $(tail -1 "$log")"; skipped=$((skipped + 1)) ;;
	*) cat "$log"; echo "[  FAILED  ] $label"; failed=$((failed + 1)); failures+=("$label") ;;
	esac
	rm -f "$log"
}

echo "== unit and end-to-end tests ($out)"
for t in "$out"/tests/test_*; do
	[ -x "$t" ] && run_binary "$(basename "$t")" "$t"
done

echo "== the same tests under ASan+UBSan ($out/asan), the binary they run too"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for t in "$out"/asan/tests/test_*; do
	[ -x "$t" ] && TD_TOPDOWN="$out/asan/topdown" TD_WORKLOAD="$out/td-workload" \
		run_binary "asan/$(basename "$t")" "$t"
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

echo "== MCP clients: the official SDK and the Inspector (tests/mcp, node --test)"
mcp_log=$(mktemp)
if ! command -v npm >/dev/null; then
	echo "[  SKIPPED ] tests/mcp: node and npm are not installed"
	skipped=$((skipped + 1))
elif [ ! -d tests/mcp/node_modules ] && ! (cd tests/mcp && npm ci --no-audit --no-fund) >"$mcp_log" 2>&1; then
	cat "$mcp_log"
	echo "[  FAILED  ] tests/mcp: npm ci could not install the pinned clients"
	failed=$((failed + 1))
	failures+=("tests/mcp")
else
	(export TD_TOPDOWN; TD_TOPDOWN=$(realpath "$out/topdown")
	 cd tests/mcp && node --test --test-reporter=tap) >"$mcp_log" 2>&1
	rc=$?
	grep -E '^(not )?ok |^# (tests|pass|fail|skipped)' "$mcp_log"
	grep -q '^# fail 0' "$mcp_log" || cat "$mcp_log"
	n=$(sed -n 's/^# pass //p' "$mcp_log"); passed=$((passed + ${n:-0}))
	n=$(sed -n 's/^# fail //p' "$mcp_log"); failed=$((failed + ${n:-0}))
	n=$(sed -n 's/^# skipped //p' "$mcp_log"); skipped=$((skipped + ${n:-0}))
	if [ $rc -ne 0 ]; then
		grep -q '^# fail [1-9]' "$mcp_log" || failed=$((failed + 1))
		failures+=("tests/mcp")
	fi
fi
rm -f "$mcp_log"

echo "== documentation and packaging"
run_check "man page" tests/check_cli_docs.sh man
run_check "bash completion" tests/check_cli_docs.sh completion
run_check "make install" tests/check_packaging.sh install "$out"
run_check "deb package" tests/check_packaging.sh deb "$out"
run_check "rpm spec" tests/check_packaging.sh rpm "$out"

[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
