#!/usr/bin/env bash
# What `topdown top` costs itself at a 1 s refresh, watching a process of
# THREADS threads (default 1,000; bench/many_threads.c, each waking every
# 100 ms): top's own user+system CPU time over SECONDS (default 30) from
# /proc/<top>/stat, after a first frame, in --batch mode (frames to
# /dev/null) and on the curses screen (tmux, 200x50), with ps -o time at
# the end of each.
#
# usage: sudo bench/bench_top.sh [BUILD_DIR] [THREADS] [SECONDS]
# Prints a Markdown table that names the commands.
set -euo pipefail
out=${1:-build}
threads=${2:-1000}
seconds=${3:-30}
topdown=$(realpath "$out/topdown")
tmux=(tmux -L "td-bench-top-$$" -f /dev/null)
trap '"${tmux[@]}" kill-server 2>/dev/null || true; kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true' EXIT

[ "$(id -u)" -eq 0 ] || { echo "bench: needs root (BPF)" >&2; exit 1; }
command -v tmux >/dev/null || { echo "bench: needs tmux (make deps installs it)" >&2; exit 1; }
make -s --no-print-directory OUT="$out" "$out/td-many-threads"
"$out/td-many-threads" "$threads" $((2 * seconds + 30)) &
target=$!
sleep 2
live=$(ls "/proc/$target/task" | wc -l)
tck=$(getconf CLK_TCK)

# utime + stime of pid, in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# Measures pid over the window, after a 1.5 s start (BPF load, first frame).
measure() { # pid label command
	local pid=$1 a b
	sleep 1.5
	a=$(cpu_ticks "$pid")
	sleep "$seconds"
	b=$(cpu_ticks "$pid")
	printf '| %s | `%s` | %d | %.2f s | %.2f%% | %s |\n' "$2" "$3" "$live" "$(echo "($b - $a) / $tck" | bc -l)" \
		"$(echo "100 * ($b - $a) / $tck / $seconds" | bc -l)" "$(ps -o time= -p "$pid" | tr -d ' ')"
}

echo "| mode | command | threads watched | top's CPU over ${seconds} s | of one CPU | ps -o time at the end |"
echo "| --- | --- | ---: | ---: | ---: | ---: |"
cmd="topdown top --pid PID --batch > /dev/null"
"$topdown" top --pid "$target" --batch >/dev/null 2>&1 &
top=$!
measure "$top" "--batch" "$cmd"
kill -INT "$top"
wait "$top" || true

cmd="topdown top --pid PID (tmux 200x50)"
"${tmux[@]}" new-session -d -x 200 -y 50 "exec $topdown top --pid $target"
top=$("${tmux[@]}" display-message -p '#{pane_pid}')
measure "$top" "screen" "$cmd"
"${tmux[@]}" send-keys q
