#!/usr/bin/env bash
# What locate's sampling (--sample) costs, side by side in one run, and what
# the kernel's aggregation saves (docs/BENCHMARKS.md, "Locate").
#
# overhead: two workloads, each profiled in turn by nothing, by topdown
#   without --sample (its counters alone), by topdown --sample, by `perf
#   record -g` and by bcc's profile (profile-bpfcc), all at the same
#   frequencies and all on cpu-clock (what topdown samples without a PMU;
#   bcc's profile samples nothing else), all attached to the workload's
#   process:
#   - pipe: `perf bench sched pipe -T` (two threads of one process) pinned
#     to CPU 0, started by a shell that waits on a fifo and then execs it,
#     so the profiler attaches to the pid before the first operation;
#   - redis: a redis-server of our own (loopback, a free port, no
#     persistence) pinned to CPU 0 and loaded by redis-benchmark on CPU 1.
#   Per round every variant runs once, in an order that turns by one each
#   round; a variant's slowdown is the round's baseline throughput over its
#   own (time per operation against none: 1.05 is 5% slower). Beside it,
#   the profiler process's CPU time over the measured window (its threads'
#   time on CPU) and, for the BPF profilers, their programs'
#   own time (kernel.bpf_stats_enabled run_time_ns, found through the
#   profiler's fds), which the kernel charges to the interrupted task.
# memory: topdown with and without --sample on `td-workload --stacks N`
#   (N distinct call paths): its peak RSS (ru_maxrss, the kernel's VmHWM,
#   through GNU time), the memlock of its BPF maps, and the distinct stacks
#   and samples the run stored.
# keys: how often a (thread, user stack, kernel stack) key repeats within
#   one drain: runs whose duration is one interval (one drain), for redis
#   under load and td-workload --split, stored stacks against samples.
#
# usage: sudo bench/locate.sh [BUILD_DIR] [ROUNDS] [FREQS] [PARTS]
#   defaults: build 5 "99 999" "overhead memory keys"
# Needs linux-perf, bpfcc-tools, redis-server, redis-tools, jq, sqlite3,
# time (apt-get install -y ...): bench-only, not in the Makefile's deps.
# Prints Markdown tables.
set -euo pipefail
out=$(realpath "${1:-build}")
rounds=${2:-5}
freqs=${3:-99 999}
parts=${4:-overhead memory keys}
pipe_loops=${PIPE_LOOPS:-300000}
redis_requests=${REDIS_REQUESTS:-200000}
nr_stacks=${STACKS:-10000}
work=$(mktemp -d)
here=$(dirname "$0")
# shellcheck source=bench/lib/redis.sh
. "$here/lib/redis.sh"
# shellcheck source=bench/lib/stats.sh
. "$here/lib/stats.sh"
stats_was=$(sysctl -n kernel.bpf_stats_enabled)
cleanup() {
	redis_stop
	kill $(jobs -p) 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$work"
	sysctl -qw kernel.bpf_stats_enabled="$stats_was"
}
trap cleanup EXIT

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF and perf)" >&2; exit 1; }
for tool in perf profile-bpfcc redis-server redis-benchmark jq sqlite3 /usr/bin/time bpftool; do
	command -v "$tool" >/dev/null || { echo "bench: needs $tool (see the usage above)" >&2; exit 1; }
done
[ -x "$out/topdown" ] && [ -x "$out/td-workload" ] || { echo "bench: no $out/topdown or td-workload: make first" >&2; exit 1; }
sysctl -qw kernel.bpf_stats_enabled=1

# bcc compiles its program against the running kernel's headers. Where
# Debian has none for it (a VM's own kernel), the newest installed
# linux-headers-*-amd64 with its -common half, merged in a tree of links
# under $work: profile's program reads only what their ABI keeps.
bcc_source=
if [ ! -d "/lib/modules/$(uname -r)/build" ]; then
	headers=$(ls -d /usr/src/linux-headers-*-amd64 2>/dev/null | sort -V | tail -1)
	[ -n "$headers" ] || { echo "bench: bcc needs kernel headers: apt-get install linux-headers-amd64" >&2; exit 1; }
	mkdir -p "$work/kheaders"
	cp -rs "${headers%-amd64}-common/." "$work/kheaders/"
	cp -rs --remove-destination "$headers/." "$work/kheaders/"
	bcc_source=$work/kheaders
