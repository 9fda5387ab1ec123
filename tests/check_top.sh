#!/usr/bin/env bash
# topdown top as a person uses it, in a terminal tmux provides: the
# workload's threads appear and their figures move, the keys sort, filter,
# pause, group and show the help, a resize redraws, q and ^C give the
# terminal back; then --batch frames, their end when the target exits, and
# the one-line refusals.
#
# usage: tests/check_top.sh BUILD_DIR   (from the project root; as root)
# exit 0 when all pass, 77 when it cannot run here (the last line says
# why), else 1 with what failed.
set -u
out=$(realpath "${1:-build}")
[ "$(id -u)" -eq 0 ] || { echo "skipped: topdown top loads BPF, which needs root"; exit 77; }
command -v tmux >/dev/null || { echo "skipped: tmux is missing (make deps installs it)"; exit 77; }
topdown=$out/topdown
work=$(mktemp -d)
failures=()
# A server of our own for each start: a shared host may run other tmux
# servers as root, and a new session on the socket of a server that
# kill-server is still stopping meets "server exited unexpectedly".
starts=0
tmux=(tmux -L "td-check-top-$$-$starts" -f /dev/null)
cleanup() {
	"${tmux[@]}" kill-server 2>/dev/null
	rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/td-check-top-$$-"*
	[ -n "${workload:-}" ] && kill "$workload" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAILED: $*"; failures+=("$*"); }

"$out/td-workload" --duration-ms 40000 --io-threads 2 >/dev/null 2>&1 &
workload=$!

capture() { "${tmux[@]}" capture-pane -p -t top; }
# The table's rows: below the column titles, above the key line.
rows() { capture | sed -n '4,$p' | grep -v -e '^c s w n' -e '^filter by name' -e '^$'; }
# Waits up to 8 s for the pane to show (or with "!" not show) an extended regex.
wait_for() {
	local not=0
	[ "$1" = "!" ] && { not=1; shift; }
	for _ in $(seq 80); do
		if capture | grep -Eq -- "$1"; then [ $not = 0 ] && return 0; else [ $not = 1 ] && return 0; fi
		sleep 0.1
	done
	return 1
}
keys() { "${tmux[@]}" send-keys -t top "$@"; sleep 0.3; }
start_top() {
	"${tmux[@]}" kill-server 2>/dev/null
	starts=$((starts + 1))
	tmux=(tmux -L "td-check-top-$$-$starts" -f /dev/null)
	"${tmux[@]}" new-session -d -s top -x 120 -y 30 \
		"$topdown top --pid $workload; echo top-exited-\$?; sleep 60" 2>"$work/tmux.err" ||
		{ fail "tmux did not start a session: $(tr '\n' ' ' <"$work/tmux.err")"; return 1; }
	wait_for '^spinner ' || { capture; fail "no spinner row within 8 s"; return 1; }
}

if start_top; then
	capture | grep -q '^io_thd_1 ' && capture | grep -q '^io_thd_2 ' || fail "the io_thd_* threads are missing"
	capture | grep -q '^Top-Down ' || fail "no Top-Down status line"

	first=$(rows) && sleep 2.2 && second=$(rows)
	[ "$first" != "$second" ] || fail "the figures did not move in 2 s"

	keys g
	wait_for '^io_thd_\* +2 ' || fail "g: no io_thd_* group of 2 threads"
	capture | grep -q '^GROUP ' || fail "g: the columns do not say GROUP"
	keys g
	wait_for '^THREAD ' || fail "g again: not back to threads"

	keys n
	wait_for 'sorted by THREAD' || fail "n: the summary does not say sorted by THREAD"
	[[ $(rows | head -1) == io_thd_1* ]] || fail "n: the first row is not io_thd_1: $(rows | head -1)"
	keys c
	wait_for 'sorted by ONCPU%' || fail "c: the summary does not say sorted by ONCPU%"
	[[ $(rows | head -1) == spinner* ]] || fail "c: the busiest row is not the spinner: $(rows | head -1)"
	keys '>'
	wait_for 'sorted by VOL-SW' || fail "> did not move the sort to VOL-SW"
	keys '<'
	wait_for 'sorted by ONCPU%' || fail "< did not move the sort back to ONCPU%"

	keys / s p i n Enter
	wait_for "filter 'spin' \(2 hidden\)" || fail "/spin: the summary shows no filter"
	sleep 1.2
	[ "$(rows | grep -vc '^spinner ')" = 0 ] && [ "$(rows | grep -c '^spinner ')" = 1 ] ||
		fail "/spin: rows other than the spinner: $(rows)"
	keys / BSpace BSpace BSpace BSpace Enter
	wait_for '^io_thd_1 ' || fail "clearing the filter did not bring io_thd_1 back"

	keys p
	wait_for '\[PAUSED\]' || fail "p: no [PAUSED]"
	first=$(rows) && sleep 2.2 && second=$(rows)
	[ "$first" = "$second" ] || fail "p: the figures moved while paused"
	keys ' '
	wait_for ! '\[PAUSED\]' || fail "space: still paused"

	keys h
	wait_for 'topdown top: keys' || fail "h: no help"
	capture | grep -q 'filter by name substring' || fail "h: the help does not list /"
	keys x
	wait_for ! 'topdown top: keys' || fail "a key did not close the help"
	keys '?'
	wait_for 'topdown top: keys' || fail "?: no help"
	keys x

	"${tmux[@]}" resize-window -t top -x 80 -y 20
	sleep 1.5
	capture >"$work/small"
	[ "$(wc -l <"$work/small")" -eq 20 ] || fail "resize: the pane has $(wc -l <"$work/small") lines, not 20"
	awk 'length > 80 { bad = 1 } END { exit bad }' "$work/small" || fail "resize: lines wider than 80 columns"
	grep -q '^THREAD ' "$work/small" && grep -q '^spinner ' "$work/small" ||
		fail "resize: the table is not drawn at 80x20"
	[[ $(tail -1 "$work/small") == "c s w n"* ]] || fail "resize: the key line is not the last line"
	! grep -q $'\e' "$work/small" || fail "resize: escape sequences left on screen"

	keys q
	wait_for '^top-exited-0$' || fail "q: top did not exit 0"
	! capture | grep -Eq 'ONCPU%|^spinner ' || fail "q: the curses frame is still on screen"
fi

if start_top; then
	keys C-c
	wait_for '^top-exited-0$' || fail "^C: top did not exit 0"
	! capture | grep -Eq 'ONCPU%|^spinner ' || fail "^C: the curses frame is still on screen"
fi

"$topdown" top --pid "$workload" --batch --iterations 2 >"$work/batch" 2>"$work/batch.err"
rc=$?
[ $rc -eq 0 ] || fail "--batch --iterations 2 exited $rc: $(cat "$work/batch.err")"
[ "$(grep -c '^topdown top .*threads in' "$work/batch")" -eq 2 ] || fail "--batch: not two frame headers"
[ "$(grep -c '^spinner ' "$work/batch")" -eq 2 ] || fail "--batch: not a spinner row in each frame"

# --batch without --iterations ends by itself once its target has exited:
# a workload of 2 s, and top given up to 20 s to notice
"$out/td-workload" --duration-ms 2000 >/dev/null 2>&1 &
short=$!
timeout 20 "$topdown" top --pid "$short" --batch --interval 200ms >"$work/ends" 2>"$work/ends.err"
rc=$?
wait "$short"
[ $rc -eq 0 ] || fail "--batch after its target exited: exit $rc (124: still running), $(tail -1 "$work/ends.err")"
[ "$(tail -1 "$work/ends.err")" = "topdown top: every target has exited" ] ||
	fail "--batch after its target exited: the last line on stderr is '$(tail -1 "$work/ends.err")'"
grep -q '^spinner ' "$work/ends" || fail "--batch after its target exited: no spinner row before the end"

"$topdown" top --pid "$workload" </dev/null >"$work/notty" 2>&1
rc=$?
[ $rc -eq 2 ] && grep -q 'use --batch' "$work/notty" && [ "$(wc -l <"$work/notty")" -eq 1 ] ||
	fail "stdout not a terminal: exit $rc, $(cat "$work/notty")"
for args in "--pid abc" "--pid 1 --system-wide" ""; do
	# shellcheck disable=SC2086 # the arguments are words
	t=$("$topdown" top $args --batch 2>&1); rt=$?
	# shellcheck disable=SC2086
	c=$("$topdown" collect $args 2>&1); rc=$?
	[ $rt -eq 2 ] && [ $rc -eq 2 ] && [ "${t//topdown top/topdown collect}" = "$c" ] ||
		fail "top $args said '$t' ($rt), collect '$c' ($rc)"
done

if [ ${#failures[@]} -ne 0 ]; then
	echo "topdown top: ${#failures[@]} checks failed: ${failures[*]}"
	exit 1
fi
echo "topdown top: screen, keys, resize, q and ^C, --batch and refusals checked"
