#!/bin/sh
# /init of the kernel lab's guests (tests/vm/lab.sh): the core BPF
# end-to-end checks on this kernel, each one line
#   TD-RESULT NAME ok|fail DETAIL
# then "TD-RESULT done" and power off.
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
export PATH=/bin:/lab HOME=/root

result() { echo "TD-RESULT $*"; }
result kernel ok "$(uname -r)"

# In the JSON topdown prints, one "key": value pair per line.
json_number() { sed -n "s/^  \"$1\": \([0-9.]*\),*$/\1/p" "$2" | head -1; }
json_text() { sed -n "s/^  \"$1\": \"\([^\"]*\)\",*$/\1/p" "$2" | head -1; }

# --process with short-lived threads, in the flavour given (tp_btf, raw_tp).
check_process() {
	flavour=$1
	# short threads two at a time for longer than any window: some start and end in it, however
	# long the program load takes under emulation
	td-workload --duration-ms 60000 --io-threads 2 --short-threads 100000 --short-work-us 1000 >/dev/null 2>&1 &
	workload=$!
	sleep 0.5
	if [ "$flavour" = raw_tp ]; then force=1; else force=0; fi
	TOPDOWN_FORCE_RAW_TP=$force topdown collect --process td-workload --duration 2s --json \
		--db /tmp/lab.db >/tmp/collect.json 2>/tmp/collect.err
	rc=$?
	kill $workload 2>/dev/null
	wait $workload 2>/dev/null
	attach=$(json_text attach /tmp/collect.json)
	dropped=$(json_number dropped /tmp/collect.json)
	threads=$(grep -c '"tid":' /tmp/collect.json)
	exited=$(grep -c '"exited": true' /tmp/collect.json)
	# run-queue wait is the kernel's sched_info.run_delay: five threads on two CPUs wait
	runq=$(grep -o '"runq_wait_ns": [0-9]*' /tmp/collect.json | awk '{s += $2} END {print s + 0}')
	if [ $rc -ne 0 ]; then
		result "process_$flavour" fail "exit $rc: $(head -c 200 /tmp/collect.err | tr '\n' ' ')"
	elif [ "$attach" != "$flavour" ]; then
		result "process_$flavour" fail "loaded $attach programs, not $flavour"
	elif [ "$dropped" != 0 ] || [ "$exited" -lt 10 ] || [ "$threads" -lt 10 ]; then
		result "process_$flavour" fail "$threads threads, $exited exited, $dropped dropped:" \
			"$(grep '"comm":' /tmp/collect.json | tr -d ' \n' | head -c 300)"
	elif [ "$runq" = 0 ]; then
		result "process_$flavour" fail "$threads threads, no run-queue wait in any (sched_info not accounted?)"
	else
		result "process_$flavour" ok "$threads threads, $exited exited, 0 dropped, run-queue wait ${runq} ns"
	fi
}

check_system_wide() {
	topdown collect --system-wide --duration 1s --json --db /tmp/lab.db >/tmp/sw.json 2>/tmp/sw.err
	rc=$?
	threads=$(grep -c '"tid":' /tmp/sw.json)
	if [ $rc -eq 0 ] && [ "$threads" -ge 2 ]; then
		result system_wide ok "$threads threads"
	else
		result system_wide fail "exit $rc, $threads threads: $(head -c 200 /tmp/sw.err | tr '\n' ' ')"
	fi
}

