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

# From tests/vm/lab.sh on the kernel command line: the CPU qemu emulates,
# and which checks to run (all, or pmu: those of the emulated PMU only).
cmdline_value() { tr ' ' '\n' </proc/cmdline | sed -n "s/^$1=//p"; }
lab_cpu=$(cmdline_value td_cpu)
lab_checks=$(cmdline_value td_checks)

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
	# the workload outlives any wait below (it is killed at the end): on a
	# loaded host an 8 s one ended before the agent's second window
	td-workload --duration-ms 300000 --io-threads 1 >/dev/null 2>&1 &
	workload=$!
	sleep 0.3
	topdown agent --process td-workload --every 1s --db /tmp/agent.db --spool /tmp/spool.db 2>/tmp/agent.err &
	agent=$!
	# two whole windows first, however slow the emulation: then SIGTERM cuts the next one
	for _ in $(seq 240); do
		[ "$(topdown list --db /tmp/agent.db --json 2>/dev/null | grep -c '"run_id"')" -ge 2 ] && break
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
# from the MIDR, its counters opened and counting, and what the run says
# of what this PMU lacks: the events qemu does not implement count 0, so
# the nodes that divide by them are n/a and the run says why, once; the
# slot width comes from the model when caps/slots is 0 and the run says
# that too (Neoverse N1's cycle-based level 1 takes no slot width).
check_pmu() {
	td-workload --duration-ms 60000 --io-threads 1 >/dev/null 2>&1 &
	workload=$!
	sleep 0.5
	topdown collect --process td-workload --duration 1s --json --db /tmp/lab.db >/tmp/pmu.json 2>/tmp/pmu.err
	rc=$?
	kill $workload 2>/dev/null
	wait $workload 2>/dev/null
	model=$(sed -n 's/^    "model": "\(.*\)",*$/\1/p' /tmp/pmu.json)
	pmu=$(sed -n 's/^    "pmu": "\(.*\)",*$/\1/p' /tmp/pmu.json)
	slots=$(sed -n 's/^    "slots_per_cycle": \(.*\),$/\1/p' /tmp/pmu.json)
	# the whole-run Retiring of the first process, n/a (null) or a number
	retiring=$(awk '/"processes"/ {p = 1} p && /"node": "Retiring"/ {r = 1} r && /"value":/ {gsub(/[",]/, ""); print $2; exit}' /tmp/pmu.json)
	case $model in "$lab_cpu"*) detected=yes ;; *) detected=no ;; esac
	if [ $rc -ne 0 ] || [ $detected = no ]; then
		result pmu_tma fail "exit $rc, model '$model' on a $lab_cpu, PMU '$pmu': $(head -c 200 /tmp/pmu.err | tr '\n' ' ')"
		return
	fi
	result pmu_tma ok "model $model on PMU $pmu"
	said=$(grep -c 'in every thread' /tmp/pmu.err)
	if [ "$lab_cpu" = neoverse-n1 ]; then
		# cycle-based: stalled cycles over cycles, 0 of each stall counted: 0%, said once
		if [ "$slots" = null ] && [ "$said" = 1 ] && grep -q 'rest on STALL_FRONTEND, STALL_BACKEND, which counted 0' /tmp/pmu.err; then
			result tma_zero_counts ok "stall events count 0: said once: $(grep 'in every thread' /tmp/pmu.err | head -c 160)"
		else
			result tma_zero_counts fail "slots '$slots', said $said times: $(head -c 300 /tmp/pmu.err | tr '\n' ' ')"
		fi
	elif [ "$retiring" = null ] && [ "$said" = 1 ] && grep -q 'Retiring are n/a over the whole run' /tmp/pmu.err &&
	     grep -q 'slots per cycle, the width its definition documents' /tmp/pmu.err && [ -n "$slots" ]; then
		result tma_zero_counts ok "Retiring n/a, said once; $slots slots per cycle from the model, said: $(grep 'in every thread' /tmp/pmu.err | head -c 120)"
	else
		result tma_zero_counts fail "Retiring '$retiring', slots '$slots', said $said times: $(head -c 400 /tmp/pmu.err | tr '\n' ' ')"
	fi
}

