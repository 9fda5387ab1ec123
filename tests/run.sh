#!/usr/bin/env bash
# Runs the whole suite: every cmocka test binary (plain build, then the
# ASan+UBSan build), the unit tests again under valgrind, a short run of
# every fuzz target, the MCP clients, the flame graph SVG in headless
# Chromium, the documentation and packaging
# checks, the arm64 build's unit tests under qemu-user, and the kernel lab
# (tests/vm/lab.sh: Debian's kernels under qemu-system). The last line is the summary: "N passed, N failed, N skipped".
#
# usage: tests/run.sh [BUILD_DIR [SECTION...]]   (run from the project root; make test does)
#   SECTION: unit asan valgrind fuzz mcp browser packaging arm64 vm; all of them when none is named
set -u
out=${1:-build}
shift $(($# > 0))
sections=" ${*:-unit asan valgrind fuzz mcp browser packaging arm64 vm} "
passed=0 failed=0 skipped=0
failures=()

want() { [[ $sections == *" $1 "* ]]; }

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

if want unit; then
	echo "== unit and end-to-end tests ($out)"
	for t in "$out"/tests/test_*; do
		[ -x "$t" ] && run_binary "$(basename "$t")" "$t"
	done
	run_check "pprof, second decoder" tests/check_pprof.sh "$out"
	run_check "I/O faults and kill -9 (short form of make test-faults)" tests/check_faults.sh "$out"
	run_check "import: impossible counts refused" tests/check_edge_import.sh "$out"
fi

if want asan; then
	echo "== the same tests under ASan+UBSan ($out/asan), the binary they run too"
	export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
	for t in "$out"/asan/tests/test_*; do
		[ -x "$t" ] && TD_TOPDOWN="$out/asan/topdown" TD_WORKLOAD="$out/td-workload" \
			run_binary "asan/$(basename "$t")" "$t"
	done
fi

if want valgrind; then
	echo "== unit tests under valgrind"
	for t in "$out"/tests/test_*; do
		case $t in *_e2e) continue ;; esac # BPF syscalls are beyond valgrind's models
		[ -x "$t" ] && run_binary "valgrind/$(basename "$t")" \
			valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite "$t"
	done
fi

if want fuzz; then
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
fi

if want mcp; then
	echo "== MCP clients: the official SDK and the Inspector (tests/mcp, node --test), the conformance suite"
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
	# The official conformance suite on its own Node 22 (tests/conformance:
	# run.sh does npm ci there when node_modules is missing, skips without npm).
	run_check "MCP conformance suite, HTTP (tests/conformance)" tests/conformance/run.sh "$out"
	run_check "MCP over HTTPS (curl)" tests/check_mcp_tls.sh "$out"
	run_check "MCP over HTTP: a client leaving mid-stream" tests/check_mcp_disconnect.sh "$out"
fi

if want browser; then
	echo "== the flame graph SVG in headless Chromium (tests/browser, node --test)"
	browser_log=$(mktemp)
	if ! command -v npm >/dev/null; then
		echo "[  SKIPPED ] tests/browser: node and npm are not installed"
		skipped=$((skipped + 1))
	elif [ ! -x "${TD_CHROMIUM:-/usr/bin/chromium}" ]; then
		echo "[  SKIPPED ] tests/browser: no ${TD_CHROMIUM:-/usr/bin/chromium} (make deps installs Debian's chromium)"
		skipped=$((skipped + 1))
	elif [ ! -d tests/browser/node_modules ] && ! (cd tests/browser && npm ci --no-audit --no-fund) >"$browser_log" 2>&1; then
		cat "$browser_log"
		echo "[  FAILED  ] tests/browser: npm ci could not install the pinned playwright-core"
		failed=$((failed + 1))
		failures+=("tests/browser")
	else
		(export TD_BUILD; TD_BUILD=$(realpath "$out")
		 cd tests/browser && node --test --test-reporter=tap) >"$browser_log" 2>&1
		rc=$?
		grep -E '^(not )?ok |^# (tests|pass|fail|skipped)' "$browser_log"
		grep -q '^# fail 0' "$browser_log" || cat "$browser_log"
		n=$(sed -n 's/^# pass //p' "$browser_log"); passed=$((passed + ${n:-0}))
		n=$(sed -n 's/^# fail //p' "$browser_log"); failed=$((failed + ${n:-0}))
		n=$(sed -n 's/^# skipped //p' "$browser_log"); skipped=$((skipped + ${n:-0}))
		if [ $rc -ne 0 ]; then
			grep -q '^# fail [1-9]' "$browser_log" || failed=$((failed + 1))
			failures+=("tests/browser")
		fi
	fi
	rm -f "$browser_log"
fi

if want packaging; then
	echo "== layers, documentation and packaging"
	run_check "README demo, fresh HOME" tests/check_demo.sh "$out"
	run_check "README examples" tests/check_readme.sh "$out"
	run_check "top under tmux" tests/check_top.sh "$out"
	run_check "progress on a terminal" tests/check_progress.sh "$out"
	run_check "the store at the edge: modes, selection, node names" tests/check_edge_store.sh "$out"
	run_check "output: full stdout, --output kinds, escaped names" tests/check_edge_output.sh "$out"
	run_check "collect: targets and where the run goes" tests/check_edge_collect.sh "$out"
	run_check "layers" tests/check_layers.sh
	run_check "man page" tests/check_cli_docs.sh man "$out"
	run_check "bash completion" tests/check_cli_docs.sh completion "$out"
	run_check "bad values at the command line's edge" tests/check_edge_options.sh "$out"
	run_check "make install" tests/check_packaging.sh install "$out"
	run_check "deb package" tests/check_packaging.sh deb "$out"
	run_check "rpm spec" tests/check_packaging.sh rpm "$out"
fi

if want arm64; then
	# tests/test_*_e2e* load BPF into this kernel: they are not built for arm64.
	# Helpers the tests start (tests/pg_server.sh, bash) are host programs; the
	# topdown binary they run is the arm64 one, through qemu (topdown-qemu).
	echo "== arm64 unit tests under qemu-user ($out/arm64)"
	qemu=${QEMU_AARCH64:-qemu-aarch64}
	ran=0
	for t in "$out"/arm64/tests/test_*; do
		[ -x "$t" ] || continue
		TD_TOPDOWN="$out/arm64/topdown-qemu" TD_TOPDOWN_BINARY="$out/arm64/topdown" run_binary "arm64/$(basename "$t")" "$qemu" -L "$out/arm64/sysroot" "$t"
		ran=$((ran + 1))
	done
	if [ $ran -eq 0 ]; then
		# make test cross-builds them on any host but an arm64 one, whose own build is arm64
		echo "[  SKIPPED ] arm64: no test binaries in $out/arm64/tests (make arm64 builds them)"
		skipped=$((skipped + 1))
	fi
fi

if want vm; then
	# Debian's own kernels under qemu (TCG): tests/vm/lab.sh downloads them once into $out/vm.
	echo "== the kernel lab: BPF end-to-end on Debian's kernels under qemu"
	vm_lab() { # label, env..., lab.sh arguments...
		local label=$1 vm_log
		shift
		vm_log=$(mktemp)
		if env "$@" >"$vm_log" 2>&1; then
			grep '^| [a-z]' "$vm_log"
			echo "[       OK ] kernel lab, $label: $(tail -1 "$vm_log")"
			passed=$((passed + 1))
		else
			cat "$vm_log"
			echo "[  FAILED  ] kernel lab, $label"
			failed=$((failed + 1))
			failures+=("kernel lab, $label")
		fi
		rm -f "$vm_log"
	}
	if [ "$(id -u)" -ne 0 ]; then
		echo "[  SKIPPED ] kernel lab: needs root (apt-get download, and the guests load BPF as root)"
		skipped=$((skipped + 1))
	else
		vm_lab x86-64 tests/vm/lab.sh "$out"
		if [ -x "$out/arm64/topdown" ]; then
			vm_lab "arm64 on Neoverse N1" LAB_ARCH=arm64 tests/vm/lab.sh "$out" ${LAB_ARM64_SUITES:-bookworm}
			# make test-vm-full: the Neoverse CPUs only QEMU 10 emulates, their PMU checks on 6.1
			[ -n "${LAB_QEMU10_CPUS:-}" ] &&
				vm_lab "arm64 on $LAB_QEMU10_CPUS (QEMU 10)" LAB_ARCH=arm64 LAB_CPUS="$LAB_QEMU10_CPUS" \
					LAB_CHECKS=pmu tests/vm/lab.sh "$out" bookworm
		else # make test cross-builds it on any host but an arm64 one
			echo "[  SKIPPED ] kernel lab, arm64: no $out/arm64/topdown (make arm64 builds it)"
			skipped=$((skipped + 1))
		fi
		# The agent's unit under a real systemd (make test-vm-full): its first
		# run debootstraps a Debian 12 root, and its boot is longer than the
		# busybox guests', beyond the lab's budget in make test.
		[ -n "${LAB_SYSTEMD:-}" ] && vm_lab "systemd guest (Debian 12)" tests/vm/systemd.sh "$out"
	fi
fi

[ ${#failures[@]} -gt 0 ] && echo "failed: ${failures[*]}"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
