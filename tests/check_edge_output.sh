#!/usr/bin/env bash
# Output at the command line's edge:
# - a full standard output (/dev/full) fails every command with one line
#   and exit 1, and a reader leaving early (| head) stops it quietly;
# - --output never replaces a device, a FIFO or a symbolic link: a device
#   or FIFO is written in place, a link's target is replaced and the link
#   stays, a regular file is replaced whole (a new inode) with the umask's
#   mode;
# - names from the profiled program (a thread renamed with prctl, a
#   function renamed with objcopy, a file named with escapes) reach the
#   terminal escaped: no raw ESC or BEL in any command's text output.
# Collecting needs root, BPF and a C compiler; without them those parts are
# left out and the last line says so.
#
# usage: tests/check_edge_output.sh BUILD_DIR   (from the project root)
set -u
out=$(realpath "${1:-build}")
topdown=$out/topdown
work=$(mktemp -d)
spinner=
trap '[ -n "$spinner" ] && kill "$spinner" 2>/dev/null; rm -rf "$work"' EXIT
fail() { echo "edge output: $*"; exit 1; }
skipped=()
# A workload in the background for as long as a step needs it (stop_workload ends it).
start_workload() { # PROGRAM
	"$1" 60 &
	spinner=$!
	sleep 0.3
}
stop_workload() {
	kill "$spinner" 2>/dev/null
	wait "$spinner" 2>/dev/null
	spinner=
}
export TOPDOWN_DB_PATH=$work/default.db # nothing reaches the user's own store

db=$work/runs.db
for label in build=old build=new; do
	"$topdown" import tests/data/import/skx-l1.csv --cpu-model skx --label "$label" --db "$db" >/dev/null 2>&1 ||
		fail "cannot import tests/data/import/skx-l1.csv"