# A collection of one of td-workload's known threads, WORKLOAD its options
# (--known-loop N: exactly 2N instructions in user space; --known-alt N
# --alt-bursts K: 2NK, in bursts with naps between), with OPTIONS (--events
# ... or --level N), every INTERVAL, released only once the collector has
# attached: /tmp/truth.json, /tmp/truth.err.
collect_known() {
	rm -f /tmp/go
	mkfifo /tmp/go
	# shellcheck disable=SC2086 # WORKLOAD is words
	td-workload --duration-ms 500 --io-threads 0 --wait-start $2 </tmp/go >/dev/null 2>&1 &
	workload=$!
	exec 3>/tmp/go
	# shellcheck disable=SC2086 # OPTIONS are words
	topdown collect --process td-workload $1 --interval $3 --duration 600s --json \
		--db /tmp/lab.db >/tmp/truth.json 2>/tmp/truth.err &
	collector=$!
	# The collector's BPF objects open, then time for it to attach (seconds
	# under emulation); a release before it would show as a count short of 2N.
	for _ in $(seq 120); do
		ls -l /proc/$collector/fd 2>/dev/null | grep -q 'bpf' && break
		sleep 0.5
	done
	sleep 3
	# a command to run once the collector counts, before the loop starts (check_held_counters)
	[ -n "${before_release:-}" ] && eval "$before_release"
	echo g >&3
	exec 3>&-
	wait $workload
	kill -INT $collector
	wait $collector
}

