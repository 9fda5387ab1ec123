#!/usr/bin/env bash
# What topdown costs a real workload: redis-server with 4 io threads under
# redis-benchmark, side by side in one run (docs/BENCHMARKS.md, "A real
# workload: redis").
#
# Configurations, each measured once per round:
#   none         nothing attached;
#   none-again   nothing attached, a second time: its ratio to none in the
#                same round is the noise floor of every other ratio;
#   perf-stat    `perf stat -e task-clock,context-switches,cpu-migrations
#                -p PID`: perf's per-task counting of what topdown shows
#                here (without a PMU topdown opens task-clock alone and
#                takes switches and migrations from the scheduler's
#                tracepoints);
#   collect      `topdown collect --process NAME` at level 1 (no PMU:
#                task-clock and the scheduling figures);
#   agent        `topdown agent --process NAME --every 1s --metrics-listen
#                ...` with a scraper fetching /metrics every second. Windows
#                of 1 s, not the default 60 s, so that each measurement
#                holds several window ends (drain, store, next window).
# The order of the configurations turns by one each round, so that none
# holds one place in the round (right after the agent's exit, say).
#
# Settings, and why:
#   - redis-server on CPU 0, redis-benchmark on CPU 1 (this host has 2):
#     client and server do not take each other's CPU time, and neither
#     moves between rounds. io-threads 4 (the issue's setting) all share
#     CPU 0 with the main thread; the collectors run where the scheduler
#     puts them, so their own CPU time competes with redis or its client,
#     which is part of what they cost.
#   - No persistence (--save '' --appendonly no), loopback, a free port
#     (bench/lib/redis.sh, shared with bench/locate.sh).
#   - `-t set,get`, 50 clients, no pipelining: one request per round trip,
#     so every request costs context switches, the path topdown's
#     sched_switch programs sit on: the demanding case for it (pipelining
#     would divide the switches per request by the pipeline depth).
#   - Requests per run: the throughput of a warm-up run times RUN_SECONDS,
#     so that a run lasts about RUN_SECONDS (SET, then GET) on this host
#     whatever its load.
#   - The server runs as a link named td-bench-redis, so that the
#     collectors follow it and not another redis-server on the host.
# Throughput of a run: its SET and GET requests over their time (the
# harmonic mean of the two rates redis-benchmark prints).
#
# usage: sudo bench/bench_redis.sh [BUILD_DIR] [ROUNDS]   (defaults: build 7)
#   IO_THREADS (4), CLIENTS (50), RUN_SECONDS (10); SAMPLES=FILE keeps every
#   run ("round configuration set/s get/s requests/s").
#        bench/bench_redis.sh --from SAMPLES_FILE...
#   the table over runs kept by earlier calls, pooled (each run still set
#   against the none of its own round and file).
# Needs linux-perf and curl (make deps) and redis-server, redis-tools
# (bench-only: apt-get install -y redis-server redis-tools, not in the
# Makefile's deps). Prints a Markdown table.
set -euo pipefail
out=$(realpath -m -- "${1:-build}")
rounds=${2:-7}
io_threads=${IO_THREADS:-4}
clients=${CLIENTS:-50}
run_seconds=${RUN_SECONDS:-10}
events=task-clock,context-switches,cpu-migrations
work=$(mktemp -d)
here=$(dirname "$0")
# shellcheck source=bench/lib/redis.sh
. "$here/lib/redis.sh"
# shellcheck source=bench/lib/stats.sh
. "$here/lib/stats.sh"
cleanup() {
	redis_stop
	kill $(jobs -p) 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

# The table over SAMPLES files (lines "round configuration set/s get/s
# requests/s"): per configuration, its throughput, and its ratio to the
# none of the same round (none-again's is the noise floor) and, for
# topdown, to perf-stat of the same round.
table() { # SAMPLES...
	local f=0 c
	for file in "$@"; do
		f=$((f + 1))
		awk -v f=$f '{$1 = f ":" $1; print}' "$file"
	done >"$work/pooled"
	awk 'NR == FNR { if ($2 == "none") none[$1] = $5; if ($2 == "perf-stat") perf[$1] = $5; next }
	     { print $0, $5 / none[$1], $5 / perf[$1] }' "$work/pooled" "$work/pooled" >"$work/ratios"
	echo "| configuration | requests/s: median | IQR | min-max | vs none, same round: median | IQR | min-max | rounds below none | vs perf-stat, same round: median (IQR) |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	for c in none none-again perf-stat collect agent; do
		awk -v c="$c" '$2 == c' "$work/ratios" >"$work/one"
		printf '| %s | %.0f | %s | %s | %.3f | %s | %s | %d of %d | %s |\n' "$c" \
			"$(awk '{print $5}' "$work/one" | median)" \
			"$(awk '{print $5}' "$work/one" | iqr | awk -F- '{printf "%.0f-%.0f", $1, $2}')" \
			"$(awk '{print $5}' "$work/one" | spread | awk -F- '{printf "%.0f-%.0f", $1, $2}')" \
			"$(awk '{print $6}' "$work/one" | median)" \
			"$(awk '{print $6}' "$work/one" | iqr | awk -F- '{printf "%.3f-%.3f", $1, $2}')" \
			"$(awk '{print $6}' "$work/one" | spread)" \
			"$(awk '$6 < 1' "$work/one" | wc -l)" "$(wc -l <"$work/one")" \
			"$(case $c in collect|agent) awk '{print $7}' "$work/one" | median | xargs printf '%.3f'
				printf ' (%s)' "$(awk '{print $7}' "$work/one" | iqr | awk -F- '{printf "%.3f-%.3f", $1, $2}')" ;; *) echo - ;; esac)"
	done
}