done
mapfile -t runs < <("$topdown" list --json --db "$db" | grep -o '"run_id": "[^"]*"' | cut -d'"' -f4)
[ ${#runs[@]} -eq 2 ] || fail "the two imported runs are not listed"

# ---- standard output on a full device ----

# COMMAND... > /dev/full: exit 1 and the system's reason, named for the command.
full_stdout() {
	local err rc
	err=$("$@" 2>&1 >/dev/full)
	rc=$?
	[ $rc -eq 1 ] || fail "'$*' >/dev/full exited $rc, not 1: $err"
	grep -qx "topdown $2: cannot write to standard output: No space left on device" <<<"$err" ||
		fail "'$*' >/dev/full did not say why: $err"
}
full_stdout "$topdown" list --db "$db"
full_stdout "$topdown" query --db "$db"
full_stdout "$topdown" query --csv --db "$db"
full_stdout "$topdown" query --json --db "$db"
full_stdout "$topdown" query --tree --db "$db"
full_stdout "$topdown" explain Frontend_Bound
full_stdout "$topdown" explain --list --json
full_stdout "$topdown" compare "${runs[0]}" "${runs[1]}" --db "$db"
full_stdout "$topdown" export --format csv --db "$db"
full_stdout "$topdown" export --db "$db"
full_stdout "$topdown" doctor
full_stdout "$topdown" doctor --json

# A reader that leaves early is no error: the command stops, quietly.
err=$( { sleep 0.3; "$topdown" export --db "$db" 2>"$work/pipe.err"; } | true; cat "$work/pipe.err")
[ -z "$err" ] || fail "a closed pipe made export say: $err"
# With SIGPIPE ignored by the caller, the write fails with EPIPE: said, exit 1.
(
	trap '' PIPE
	{ sleep 0.3; "$topdown" export --db "$db" 2>"$work/pipe.err"; echo $? >"$work/pipe.rc"; } | true
)
[ "$(cat "$work/pipe.rc")" = 1 ] && grep -qx "topdown export: cannot write to standard output: Broken pipe" "$work/pipe.err" ||
	fail "export into a closed pipe, SIGPIPE ignored: exit $(cat "$work/pipe.rc"), said: $(cat "$work/pipe.err")"

# ---- what --output does to each kind of path ----

# The collected run with samples, when collecting works here: flamegraph needs one.
can_collect=
if [ "$(id -u)" -ne 0 ]; then
	skipped+=("collecting needs root")
elif ! command -v cc >/dev/null || ! command -v objcopy >/dev/null; then
	skipped+=("collecting: no cc or objcopy to build the renamed workload")
else
	can_collect=1
fi

# A program whose only thread calls itself ESC [31m BEL and spins in a
# function renamed ESC ]0;pwn BEL (a window title, were it printed raw).
if [ -n "$can_collect" ]; then
	cat >"$work/spin.c" <<'EOF'
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long spin_here(double until)
{
	volatile unsigned long n = 0;

	while (now() < until)
		for (int i = 0; i < 100000; i++)
			n++;
	return n;
}

int main(int argc, char **argv)
{
	prctl(PR_SET_NAME, "\x1b[31m\x07", 0, 0, 0);
	return spin_here(now() + (argc > 1 ? atof(argv[1]) : 3)) == 0;
}
EOF
	cc -O1 -c "$work/spin.c" -o "$work/spin.o" &&
		objcopy --redefine-sym spin_here=$'\e]0;pwn\a' "$work/spin.o" &&
		cc "$work/spin.o" -o "$work/spin" || fail "cannot build the renamed workload"
	start_workload "$work/spin"
	sampled=$work/sampled.db
	"$topdown" collect --pid "$spinner" --duration 2s --sample --db "$sampled" >"$work/collect.out" 2>"$work/collect.err"
	rc=$?
	stop_workload
	if [ $rc -ne 0 ] && grep -qi "bpf\|permission" "$work/collect.err"; then
		skipped+=("collecting: $(tail -1 "$work/collect.err")")
		can_collect=
	elif [ $rc -ne 0 ]; then
		fail "collect failed ($rc): $(cat "$work/collect.err")"
	fi
fi

# The commands that take --output, each with what it needs to write.
outputs=("export --db $db" "report --db $db")
[ -n "$can_collect" ] && outputs+=("flamegraph --db $sampled" "export --format folded --db $sampled")

# mknod twins of /dev/null and /dev/full: written, never replaced.
if mknod "$work/null" c 1 3 2>/dev/null && mknod "$work/full" c 1 7 2>/dev/null; then
	for cmd in "${outputs[@]}"; do
		# shellcheck disable=SC2086 # cmd is words
		"$topdown" $cmd --output "$work/null" >/dev/null 2>"$work/err" || fail "$cmd --output (a /dev/null): $(cat "$work/err")"
		[ "$(stat -c %F:%t:%T "$work/null")" = "character special file:1:3" ] || fail "$cmd replaced a /dev/null twin"
		# shellcheck disable=SC2086
		"$topdown" $cmd --output "$work/full" >/dev/null 2>"$work/err"
		rc=$?
		[ $rc -eq 1 ] || fail "$cmd --output (a /dev/full) exited $rc"
		grep -q "cannot write to '$work/full': No space left on device" "$work/err" ||
			fail "$cmd --output (a /dev/full) said: $(cat "$work/err")"
		[ "$(stat -c %F:%t:%T "$work/full")" = "character special file:1:7" ] || fail "$cmd replaced a /dev/full twin"
	done
else
	skipped+=("device twins: mknod is not permitted here")
fi

for cmd in "${outputs[@]}"; do
	# A symbolic link: the link stays, its target gets the content.
	mkdir -p "$work/elsewhere"
	echo old >"$work/elsewhere/target"
	ln -sfn elsewhere/target "$work/link"
	# shellcheck disable=SC2086
	"$topdown" $cmd --output "$work/link" >/dev/null 2>"$work/err" || fail "$cmd --output LINK: $(cat "$work/err")"
	[ -L "$work/link" ] && [ "$(readlink "$work/link")" = elsewhere/target ] || fail "$cmd replaced the symbolic link"
	[ -f "$work/elsewhere/target" ] && [ "$(head -c 3 "$work/elsewhere/target")" != old ] &&
		[ -s "$work/elsewhere/target" ] || fail "$cmd did not write the link's target"
	[ "$(ls -A "$work/elsewhere")" = target ] || fail "$cmd left a temporary file: $(ls -A "$work/elsewhere")"

	# A FIFO: written in place, read by a cat in the background.
	rm -f "$work/fifo" "$work/from-fifo"
	mkfifo "$work/fifo"
	timeout 30 cat "$work/fifo" >"$work/from-fifo" &
	reader=$!
	# shellcheck disable=SC2086
	timeout 30 "$topdown" $cmd --output "$work/fifo" >/dev/null 2>"$work/err" || fail "$cmd --output FIFO: $(cat "$work/err")"
	wait $reader || fail "the FIFO's reader failed after $cmd"
	[ -p "$work/fifo" ] || fail "$cmd replaced the FIFO"
	# shellcheck disable=SC2086
	"$topdown" $cmd >"$work/to-stdout" 2>/dev/null
	[ -s "$work/from-fifo" ] && [ "$(wc -c <"$work/from-fifo")" -eq "$(wc -c <"$work/to-stdout")" ] ||
		fail "$cmd through a FIFO wrote $(wc -c <"$work/from-fifo") bytes, to stdout $(wc -c <"$work/to-stdout")"

	# A regular file: replaced whole (a new inode; a hard link keeps the old
	# content), with the mode the umask gives, whatever the old file's was.
	rm -rf "$work/plain"
	mkdir "$work/plain"
	echo old >"$work/plain/out"
	chmod 600 "$work/plain/out"
	ln "$work/plain/out" "$work/plain/old"
	# shellcheck disable=SC2086
	(umask 027 && "$topdown" $cmd --output "$work/plain/out" >/dev/null 2>"$work/err") ||
		fail "$cmd --output FILE: $(cat "$work/err")"
	[ "$(cat "$work/plain/old")" = old ] || fail "$cmd rewrote the file in place instead of replacing it"
	[ "$(stat -c %a "$work/plain/out")" = 640 ] || fail "$cmd gave mode $(stat -c %a "$work/plain/out") under umask 027"
	[ -s "$work/plain/out" ] || fail "$cmd wrote an empty file"
	[ "$(ls -A "$work/plain" | tr '\n' ' ')" = "old out " ] || fail "$cmd left a temporary file: $(ls -A "$work/plain")"
done

# ---- names from outside, escaped on the terminal ----

# COMMAND...: no raw ESC or BEL on stdout or stderr; the escaped form shown.
no_raw_controls() { # WANT COMMAND...
	local want=$1
	shift
	"$@" >"$work/text" 2>&1
	if LC_ALL=C grep -q $'[\e\a]' "$work/text"; then
		fail "'$*' printed a raw ESC or BEL: $(LC_ALL=C cat -v "$work/text" | LC_ALL=C grep -m1 '\^\[\|\^G')"
	fi
	grep -qF -- "$want" "$work/text" || fail "'$*' did not show '$want' escaped: $(head -c 600 "$work/text")"
}

# An imported file named with an escape: import's line, the source= label, list's PROCESS.
named=$work/$'bad\e]0;pwn\a.csv'
cp tests/data/import/skx-l1.csv "$named"
no_raw_controls 'bad\x1b]0;pwn\x07.csv' "$topdown" import "$named" --cpu-model skx --db "$work/named.db"
no_raw_controls 'source=bad\x1b]0;pwn\x07.csv' "$topdown" list --db "$work/named.db"
no_raw_controls 'bad\x1b]0;pwn\x07' "$topdown" list --db "$work/named.db" --labels source
no_raw_controls 'bad\x1b]0;pwn\x07' "$topdown" query --bottleneck Frontend_Bound --min-pct 1 --db "$work/named.db"
no_raw_controls 'bad\x1b]0;pwn\x07' "$topdown" query --bottleneck Frontend_Bound --min-pct 1 --csv --db "$work/named.db"
# and an error line quoting it
no_raw_controls 'gone\x1b]0;pwn\x07.csv' "$topdown" import "$work/"$'gone\e]0;pwn\a.csv' --cpu-model skx --db "$work/named.db"
# usage errors quote what was typed: a bad value, an unknown option, an unknown command
no_raw_controls "'\x1b[31m\x07'" "$topdown" list --last $'\e[31m\a' --db "$work/named.db"
no_raw_controls '\x1b]0;pwn\x07' "$topdown" list $'--\e]0;pwn\a' --db "$work/named.db"
no_raw_controls "unknown command '\x1b]0;pwn\x07'" "$topdown" $'\e]0;pwn\a'
# A thread so named in an imported per-thread file: the thread tables and a comparison by thread.
sed 's/"io_thd_1-4250"/"\\u001b[31m\\u0007-4250"/' tests/data/import/neoverse-v2-l1-per-thread.json >"$work/threads.json"
for build in a b; do
	"$topdown" import "$work/threads.json" --cpu-model neoverse-v2 --label build=$build --db "$work/threads.db" \
		>/dev/null 2>&1 || fail "cannot import a per-thread file with a renamed thread"
done
no_raw_controls '\x1b[31m\x07' "$topdown" query --threads --db "$work/threads.db"
no_raw_controls '\x1b[31m\x07' "$topdown" query --threads --csv --db "$work/threads.db"
no_raw_controls '\x1b[*m\x07' "$topdown" compare --label-a build=a --label-b build=b --threads --db "$work/threads.db"
no_raw_controls '\x1b[*m\x07' "$topdown" compare --label-a build=a --label-b build=b --threads --csv --db "$work/threads.db"
LC_ALL=C "$topdown" list --json --db "$work/named.db" | grep -qiF 'bad\u001b]0;pwn\u0007' ||
	fail "list --json does not carry the name as JSON escapes"

if [ -n "$can_collect" ]; then
	no_raw_controls '\x1b[31m\x07' cat "$work/collect.out" "$work/collect.err"
	no_raw_controls '\x1b]0;pwn\x07' "$topdown" query --hot --db "$sampled"
	no_raw_controls '\x1b]0;pwn\x07' "$topdown" query --hot --csv --db "$sampled"
	no_raw_controls '\x1b]0:pwn\x07' "$topdown" query --folded --db "$sampled"
	no_raw_controls '\x1b]0:pwn\x07' "$topdown" export --format folded --db "$sampled"
	# A symbol that is not UTF-8: escaped bytewise in text, kept (made valid) in JSON.
	objcopy --redefine-sym $'\e]0;pwn\a'=$'bad\xff\xfename' "$work/spin.o" "$work/bad.o" &&
		cc "$work/bad.o" -o "$work/bad" || fail "cannot build the workload with a symbol that is not UTF-8"
	start_workload "$work/bad"
	"$topdown" collect --pid "$spinner" --duration 1s --sample --db "$work/bad.db" >/dev/null 2>&1 ||
		fail "cannot collect the workload with a symbol that is not UTF-8"
	stop_workload
	no_raw_controls 'bad\xff\xfename' "$topdown" query --hot --db "$work/bad.db"
	"$topdown" query --hot --json --db "$work/bad.db" | grep -qF '"function": "bad??name"' ||
		fail "query --hot --json lost a function whose name is not UTF-8"
	# The process named by its thread: collect --process, then list's PROCESS.
	start_workload "$work/spin"
	no_raw_controls '\x1b[31m\x07' "$topdown" collect --process $'\e[31m\a' --duration 1s --db "$sampled"
	no_raw_controls '\x1b[31m\x07' "$topdown" list --db "$sampled"
	# the agent's log names the processes it follows
	timeout 50 "$topdown" agent --process $'\e[31m\a' --every 1s --windows 1 --log "$work/agent.log" \
		--spool "$work/spool.db" --db "$work/agent.db" 2>"$work/err" ||
		fail "agent failed ($?): $(cat "$work/err" "$work/agent.log" | LC_ALL=C cat -v)"
	stop_workload
	no_raw_controls '\x1b[31m\x07' cat "$work/agent.log"
	# collect on a full standard output: stored, and the failed write said
	start_workload "$work/spin"
	full_stdout "$topdown" collect --pid "$spinner" --duration 1s --db "$sampled"
	stop_workload
fi

if [ ${#skipped[@]} -gt 0 ]; then
	(IFS=';' && echo "passed, without: ${skipped[*]}")
else
	echo "full stdout in every command, --output kinds, escaped names: all as expected"
fi
