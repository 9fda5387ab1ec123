#!/usr/bin/env bash
# Finds flaky tests before CI does: runs the timing-sensitive end-to-end
# test binaries N times, in the plain and the ASan build, and prints how
# often each test failed. With LOAD=1, busy loops (one per CPU) share the
# CPUs with them, as on a busy CI host; each loop is bounded in time and
# ended by its own pid when the runs are done.
#
# usage: tests/repeat.sh BUILD_DIR N [BINARY...]   (make test-repeat N=20)
#   BINARY: test_collector_e2e test_agent_e2e test_cli_e2e (the default: all three)
#   TD_TEST_FILTER=PATTERN  only the tests whose names match (tests/e2e.h)
#   LOAD=1                  busy loops beside the runs
# The last line is "N passed, N failed": a run of a binary passes when
# every test in it passed.
set -u
out=${1:?usage: tests/repeat.sh BUILD_DIR N [BINARY...]}
n=${2:?usage: tests/repeat.sh BUILD_DIR N [BINARY...]}
shift 2
binaries=${*:-test_collector_e2e test_agent_e2e test_cli_e2e}
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "repeat: N must be a whole number above 0, not '$n'" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "repeat: the end-to-end tests need root (BPF); run as root" >&2; exit 2; }
for b in $binaries; do
	for build in "$out" "$out/asan"; do
		[ -x "$build/tests/$b" ] || { echo "repeat: no $build/tests/$b; make test builds it" >&2; exit 2; }
	done
done

loads=()
stop_load() {
	for pid in "${loads[@]}"; do kill "$pid" 2>/dev/null; done
	for pid in "${loads[@]}"; do wait "$pid" 2>/dev/null; done
	loads=()
}
trap stop_load EXIT
if [ "${LOAD:-0}" = 1 ]; then
	for _ in $(seq "$(nproc)"); do
		timeout 3h sh -c 'while :; do :; done' &
		loads+=($!)
	done
	echo "load: ${#loads[@]} busy loops (pids ${loads[*]})"
fi

declare -A fails runs
passed=0 failed=0
log=$(mktemp)
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
for i in $(seq "$n"); do
	for b in $binaries; do
		for build in "$out" "$out/asan"; do
			label="${build#"$out"}"; label="${label#/}"; label="${label:-plain}/$b"
			TD_TOPDOWN="$build/topdown" TD_WORKLOAD="$out/td-workload" "$build/tests/$b" >"$log" 2>&1
			rc=$?
			runs[$label]=$(( ${runs[$label]:-0} + 1 ))
			# every test that ran, so a test that never failed shows 0
			while read -r t; do
				fails["$label $t"]=${fails["$label $t"]:-0}
			done < <(sed -n 's/^\[ RUN      \] \(.*\)/\1/p' "$log")
			while read -r t; do
				fails["$label $t"]=$(( ${fails["$label $t"]:-0} + 1 ))
			done < <(sed -n 's/^\[  FAILED  \] \(test_[a-z0-9_]*\)$/\1/p' "$log" | sort -u)
			if [ $rc -eq 0 ]; then
				passed=$((passed + 1))
			else
				failed=$((failed + 1))
				grep -q '^\[  FAILED  \]' "$log" || fails["$label (crashed)"]=$(( ${fails["$label (crashed)"]:-0} + 1 ))
				echo "round $i: $label failed:"; grep -E '^\[  (ERROR|FAILED) |^\[   LINE   \]|off by' "$log" | head -20
			fi
		done
	done
	echo "round $i/$n done"
done
rm -f "$log"

echo
echo "| build/binary | test | failed | runs |"
echo "| --- | --- | ---: | ---: |"
for key in "${!fails[@]}"; do
	echo "| ${key%% *} | ${key#* } | ${fails[$key]} | ${runs[${key%% *}]} |"
done | sort
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