fi

# PID's CPU time so far in ms: the time on CPU of each of its threads
# (/proc/PID/task/*/schedstat, in ns; utime+stime of /proc/PID/stat count
# in ticks of 10 ms, too coarse for a profiler at 99 Hz).
cpu_ms() { # PID
	cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{s += $1} END {print s / 1e6}'
}

prog_ids() { # PID: the ids of the BPF programs the process holds fds of
	grep -h '^prog_id:' /proc/"$1"/fdinfo/* 2>/dev/null | awk '{print $2}' | sort -u
}

bpf_ns() { # PID: run_time_ns summed over its programs
	local ids
	ids=$(prog_ids "$1" | paste -sd, -)
	[ -n "$ids" ] || { echo 0; return; }
	bpftool prog show -j | jq --arg ids ",$ids," '[.[] | select((.id | tostring) as $id | $ids | contains("," + $id + ",")) | .run_time_ns // 0] | add // 0'
}

# The profiler by variant name, for target PID at FREQ: exec'd, so that
# a background call's pid is the profiler's.
profiler() { # VARIANT PID FREQ
	case $1 in
	topdown-count) exec "$out/topdown" collect --pid "$2" --duration 1h --db "$work/td.db" ;;
	topdown-sample) exec "$out/topdown" collect --pid "$2" --sample --sample-freq "$3" --duration 1h --db "$work/td.db" ;;
	perf-record) exec perf record -e cpu-clock -F "$3" -g -p "$2" -o "$work/perf.data" ;;
	bcc-profile) exec env ${bcc_source:+BCC_KERNEL_SOURCE="$bcc_source"} profile-bpfcc -F "$3" -p "$2" ;;
	esac
}

# Starts VARIANT on PID at FREQ in the background and waits until it has
# attached: a BPF profiler once its sampling program is loaded (its fds
# name it), perf once it has opened its events; prints the profiler's pid.
start_profiler() { # VARIANT PID FREQ
	local pid
	profiler "$@" >"$work/profiler.out" 2>"$work/profiler.err" &
	pid=$!
	for _ in $(seq 300); do
		kill -0 $pid 2>/dev/null || { echo "bench: $1 exited:" >&2; cat "$work/profiler.err" >&2; exit 1; }
		case $1 in
		perf-record) ls -l /proc/$pid/fd 2>/dev/null | grep -q perf_event && break ;;
		topdown-count) [ "$(prog_ids $pid | wc -l)" -gt 3 ] && break ;;
		*) bpftool prog show -j | jq -e --arg ids ",$(prog_ids $pid | paste -sd, -)," \
			'any(.[]; .type == "perf_event" and ((.id | tostring) as $id | $ids | contains("," + $id + ",")))' >/dev/null && break ;;
		esac
		sleep 0.1
	done
	sleep 1 # topdown's first setup, bcc's first symbol reads
	echo $pid
}

stop_profiler() { # PID
	kill -TERM "$1" 2>/dev/null || true
	wait "$1" 2>/dev/null || true
}

# One measurement of the pipe workload under VARIANT at FREQ: prints
# "ops/s profiler_cpu_ms bpf_ms window_s".
pipe_once() { # VARIANT FREQ
	local w p=- c0=0 c1=0 b0=0 b1=0 t0 t1 ops
	rm -f "$work/go"
	mkfifo "$work/go"
	# shellcheck disable=SC2016
	sh -c 'read _ <"$0"; exec taskset -c 0 perf bench sched pipe -T -l "$1"' "$work/go" "$pipe_loops" >"$work/pipe.out" &
	w=$!
	if [ "$1" != none ]; then
		p=$(start_profiler "$1" $w "$2")
		c0=$(cpu_ms "$p")
		b0=$(bpf_ns "$p")
	fi
	t0=$(date +%s%N)
	echo go >"$work/go"
	wait $w
	t1=$(date +%s%N)
	if [ "$p" != - ]; then
		c1=$(cpu_ms "$p")
		b1=$(bpf_ns "$p")
		stop_profiler "$p"
	fi
	rm -f "$work/perf.data"
	ops=$(awk '/ops\/sec/ {print $1}' "$work/pipe.out")
	echo "$ops $(awk -v a="$c0" -v b="$c1" 'BEGIN {print b - a}') $(awk -v a="$b0" -v b="$b1" 'BEGIN {print (b - a) / 1e6}') $(awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) / 1e9}')"
}

# One measurement of redis-server under VARIANT at FREQ, as pipe_once.
redis_once() { # VARIANT FREQ
	local p=- c0=0 c1=0 b0=0 b1=0 t0 t1 rps
	if [ "$1" != none ]; then
		p=$(start_profiler "$1" "$redis_pid" "$2")
		c0=$(cpu_ms "$p")
		b0=$(bpf_ns "$p")
	fi
	t0=$(date +%s%N)
	rps=$(taskset -c 1 redis-benchmark -p "$redis_port" -t get -n "$redis_requests" -c 50 --csv |
		awk -F'"' '$2 == "GET" {print $4}')
	t1=$(date +%s%N)
	if [ "$p" != - ]; then
		c1=$(cpu_ms "$p")
		b1=$(bpf_ns "$p")
		stop_profiler "$p"
	fi
	echo "$rps $(awk -v a="$c0" -v b="$c1" 'BEGIN {print b - a}') $(awk -v a="$b0" -v b="$b1" 'BEGIN {print (b - a) / 1e6}') $(awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) / 1e9}')"
}

overhead() { # WORKLOAD (pipe|redis)
	local variants=(none topdown-count) samples=$work/$1.samples v f line n i
	for f in $freqs; do variants+=("topdown-sample@$f" "perf-record@$f" "bcc-profile@$f"); done
	n=${#variants[@]}
	: >"$samples"
	for round in $(seq "$rounds"); do
		for i in $(seq 0 $((n - 1))); do
			v=${variants[$(((i + round) % n))]}
			line=$("$1_once" "${v%@*}" "${v#*@}")
			echo "$round $v $line" >>"$samples"
		done
		echo "$1: round $round/$rounds done" >&2
	done
	# the slowdown of each measurement against its round's baseline
	awk 'NR == FNR { if ($2 == "none") base[$1] = $3; next }
	     { print $0, base[$1] / $3 }' "$samples" "$samples" >"$samples.ratio"
	echo
	echo "### $1"
	echo
	echo "| variant | Hz | throughput (median) | slowdown vs none: median (min-max) | profiler CPU, % of the window | BPF program, % of the window |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: |"
	for v in "${variants[@]}"; do
		f=${v#*@}
		[ "$f" = "$v" ] && f=-
		awk -v v="$v" '$2 == v' "$samples.ratio" >"$work/one"
		echo "| ${v%@*} | $f | $(awk '{print $3}' "$work/one" | median) |" \
			"$(awk '{print $7}' "$work/one" | median | xargs printf '%.3f') ($(awk '{print $7}' "$work/one" | spread)) |" \
			"$(awk '{printf "%.2f\n", $4 / 10 / $6}' "$work/one" | median) |" \
			"$(awk '{printf "%.3f\n", $5 / 10 / $6}' "$work/one" | median) |"
	done
	echo
	echo "$rounds rounds; $(uname -r), $(nproc) CPUs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
}

run_memory() {
	local w t mode db=$work/mem.db sample
	echo
	echo "### memory: td-workload --stacks $nr_stacks, one 15 s interval at 4999 Hz"
	echo
	echo "| topdown | peak RSS (VmHWM) | BPF maps memlock | of which stack_traces + sample_counts | stacks stored | samples | samples lost |"
	echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"
	for mode in without-sample with-sample; do
		rm -f "$db"
		sample=()
		[ $mode = with-sample ] && sample=(--sample --sample-freq 4999)
		"$out/td-workload" --stacks "$nr_stacks" --io-threads 0 --duration-ms 17000 &
		w=$!
		sleep 0.2
		/usr/bin/time -f '%M' -o "$work/maxrss" "$out/topdown" collect --pid $w --duration 15s --interval 15s \
			--db "$db" "${sample[@]}" >/dev/null 2>"$work/mem.err" &
		t=$!
		sleep 5
		# the maps topdown (time's child) holds
		local td
		td=$(pgrep -P $t)
		grep -h '^map_id:' /proc/"$td"/fdinfo/* | awk '{print $2}' | sort -u | paste -sd, - >"$work/map_ids"
		bpftool map show -j | jq -r --arg ids ",$(cat "$work/map_ids")," \
			'.[] | select((.id | tostring) as $id | $ids | contains("," + $id + ",")) | "\(.name) \(.bytes_memlock)"' >"$work/maps"
		wait $t
		wait $w
		echo "| $mode | $(awk '{printf "%.1f MiB", $1 / 1024}' "$work/maxrss") |" \
			"$(awk '{s += $2} END {printf "%.1f MiB", s / 1048576}' "$work/maps") |" \
			"$(awk '$1 == "stack_traces" || $1 == "sample_counts" {s += $2} END {printf "%.1f MiB", s / 1048576}' "$work/maps") |" \
			"$(sqlite3 "$db" 'select count(*) from profile_stacks') |" \
			"$(sqlite3 "$db" 'select coalesce(sum(samples), 0) from profiles') |" \
			"$(sqlite3 "$db" 'select coalesce(sum(lost_samples), 0) from profiles') |"
	done
}

# Samples per stored key in runs of one interval of 1 s (one drain each).
keys_of() { # NAME PID FREQ: "keys samples" of each of ROUNDS runs
	local db=$work/keys.db
	for _ in $(seq "$rounds"); do
		rm -f "$db"
		"$out/topdown" collect --pid "$2" --sample --sample-freq "$3" --duration 1s --interval 1s \
			--db "$db" >/dev/null 2>&1
		echo "$(sqlite3 "$db" 'select count(*) from profile_stacks') $(sqlite3 "$db" 'select sum(samples) from profiles')"
	done
}

run_keys() {
	local w b f
	echo
	echo "### keys: samples per (thread, stack) key in one 1 s drain"
	echo
	echo "| workload | Hz | keys per drain (median) | samples per drain (median) | samples per key: median (min-max) |"
	echo "| --- | ---: | ---: | ---: | ---: |"
	[ -n "$redis_pid" ] || redis_start 0 "$work/redis.log"
	taskset -c 1 redis-benchmark -p "$redis_port" -t get,set,lpush,lpop,incr -n 100000000 -c 50 -q >/dev/null 2>&1 &
	b=$!
	"$out/td-workload" --split --io-threads 0 --duration-ms 3600000 &
	w=$!
	sleep 1
	for f in $freqs; do
		for target in "redis-server $redis_pid" "td-workload-split $w"; do
			set -- $target
			keys_of "$1" "$2" "$f" | awk '{print $1, $2, $2 / $1}' >"$work/keys"
			echo "| $1 | $f | $(awk '{print $1}' "$work/keys" | median) | $(awk '{print $2}' "$work/keys" | median) |" \
				"$(awk '{print $3}' "$work/keys" | median | xargs printf '%.2f') ($(awk '{print $3}' "$work/keys" | spread)) |"
		done
	done
	kill $b $w
	wait $b $w 2>/dev/null || true
}

for part in $parts; do
	case $part in
	overhead)
		overhead pipe
		redis_start 0 "$work/redis.log"
		overhead redis ;;
	memory) run_memory ;;
	keys) run_keys ;;
	*) echo "bench: no part '$part' (overhead memory keys)" >&2; exit 1 ;;
	esac
done