if [ "${1:-}" = --from ]; then
	shift
	[ $# -gt 0 ] || { echo "bench: --from needs SAMPLES files (kept with SAMPLES=FILE)" >&2; exit 1; }
	for file in "$@"; do
		awk 'NF != 5 || $5 + 0 <= 0 { exit 1 }' "$file" 2>/dev/null ||
			{ echo "bench: $file is not a SAMPLES file (round configuration set/s get/s requests/s)" >&2; exit 1; }
	done
	table "$@"
	echo
	echo "pooled from $#: $*"
	exit 0
fi

for setting in "ROUNDS=$rounds" "IO_THREADS=$io_threads" "CLIENTS=$clients" "RUN_SECONDS=$run_seconds"; do
	[[ ${setting#*=} =~ ^[1-9][0-9]*$ ]] || { echo "bench: ${setting%%=*} must be a whole number above 0, not '${setting#*=}'" >&2; exit 1; }
done
[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF and perf)" >&2; exit 1; }
for tool in perf redis-server redis-benchmark redis-cli curl taskset ss; do
	command -v "$tool" >/dev/null || { echo "bench: needs $tool (see the usage above)" >&2; exit 1; }
done
[ -x "$out/topdown" ] || { echo "bench: no $out/topdown: make first" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "bench: needs 2 CPUs (server on CPU 0, client on CPU 1)" >&2; exit 1; }

ln -s "$(command -v redis-server)" "$work/td-bench-redis"
redis_server=$work/td-bench-redis
redis_start 0 "$work/redis.log" --io-threads "$io_threads"
metrics_port=$redis_port
while ss -ltn | grep -q ":$metrics_port "; do metrics_port=$((metrics_port + 1)); done

# The collector by configuration, exec'd, so that a background call's pid
# is the collector's.
collector() { # CONFIGURATION
	case $1 in
	perf-stat) exec perf stat -e "$events" -p "$redis_pid" -o "$work/perf-stat.out" -- sleep 3600 ;;
	collect) exec "$out/topdown" collect --process td-bench-redis --duration 1h --db "$work/collect.db" ;;
	agent) exec "$out/topdown" agent --process td-bench-redis --every 1s --metrics-listen "127.0.0.1:$metrics_port" \
		--db "$work/agent.db" --spool "$work/spool.db" --log "$work/agent.log" ;;
	esac
}

attached() { # CONFIGURATION PID: whether it counts yet
	case $1 in
	perf-stat) ls -l /proc/"$2"/fd 2>/dev/null | grep -q perf_event ;;
	collect) ls -l /proc/"$2"/fd 2>/dev/null | grep -q 'bpf[-_]link' ;;
	agent) ls -l /proc/"$2"/fd 2>/dev/null | grep -q 'bpf[-_]link' &&
		curl -sf "http://127.0.0.1:$metrics_port/metrics" >/dev/null ;;
	esac
}