# Windows of 1 s, then SIGTERM: a clean exit, the window it cuts stored as partial.
check_agent() {
	td-workload --duration-ms 8000 --io-threads 1 >/dev/null 2>&1 &
	workload=$!
	sleep 0.3
	topdown agent --process td-workload --every 1s --db /tmp/agent.db --spool /tmp/spool.db 2>/tmp/agent.err &
	agent=$!
	# a whole window first, however slow the emulation: then SIGTERM cuts the next one
	for _ in $(seq 120); do
		[ "$(topdown list --db /tmp/agent.db --json 2>/dev/null | grep -c '"run_id"')" -ge 1 ] && break
		sleep 0.5
	done
	sleep 0.5
	kill -TERM $agent
	wait $agent
	rc=$?
	kill $workload 2>/dev/null
	wait $workload 2>/dev/null
	topdown list --db /tmp/agent.db --json >/tmp/runs.json 2>>/tmp/agent.err
	runs=$(grep -c '"run_id"' /tmp/runs.json)
	partial=$(grep -c '"partial": true' /tmp/runs.json)
	# A SIGTERM that lands between two windows leaves no partial one: the
	# host's tests/test_agent_e2e.c pins the partial window down exactly.
	if [ $rc -eq 0 ] && [ "$runs" -ge 2 ] && [ "$partial" -le 1 ]; then
		result agent_sigterm ok "$runs windows stored, $partial partial, exit 0"
	else
		result agent_sigterm fail "exit $rc, $runs runs, $partial partial: $(head -c 200 /tmp/agent.err | tr '\n' ' ')"
	fi
}

# The emulated Neoverse's PMU (arm64 guests): its Top-Down model detected
# from the MIDR, and its counters opened and counting.
check_pmu() {
	td-workload --duration-ms 60000 --io-threads 1 >/dev/null 2>&1 &
	workload=$!
	sleep 0.5
	topdown collect --process td-workload --duration 1s --json --db /tmp/lab.db >/tmp/pmu.json 2>/tmp/pmu.err
	rc=$?
	kill $workload 2>/dev/null
	wait $workload 2>/dev/null
	model=$(sed -n 's/^    "tma_model": "\(.*\)",*$/\1/p' /tmp/pmu.json)
	pmu=$(sed -n 's/^    "pmu_name": "\(.*\)",*$/\1/p' /tmp/pmu.json)
	if [ $rc -eq 0 ] && [ -n "$model" ] && [ "$model" != none ]; then
		result pmu_tma ok "model $model on PMU $pmu"
	else
		result pmu_tma fail "exit $rc, model '$model', PMU '$pmu': $(head -c 200 /tmp/pmu.err | tr '\n' ' ')"
	fi
}

# Truth on the emulated PMU (one vCPU, -icount shift=0: instructions count
# exactly): a thread whose loop retires a known 2N instructions, counted
# per thread through topdown's BPF path. What it adds beyond 2N is its
# naming, recording and kernel entries (timer ticks): within 1%.
check_truth() {
	n=50000000
	mkfifo /tmp/go
	td-workload --duration-ms 500 --io-threads 0 --wait-start --known-loop $n </tmp/go >/dev/null 2>&1 &
	workload=$!
	exec 3>/tmp/go
	topdown collect --process td-workload --events instructions --duration 600s --json \
		--db /tmp/lab.db >/tmp/truth.json 2>/tmp/truth.err &
	collector=$!
	# The collector's BPF objects open, then time for it to attach (seconds
	# under emulation); a release before it would show as a count short of 2N.
	for _ in $(seq 120); do
		ls -l /proc/$collector/fd 2>/dev/null | grep -q 'bpf' && break
		sleep 0.5
	done
	sleep 3
	echo g >&3
	exec 3>&-
	wait $workload
	kill -INT $collector
	wait $collector
	counted=$(awk '/"comm": "known_loop"/ {f = 1} f && /"instructions":/ {gsub(/[",]/, ""); print $2; exit}' /tmp/truth.json)
	want=$((2 * n))
	if [ -n "$counted" ] && awk -v c="$counted" -v w=$want 'BEGIN {d = (c - w) / w; exit !(d >= 0 && d <= 0.01)}'; then
		result inst_retired_truth ok "known_loop: $counted counted, $want in its loop"
	else
		result inst_retired_truth fail "known_loop: '$counted' counted, $want in its loop: $(head -c 200 /tmp/truth.err | tr '\n' ' ')"
	fi
}

if [ -r /sys/kernel/btf/vmlinux ]; then
	[ "$(uname -m)" = aarch64 ] && check_truth
	[ "$(uname -m)" = aarch64 ] && check_pmu
	check_process tp_btf
	check_process raw_tp
	check_system_wide
	check_agent
else
	result btf fail "this kernel has no /sys/kernel/btf/vmlinux"
fi
result done
poweroff -f
