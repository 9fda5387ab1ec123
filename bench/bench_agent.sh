#!/usr/bin/env bash
# What `topdown agent` costs, from its own self-accounting labels
# (agent.cpu_ms, agent.bpf_ms, agent.threads) and /proc/<agent>/status:
#
#   1. per window: 1 s windows on a steady workload (a spinner and 4 io
#      threads waking every ms): medians of the agent's CPU time, the BPF
#      programs' run time and the overhead percentage;
#   2. per 1,000 threads drained: 1 s windows on a workload that starts
#      and ends short threads two at a time: the agent's CPU time per
#      window divided by the threads the window held, median over the
#      windows with at least 1,000;
#   3. steady-state RSS: VmRSS after 100, 1,000 and WINDOWS windows of
#      10 ms on the steady workload;
#   4. what the agent costs the host's other switches: `perf bench sched
#      pipe` on CPU 0 alone and beside the agent (following an idle
#      process, so every switch of the pipe runs its filter path), ROUNDS
#      interleaved rounds (default 7), throughput against alone's in the
#      same round;
#   5. a stalled store: 1 s windows on a one-thread spinner while another
#      process holds the database (BEGIN EXCLUSIVE) for 9 s: the BPF time
#      of the windows before the stall and of the first window after it,
#      the busiest thread's on-CPU share of its window, the largest gap
#      between windows, and the windows stored.
# ALSO="LABEL=TOPDOWN_BINARY..." adds other builds to sections 1, 4 and 5,
# run in turn with this one (section 1: WINDOW_ROUNDS rounds, default 3).
#
# usage: sudo [SECTIONS="window churn rss host stall"] [ROUNDS=7] [ALSO=...] bench/bench_agent.sh [BUILD_DIR] [WINDOWS]
#   WINDOWS: default 10000
# Prints Markdown tables; each names the command that produced it.
set -euo pipefail
out=${1:-build}
windows=${2:-10000}
sections=" ${SECTIONS:-window churn rss host stall} "
topdown=$(realpath "${TD_TOPDOWN:-$out/topdown}") # TD_TOPDOWN: another build of it
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
. "$(dirname "$0")/lib/stats.sh"

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "bench: needs sqlite3 (make deps installs it)" >&2; exit 1; }
# The workload under a name of its own: nothing else on the machine is followed.
ln -s "$(realpath "$out/td-workload")" "$work/td-bench-agt"

want() { [[ $sections == *" $1 "* ]]; }
builds=("this build=$topdown" ${ALSO:-})

# label KEY DB: that label of every run, one per line
label() { sqlite3 "$2" "SELECT json_extract(labels, '\$.\"$1\"') FROM runs;"; }

if want window; then
echo "## topdown agent: cost per window"
echo
cmd="topdown agent --process td-bench-agt --every 1s --windows 30"
"$work/td-bench-agt" --duration-ms 3600000 --io-threads 4 --io-work-us 20 &
steady=$!
declare -A cpu bpf overhead
for ((r = 0; r < ${WINDOW_ROUNDS:-3}; r++)); do
	for build in "${builds[@]}"; do
		rm -f "$work/steady.db" "$work/s1.db"
		"${build#*=}" agent --process td-bench-agt --every 1s --windows 30 --db "$work/steady.db" \
			--spool "$work/s1.db" 2>/dev/null
		cpu[${build%%=*}]+="$(label agent.cpu_ms "$work/steady.db" | tr '\n' ' ')"
		bpf[${build%%=*}]+="$(label agent.bpf_ms "$work/steady.db" | tr '\n' ' ')"
		overhead[${build%%=*}]+="$(label agent.overhead_pct "$work/steady.db" | tr '\n' ' ')"
	done