# "event value fraction" per line: the counters of the thread named COMM
# and their running fractions in /tmp/truth.json; and "oncpu_ns N",
# "voluntary_switches N".
thread_counters() {
	awk -v comm="$1" 'index($0, "\"comm\": \"" comm "\"") {t = 1}
	     t && /"(oncpu_ns|voluntary_switches)":/ {gsub(/[",:]/, ""); print $1, $2}
	     t && /"counters": \{/ {s = "c"; next} t && /"running_fraction": \{/ {s = "f"; next}
	     t && s != "" && /^ *\}/ {s = ""; if (++done == 2) exit}
	     t && s != "" {line = $0; sub(/^ *"/, "", line); name = line; sub(/": .*/, "", name)
			   value = line; sub(/.*": /, "", value); sub(/,$/, "", value)
			   if (s == "c") v[name] = value; else f[name] = value; order[++n] = name}
	     END {for (i = 1; i <= n; i++) if (!seen[order[i]]++) print order[i], v[order[i]], f[order[i]]}' /tmp/truth.json
}

# Truth on the emulated PMU (one vCPU, -icount shift=0: instructions count
# exactly): a thread whose loop retires a known 2N instructions, counted
# per thread through topdown's BPF path, with and without the kernel.
# What the kernel-inclusive count adds beyond 2N is the thread's naming,
# recording and kernel entries (timer ticks): within 1%. The user-only
# count (instructions:u) leaves the kernel out: glibc's thread start and
# exit and the naming are all it adds, within 0.05%, and it is below the
# kernel-inclusive one.
check_truth() {
	n=50000000
	want=$((2 * n))
	collect_known "--events instructions,instructions:u" "--known-loop $n" 1s
	counted=$(thread_counters known_loop | awk '$1 == "instructions" {print $2}')
	user=$(thread_counters known_loop | awk '$1 == "instructions:u" {print $2}')
	if [ -n "$counted" ] && awk -v c="$counted" -v w=$want 'BEGIN {d = (c - w) / w; exit !(d >= 0 && d <= 0.01)}'; then
		result inst_retired_truth ok "known_loop: $counted counted, $want in its loop"
	else
		result inst_retired_truth fail "known_loop: '$counted' counted, $want in its loop: $(head -c 200 /tmp/truth.err | tr '\n' ' ')"
	fi
	if [ -n "$user" ] && [ -n "$counted" ] &&
	   awk -v u="$user" -v c="$counted" -v w=$want 'BEGIN {exit !(u >= w && u <= w * 1.0005 && u < c)}'; then
		result inst_retired_user ok "known_loop: $user counted with :u, $want in its loop, $counted with the kernel"
	else
		result inst_retired_user fail "known_loop: '$user' counted with :u, $want in its loop, '$counted' with the kernel: $(head -c 200 /tmp/truth.err | tr '\n' ' ')"
	fi
}

# Rotation: more events than the PMU's counters (qemu's PMCR.N is 6, and
# the cycle counter), so topdown plans them for the probed PMU: two
# kernel perf groups of 6 and 5 events, cycles (on the cycle counter) in
# each, taking turns, one per 100 ms interval. INST_RETIRED is counted
# three ways and CPU_CYCLES three ways, across both groups; each scaled
# estimate must be within 5% of the truth (2N instructions; cycles, on
# qemu's 1 GHz virtual clock, the thread's on-CPU time), and counted part
# of the time only (the run shows the running fraction), but cycles, which
# every group counts, all of it.
check_rotation() {
	n=250000000
	want=$((2 * n))
	pmu=$(basename "$(ls -d /sys/bus/event_source/devices/armv8_pmuv3* | head -1)")
	events="instructions,cycles,r23,r24,r3a,r3b,r08,r11,r21,r22,$pmu/event=0x08/,$pmu/event=0x11/"
	collect_known "--events $events" "--known-loop $n" 100ms
	thread_counters known_loop >/tmp/rotation.txt
	oncpu=$(awk '$1 == "oncpu_ns" {print $2}' /tmp/rotation.txt)
	detail=$(awk -v w=$want -v t="$oncpu" '
		$1 == "instructions" || $1 == "r08" || $1 ~ /event=0x08\/$/ {truth = w}
		$1 == "cycles" || $1 == "r11" || $1 ~ /event=0x11\/$/ {truth = t}
		truth && $2 != "null" {d = ($2 - truth) / truth
			part = $1 == "cycles" ? $3 < 0.95 : $3 >= 0.95 || $3 <= 0
			bad += d < -0.05 || d > 0.05 || part
			printf "%s %+.2f%% (counted %.0f%%), ", $1, 100 * d, 100 * $3; checked++}
		truth && $2 == "null" {bad++; printf "%s never counted, ", $1}
		{truth = 0}
		END {printf "%d of 6 checked", checked; exit bad || checked != 6}' /tmp/rotation.txt)
	if [ $? -eq 0 ]; then
		result rotation_truth ok "12 events, $(counter_plan | awk '{printf "%s%d", (NR > 1 ? " and " : ""), NF}') to a group: $detail"
	else
		result rotation_truth fail "$detail; oncpu $oncpu: $(head -c 200 /tmp/truth.err | tr '\n' ' ')"
	fi
}

# The counter groups of /tmp/truth.json's plan, one line each: its event
# names (a Top-Down run's in tma, a run of --events at the top).
counter_plan() {
	awk '/"counter_plan": \[/ {p = 1; next} p && /^ *\[$/ {g = ""; next}
	     p && /^ *"/ {name = $0; gsub(/[ ",]/, "", name); g = g (g == "" ? "" : " ") name; next}
	     p && /^ *\],?$/ && g != "" {print g; g = ""; next} p && /^ *\]/ {exit}' /tmp/truth.json
}

# One collection of a known thread under the held counters (WORKLOAD and
# OPTIONS as collect_known's, COMM the thread's name, which must have left
# its CPU of itself at least NAPS times), its line NAME: the plan holds at
# least GROUPS groups (1 when not given) of at most 2 events, CPU_CYCLES
# among them (on a general-purpose counter, in every group); each group
# counts whenever it has its turn (the shares of one member per group add
# up to the cycles' share); the scaled CPU_CYCLES is the thread's on-CPU
# time (qemu's 1 GHz clock) within BOUND, and where the plan counts
# INST_RETIRED it is INSTRUCTIONS within BOUND. --events names them cycles
# and instructions, and may count them again as r11 and r08: those too.
held_run() {
	name=$1 bound=$5 instructions=$6 naps=$7 min_groups=${8:-1}
	collect_known "$2" "$3" 50ms
	counter_plan >/tmp/plan.txt
	thread_counters "$4" >/tmp/held.txt
	detail=$(awk -v w="$instructions" -v bound="$bound" -v naps="$naps" -v min_groups="$min_groups" '
		function event(e) {return e == "cycles" ? "CPU_CYCLES" : e == "instructions" ? "INST_RETIRED" : e}
		FILENAME == ARGV[1] {groups++; if (NF > 2) big++; cycles = 0
			   for (i = 1; i <= NF; i++) if (event($i) == "CPU_CYCLES") cycles = 1
				   else {member[groups] = event($i); planned[event($i)] = 1}
			   nocycles += !cycles; next}
		$1 == "oncpu_ns" {oncpu = $2; next}
		$1 == "voluntary_switches" {slept = $2; next}
		{value[event($1)] = $2; share[event($1)] = $3}
		END {for (g = 1; g <= groups; g++) if (member[g] != "") sum += share[member[g]]
		     dc = oncpu ? (value["CPU_CYCLES"] - oncpu) / oncpu : 1
		     printf "%d groups, %d over 2 events, %d without cycles; shares %.3f against cycles %.3f; cycles %+.2f%%",
			    groups, big, nocycles, sum, share["CPU_CYCLES"], 100 * dc
		     bad = groups < min_groups || big || nocycles || sum < share["CPU_CYCLES"] * 0.98 || dc < -bound ||
			   dc > bound || slept < naps
		     if ("INST_RETIRED" in planned) {di = (value["INST_RETIRED"] - w) / w; bad += di < -bound || di > bound
						    printf ", instructions %+.2f%%", 100 * di}
		     else printf ", no INST_RETIRED in the plan"
		     if ("r08" in value) {d = (value["r08"] - w) / w; bad += d < -bound || d > bound; printf ", r08 %+.2f%%", 100 * d}
		     if ("r11" in value) {d = oncpu ? (value["r11"] - oncpu) / oncpu : 1; bad += d < -bound || d > bound
					 printf ", r11 %+.2f%%", 100 * d}
		     printf "; %.0f ms on its CPU, %d voluntary switches", oncpu / 1e6, slept
		     exit bad}' /tmp/plan.txt /tmp/held.txt)
	if [ $? -eq 0 ]; then
		# what the run said of a plan of --events, when it split them
		result "$name" ok "$detail$(sed -n 's/^topdown: \(.*kernel perf groups.*\)/; said: \1/p' /tmp/truth.err)"
	else
		result "$name" fail "$detail: $(head -c 300 /tmp/truth.err | tr '\n' ' ')"
	fi
}

# "path value counted_ns" for each level-1 node of the query --tree --json in FILE.
tree_level1() {
	awk '/"path":/ {p = $2} /"level":/ {l = $2} /"value":/ {v = $2}
	     /"counted_ns":/ && l == "1," {gsub(/[",]/, "", p); gsub(/,/, "", v); print p, v, $2}' "$1"
}

# Pooling on the held counters (query --tree --pooled, user/query/pooled.c).
# Two agents one after the other, as two hosts (node labels lab-0 and
# lab-1, rotation offsets 0 and 1), store 6 windows each of td-workload at
# level 1, counting 10 ms of every 200 ms window: one turn (10 ms is the
# shortest, user/agent/rotation.c), so each window counts one of the
# level's counter groups (2 on N1, 6 on V1 with these counters held) and
# its own tree leaves the nodes that rest on the others n/a with nothing
# counted. Every window must leave a level-1 node so; the pooled tree over
# all of them must have counted every level-1 node and define it, but for
# the nodes check_pmu's run (no counter held) has n/a too: qemu's zero
# counts (OP_SPEC on V1).
# Counted time: a window's row counts a node for min over its events e of
# c_e(w), e's counting time in window w (running fraction times on-CPU
# time, summed over the threads); the pooled tree for min over e of the
# sum over w of c_e(w). A minimum of sums is at least the sum of the
# minimums, and a count lasts no longer than the on-CPU time, so for every
# node: the windows' counted_ns summed (query --tree) <= the pooled one <=
# the pooled on-CPU time, within a nanosecond a row for their rounding.
# It is strictly more where a node's events were counted in different
# windows, as V1's Frontend_Bound's are here.
# (The pooled counters themselves are not shown by any command, so the
# pooled CPU_CYCLES is not checked against the on-CPU time here.)
held_pooled() {
	td-workload --duration-ms 600000 --io-threads 0 --known-loop 1000000000000 >/dev/null 2>&1 &
	workload=$!
	rm -f /tmp/pooled.db* /tmp/pooled.err
	failed=
	for host in 0 1; do
		topdown agent --process td-workload --level 1 --every 200ms --duration 10ms --windows 6 \
			--rotation-offset $host --label node=lab-$host --db /tmp/pooled.db 2>>/tmp/pooled.err ||
			failed="$failed agent $host exit $?"
	done
	kill $workload
	wait $workload 2>/dev/null
	topdown list --db /tmp/pooled.db --json >/tmp/pooled-runs.json 2>>/tmp/pooled.err
	groups=$(sed -n 's/^ *"pmu_groups": "\([0-9]*\)",*$/\1/p' /tmp/pooled-runs.json | sort -u | tr '\n' ' ' | sed 's/ $//')
	# the level-1 nodes of check_pmu's run: "node value"
	awk '/"processes": \[/ {p = 1} p && /"node":/ {n = $2} p && /"level":/ {l = $2}
	     p && /"value":/ && l == "1," {gsub(/[",]/, "", n); gsub(/,/, "", $2); if (!seen[n]++) print n, $2}' \
		/tmp/pmu.json >/tmp/pooled-unheld.txt
	# each window's level-1 rows of the process: "run path value counted_ns"
	topdown export --format csv --db /tmp/pooled.db 2>>/tmp/pooled.err |
		awk -F, '$(NF-9) == "process" && $(NF-7) == -1 && $(NF-4) == 1 {
			 print $1, $(NF-6), ($(NF-3) == "" ? "null" : $(NF-3)), $NF}' >/tmp/pooled-windows.txt
	topdown query --tree --json --db /tmp/pooled.db >/tmp/pooled-summed.json 2>>/tmp/pooled.err
	topdown query --tree --pooled --json --db /tmp/pooled.db >/tmp/pooled-tree.json 2>>/tmp/pooled.err
	tree_level1 /tmp/pooled-summed.json >/tmp/pooled-summed.txt
	tree_level1 /tmp/pooled-tree.json >/tmp/pooled-tree.txt
	detail=$(awk -v groups="$groups" -v hosts="$(json_number hosts /tmp/pooled-tree.json)" \
		     -v runs="$(json_number runs /tmp/pooled-tree.json)" -v oncpu="$(json_number oncpu_ns /tmp/pooled-tree.json)" '
		FILENAME == ARGV[1] {unheld[$1] = $2; next}
		FILENAME == ARGV[2] {if (!($1 in window)) windows++; window[$1] = 1
				     if ($3 == "null" && $4 == 0) {if (!missed[$1]++) short++; na[$2]++}
				     next}
		FILENAME == ARGV[3] {summed[$1] = $3; next}
		{nodes++
		 bad += $3 <= 0 || $3 < summed[$1] - windows - 1 || $3 > oncpu + 1
		 bad += $2 == "null" && unheld[$1] != "null"
		 gained += $2 != "null" && na[$1] > 0
		 said = said sprintf(", %s %s counted %.1f ms (the windows %.1f ms, n/a uncounted in %d)", $1,
				     $2 == "null" ? "n/a" : sprintf("%.1f%%", 100 * $2), $3 / 1e6, summed[$1] / 1e6, na[$1])}
		END {printf "%s groups; %d windows, %d with a node n/a uncounted; pooled over %d runs of %d hosts, %.1f ms on-CPU%s",
			    groups, windows, short, runs, hosts, oncpu / 1e6, said
		     exit bad || !nodes || groups + 0 < 2 || windows < 2 || short < windows || !gained ||
			  runs != windows || hosts != 2}' \
		/tmp/pooled-unheld.txt /tmp/pooled-windows.txt /tmp/pooled-summed.txt /tmp/pooled-tree.txt)
	if [ $? -eq 0 ] && [ -z "$failed" ]; then
		result held_pooled_windows ok "$detail"
	else
		result held_pooled_windows fail "$failed $detail: $(head -c 300 /tmp/pooled.err | tr '\n' ' ')"
	fi
}

# A partial PMU, as a small cloud instance or another monitor leaves it:
# td-hold-counters pins 4 of the 6 general-purpose counters and the cycle
# counter of the one CPU. doctor's probe must find 2 free and the cycle
# counter taken. At levels 1 to 3 of the emulated Neoverse, the known
# loop's counts must be within 2% of the truth (held_run), and those of a
# thread that alternates 20 ms busy with 20 ms asleep within 5%. The
# agent's windows, each counting some of the groups, pooled (held_pooled).
# With all 6 and the cycle counter held, collect says who holds them.
check_held_counters() {
	if ! command -v td-hold-counters >/dev/null; then
		result held_probe fail "no td-hold-counters in the guest (make arm64 builds it)"
		return
	fi
	td-hold-counters 4 cycles >/tmp/hold.out 2>&1 &
	holder=$!
	sleep 1
	topdown doctor --json >/tmp/doctor.json 2>/dev/null
	free=$(sed -n 's/^ *"gp_free": \([0-9]*\),*$/\1/p' /tmp/doctor.json)
	fixed=$(sed -n 's/^ *"fixed_free": \([0-9]*\),*$/\1/p' /tmp/doctor.json)
	if [ "$free" = 2 ] && [ "$fixed" = 0 ]; then
		result held_probe ok "2 general-purpose counters free, the cycle counter taken: $(grep -o '"detail": "[0-9]* of [^"]*' /tmp/doctor.json | head -1 | cut -c12-)"
	else
		result held_probe fail "gp_free '$free', fixed_free '$fixed': $(head -c 300 /tmp/doctor.json | tr '\n' ' ')"
	fi
	n=250000000
	# bursts of 20 ms at 1 GHz (2 instructions a turn), 25 of them, a 20 ms nap after each
	burst=10000000 bursts=25
	for level in 1 2 3; do
		held_run "held_level$level" "--level $level" "--known-loop $n" known_loop 0.02 $((2 * n)) 0
		held_run "held_alt_level$level" "--level $level" "--known-alt $burst --alt-bursts $bursts" known_alt 0.05 \
			$((2 * burst * bursts)) $bursts
	done
	# The levels of the lab's models (Neoverse N1, N2, V1) count no
	# INST_RETIRED: their trees stop at level 1, on stall and slot events.
	# --events counts it in the one group their plans make of each event
	# with 2 counters free and the cycle counter taken: CPU_CYCLES and it,
	# both on general-purpose counters.
	held_run held_alt_events "--events cycles,instructions" "--known-alt $burst --alt-bursts $bursts" known_alt 0.05 \
		$((2 * burst * bursts)) $bursts
	# More hardware events than that: the plan for the probed PMU gives
	# each of the other four a kernel group of its own beside cycles (on a
	# general-purpose counter), and each is scaled by the cycles counted
	# beside it. r08 and r11 count INST_RETIRED and CPU_CYCLES again, r1b
	# (not emulated) counts 0.
	rotated="--events cycles,instructions,r08,r11,r1b"
	held_run held_events_rotated "$rotated" "--known-loop $n" known_loop 0.02 $((2 * n)) 0 4
	held_run held_alt_events_rotated "$rotated" "--known-alt $burst --alt-bursts $bursts" known_alt 0.05 \
		$((2 * burst * bursts)) $bursts 4
	held_pooled
	kill $holder
	wait $holder 2>/dev/null
	# taken after the plan was made: the groups have their turns and never a counter
	before_release='td-hold-counters 6 cycles >/tmp/hold.out 2>&1 & holder=$!; sleep 1'
	collect_known "--level 1" "--known-loop 50000000" 50ms
	before_release=
	kill $holder
	wait $holder 2>/dev/null
	if grep -q 'never got a counter: another user took' /tmp/truth.err &&
	   grep -q '"value": null' /tmp/truth.json; then
		result held_after_start ok "$(grep -o '[A-Z_, ]* had [a-z]* counter group.s turns but never got a counter' /tmp/truth.err | head -1)"
	else
		result held_after_start fail "$(head -c 400 /tmp/truth.err | tr '\n' ' ')"
	fi
	td-hold-counters 6 cycles >/tmp/hold.out 2>&1 &
	holder=$!
	sleep 1
	topdown collect --system-wide --duration 1s --db /tmp/lab.db >/dev/null 2>/tmp/held.err
	rc=$?
	if [ $rc -eq 0 ] && grep -q 'held by another user' /tmp/held.err && ! grep -q 'never counted' /tmp/held.err; then
		result held_all ok "$(grep -o 'every general-purpose counter[^;]*' /tmp/held.err | head -1)"
	else
		result held_all fail "exit $rc: $(head -c 300 /tmp/held.err | tr '\n' ' ')"
	fi
	kill $holder
	wait $holder 2>/dev/null
}

if [ -r /sys/kernel/btf/vmlinux ]; then
	if [ "$(uname -m)" = aarch64 ]; then
		check_truth
		check_rotation
		check_pmu
		check_held_counters
	fi
	if [ "$lab_checks" != pmu ]; then
		check_process tp_btf
		check_process raw_tp
		check_system_wide
		check_agent
	fi
else
	result btf fail "this kernel has no /sys/kernel/btf/vmlinux"
fi
result done
poweroff -f