# Fetches /metrics every second and counts the answers that hold the
# agent's window counter (a scrape that fails is counted as such).
scraper() {
	while sleep 1; do
		if curl -sf --max-time 5 "http://127.0.0.1:$metrics_port/metrics" | grep -q '^topdown_agent_windows_total '; then
			echo ok
		else
			echo failed
		fi >>"$work/scrapes"
	done
}

# SET/s GET/s of one redis-benchmark run of N requests each, on CPU 1
load() { # N
	taskset -c 1 redis-benchmark -p "$redis_port" -t set,get -n "$1" -c "$clients" --csv |
		awk -F'"' '$2 == "SET" {s = $4} $2 == "GET" {g = $4} END { if (s > 0 && g > 0) print s, g; else exit 1 }' ||
		{ echo "bench: redis-benchmark printed no SET/GET rates" >&2; exit 1; }
}

# One run under CONFIGURATION: writes "SET/s GET/s requests/s" to
# $work/run. Not in a command substitution: a failure here ends the bench,
# and its trap stops the collector.
measure() { # CONFIGURATION N
	local pid=- scrape=- rates
	if [ "${1%-again}" != none ]; then
		collector "$1" >"$work/collector.out" 2>"$work/collector.err" &
		pid=$!
		for _ in $(seq 300); do
			kill -0 $pid 2>/dev/null || { echo "bench: $1 exited:" >&2; cat "$work/collector.err" >&2; exit 1; }
			attached "$1" $pid && break
			sleep 0.1
		done
		attached "$1" $pid || { echo "bench: $1 did not attach in 30 s" >&2; exit 1; }
		[ "$1" = agent ] && { scraper & scrape=$!; }
		sleep 1 # topdown's first setup, past its start
	fi
	rates=$(load "$2")
	if [ "$pid" != - ]; then
		kill -0 $pid 2>/dev/null || { echo "bench: $1 exited during the run:" >&2; cat "$work/collector.err" >&2; exit 1; }
		[ "$scrape" != - ] && { kill $scrape; wait $scrape 2>/dev/null || true; }
		# SIGTERM: topdown stores its run; perf stat prints when its sleep ends.
		pkill -TERM -P $pid 2>/dev/null || true
		kill -TERM $pid 2>/dev/null || true
		wait $pid 2>/dev/null || true
	fi
	echo "$rates" | awk '{print $1, $2, 2 / (1 / $1 + 1 / $2)}' >"$work/run"
}

# Warm-up (the server's first allocations, the page cache of the tools),
# and the number of requests for a run of about RUN_SECONDS.
measure none 2000
warm=$(cat "$work/run")
requests=$(echo "$warm" | awk -v s="$run_seconds" '{n = int($3 * s / 2); print n < 2000 ? 2000 : n}')
echo "warm-up: $warm requests/s (SET GET both); $requests requests per test" >&2

configs=(none perf-stat collect agent none-again)
n=${#configs[@]}
: >"$work/samples"
load_min='' load_max=''
for round in $(seq "$rounds"); do
	for i in $(seq 0 $((n - 1))); do
		c=${configs[$(((i + round) % n))]}
		measure "$c" "$requests"
		echo "$round $c $(cat "$work/run")" >>"$work/samples"
	done
	l=$(cut -d' ' -f1 /proc/loadavg)
	load_min=$(awk -v a="${load_min:-$l}" -v b="$l" 'BEGIN {print (a < b ? a : b)}')
	load_max=$(awk -v a="${load_max:-$l}" -v b="$l" 'BEGIN {print (a > b ? a : b)}')
	echo "round $round/$rounds done (load average $l)" >&2
done

table "$work/samples"
scrapes_ok=$(grep -c '^ok' "$work/scrapes" || true)
scrapes_failed=$(grep -c '^failed' "$work/scrapes" || true)
echo
echo "$rounds rounds of $requests SET and $requests GET requests per run (redis-benchmark -c $clients, no pipelining," \
	"CPU 1; redis-server --io-threads $io_threads, CPU 0); agent /metrics scrapes: $scrapes_ok answered, $scrapes_failed failed;" \
	"$(uname -r), $(nproc) CPUs, load average $load_min to $load_max at the rounds' ends"
[ -n "${SAMPLES:-}" ] && cp "$work/samples" "$SAMPLES"
exit 0