done
kill $steady; wait $steady 2>/dev/null || true
echo "\`$cmd\` (spinner + 4 io threads waking every 1 ms; $(nproc) CPUs), ${WINDOW_ROUNDS:-3} interleaved"
echo "rounds of 30 windows per build, median (interquartile range) over the windows:"
echo
echo "| agent | agent CPU per window, ms | BPF run time per window, ms | overhead, % |"
echo "| --- | --- | --- | --- |"
for build in "${builds[@]}"; do
	l=${build%%=*}
	printf "| %s | %.2f (%s) | %.2f (%s) | %.3f (%s) |\n" "$l" \
		"$(tr ' ' '\n' <<<"${cpu[$l]}" | grep . | median)" "$(tr ' ' '\n' <<<"${cpu[$l]}" | grep . | iqr)" \
		"$(tr ' ' '\n' <<<"${bpf[$l]}" | grep . | median)" "$(tr ' ' '\n' <<<"${bpf[$l]}" | grep . | iqr)" \
		"$(tr ' ' '\n' <<<"${overhead[$l]}" | grep . | median)" "$(tr ' ' '\n' <<<"${overhead[$l]}" | grep . | iqr)"
done
echo

fi

if want churn; then
echo "## topdown agent: cost per 1,000 threads drained"
echo
cmd="topdown agent --process td-bench-agt --every 1s (workload: td-workload --short-threads 150000 --short-work-us 1)"
$topdown agent --process td-bench-agt --every 1s --db "$work/churn.db" --spool "$work/s2.db" 2>/dev/null &
agent=$!
sleep 2
"$work/td-bench-agt" --duration-ms 1 --io-threads 0 --short-threads 150000 --short-work-us 1
sleep 2
kill -TERM $agent; wait $agent
per_k=$(sqlite3 "$work/churn.db" "SELECT json_extract(labels, '\$.\"agent.cpu_ms\"') * 1000.0 /
	json_extract(labels, '\$.\"agent.threads\"') FROM runs WHERE json_extract(labels, '\$.\"agent.threads\"') >= 1000;" | median)
threads=$(label agent.threads "$work/churn.db" | median)
printf '`%s`: median over the windows with at least 1,000 threads (median %.0f threads a window):\n' "$cmd" "$threads"
echo
echo "| agent CPU per 1,000 threads drained |"
echo "| --- |"
printf "| %.1f ms |\n" "$per_k"
echo

fi

if want rss; then
echo "## topdown agent: steady-state RSS"
echo
cmd="topdown agent --process td-bench-agt --every 10ms"
"$work/td-bench-agt" --duration-ms 3600000 --io-threads 4 --io-work-us 20 &
$topdown agent --process td-bench-agt --every 10ms --db "$work/rss.db" --spool "$work/s3.db" 2>/dev/null &
agent=$!
rows=""
for mark in 100 1000 "$windows"; do
	until [ "$(sqlite3 "$work/rss.db" 'SELECT count(*) FROM runs;' 2>/dev/null || echo 0)" -ge "$mark" ]; do
		sleep 0.2
	done
	rows+=$(printf "| %s | %s kB |" "$mark" "$(awk '/^VmRSS/ {print $2}' /proc/$agent/status)")$'\n'
done
kill -TERM $agent; wait $agent
echo "\`$cmd\` (the steady workload), VmRSS of the agent after N windows:"
echo
echo "| windows | VmRSS |"
echo "| --- | --- |"
printf "%s" "$rows"
echo
fi

if want host; then
echo "## topdown agent: what it costs the host's other switches"
echo
rounds=${ROUNDS:-7}
command -v perf >/dev/null || { echo "bench: needs perf (make deps installs it)" >&2; exit 1; }
ln -s "$(command -v sleep)" "$work/td-bench-idle"
"$work/td-bench-idle" 3600 &
# ops/s of the pipe benchmark on CPU 0, beside the agent of binary $1 (none: alone)
pipe_ops() {
	local agent=""
	if [ "$1" != none ]; then
		"$1" agent --process td-bench-idle --every 1s --db "$work/host.db" --spool "$work/s4.db" 2>/dev/null &
		agent=$!
		sleep 1.5 # loaded, attached, counting
	fi
	taskset -c 0 perf bench sched pipe -l 100000 2>/dev/null | awk '/ops\/sec/ {print $1}'
	if [ -n "$agent" ]; then kill -TERM "$agent"; wait "$agent" || true; fi
	rm -f "$work/host.db" "$work/s4.db"
}
declare -A ratios
for ((r = 0; r < rounds; r++)); do
	alone=$(pipe_ops none)
	for build in "${builds[@]}"; do
		ratios[${build%%=*}]+="$(awk -v b="$(pipe_ops "${build#*=}")" -v a="$alone" 'BEGIN {print b / a}') "
	done
done
echo "\`taskset -c 0 perf bench sched pipe -l 100000\` beside \`topdown agent --process td-bench-idle --every 1s\`"
echo "(an idle target: the pipe's switches take the filter path), $rounds interleaved rounds:"
echo
echo "| agent | pipe ops/s against alone, median (spread) |"
echo "| --- | --- |"
for build in "${builds[@]}"; do
	label=${build%%=*}
	printf "| %s | %.3f (%s) |\n" "$label" "$(tr ' ' '\n' <<<"${ratios[$label]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${ratios[$label]}" | grep . | spread)"
done
fi

if want stall; then
echo "## topdown agent: a stalled store"
echo
cmd="topdown agent --process td-bench-agt --every 1s --windows 16"
echo "\`$cmd\` beside a one-thread spinner; after 4 windows are stored another process holds"
echo "the database with \`BEGIN EXCLUSIVE\` for 9 s:"
echo
echo "| agent | BPF ms per window before the stall, median (IQR) | BPF ms, first window started after it | busiest thread, most of its window on CPU | largest gap between windows | windows stored |"
echo "| --- | --- | --- | --- | --- | --- |"
for build in "${builds[@]}"; do
	rm -f "$work/stall.db" "$work/s5.db"
	"$work/td-bench-agt" --duration-ms 60000 --io-threads 0 &
	spinner=$!
	"${build#*=}" agent --process td-bench-agt --every 1s --windows 16 --db "$work/stall.db" \
		--spool "$work/s5.db" 2>/dev/null &
	agent=$!
	until [ "$(sqlite3 "$work/stall.db" 'SELECT count(*) FROM runs;' 2>/dev/null || echo 0)" -ge 4 ]; do
		sleep 0.2
	done
	held_from=$(date +%s%N)
	{ echo ".timeout 5000"; echo "BEGIN EXCLUSIVE;"; sleep 9; echo "COMMIT;"; } | sqlite3 "$work/stall.db"
	held_to=$(date +%s%N)
	wait $agent
	kill $spinner; wait $spinner 2>/dev/null || true
	# per window: start, end, BPF ms, the busiest thread's share of the window
	sqlite3 -separator ' ' "$work/stall.db" "SELECT r.started_ns, r.ended_ns,
		json_extract(r.labels, '\$.\"agent.bpf_ms\"'),
		(SELECT max(oncpu_ns) FROM threads t WHERE t.run_pk = r.pk) * 1.0 / (r.ended_ns - r.started_ns)
		FROM runs r ORDER BY r.started_ns;" >"$work/stall.txt"
	before=$(awk -v t="$held_from" '$2 <= t {print $3}' "$work/stall.txt")
	printf "| %s | %.2f (%s) | %.2f | %.0f%% | %.3f s | %d of 16 |\n" "${build%%=*}" \
		"$(median <<<"$before")" "$(iqr <<<"$before")" \
		"$(awk -v t="$held_to" '$1 >= t {print $3; exit}' "$work/stall.txt")" \
		"$(awk '{print $4 * 100}' "$work/stall.txt" | sort -g | tail -1)" \
		"$(awk 'NR > 1 {print ($1 - end) / 1e9} {end = $2}' "$work/stall.txt" | sort -g | tail -1)" \
		"$(wc -l <"$work/stall.txt")"
done
echo
fi
