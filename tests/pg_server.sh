#!/usr/bin/env bash
# A private PostgreSQL server for tests and benchmarks.
#
# usage: tests/pg_server.sh DIR
#
# Creates a cluster in DIR (which must not exist), starts it on a free port
# of 127.0.0.1 with its unix socket in DIR, and prints one line:
#   ready DSN        the server accepts connections (superuser "postgres")
#   skip REASON      no PostgreSQL server binaries here (exit 77)
#   error REASON     it could not start (exit 1; the server's log goes to stderr)
# Then it reads commands from its standard input, one a line, so a test
# can take the server away as an outage would and bring it back:
#   stop     stops the server (fast: open sessions are cut); prints "stopped"
#   start    starts it again on the same port and data; prints "ready DSN"
# When its standard input closes, which happens when the process that
# started it ends, however it ends, it stops the server and removes DIR.
# The caller keeps the write end of a pipe to our stdin open for as long as
# it needs the server.
#
# As root the server runs as the postgres user (PostgreSQL refuses root).
# PG_BINDIR overrides where initdb, pg_ctl and postgres are looked for.
set -u
dir=${1:?usage: pg_server.sh DIR}

find_bindir() {
	local d
	if [ -n "${PG_BINDIR:-}" ]; then echo "$PG_BINDIR"; return; fi
	# Debian keeps the server binaries off PATH, one directory per version.
	d=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	if [ -n "$d" ]; then echo "$d"; return; fi
	d=$(command -v initdb) && dirname "$d"
}

bindir=$(find_bindir)
if [ -z "$bindir" ] || [ ! -x "$bindir/initdb" ] || [ ! -x "$bindir/pg_ctl" ]; then
	echo "skip no PostgreSQL server binaries (install Debian's postgresql package, or set PG_BINDIR)"
	exit 77
fi

as_owner=()
if [ "$(id -u)" -eq 0 ]; then
	if ! id postgres >/dev/null 2>&1; then
		echo "error running as root needs the postgres user, which the postgresql package creates"
		exit 1
	fi
	as_owner=(runuser -u postgres --)
fi

mkdir -p "$(dirname "$dir")" && mkdir "$dir" || { echo "error cannot create $dir"; exit 1; }
dir=$(cd "$dir" && pwd) # the server changes directory: paths must be absolute
[ ${#as_owner[@]} -gt 0 ] && chown postgres: "$dir"
# The socket path must fit in sun_path (108 bytes) with its file name.
sockdir=$dir
[ ${#dir} -gt 80 ] && sockdir=$(mktemp -d /tmp/td-pgsock.XXXXXX) && {
	[ ${#as_owner[@]} -gt 0 ] && chown postgres: "$sockdir"
}

stop() {
	"${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m immediate stop >/dev/null 2>&1
	rm -rf "$dir"
	[ "$sockdir" != "$dir" ] && rm -rf "$sockdir"
}
trap stop EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "error $1"
	tail -20 "$dir"/*.log >&2 2>/dev/null
	exit 1
}

"${as_owner[@]}" test -w "$dir" ||
	fail "the postgres user cannot write $dir; build in a directory it can reach"
"${as_owner[@]}" "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 \
	--locale=C --no-sync >"$dir/initdb.log" 2>&1 || fail "initdb failed"

start_server() {
	# fsync off: the cluster is thrown away at the end.
	"${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 \
		-o "-p $port -k $sockdir -c listen_addresses=127.0.0.1 -F" start >/dev/null 2>&1
}

# A free port: try a few at random; pg_ctl -w fails when the port is taken.
started=
for attempt in 1 2 3 4 5 6 7 8; do
	port=$((20000 + RANDOM % 40000))
	if start_server; then
		started=1
		break
	fi
done
[ -n "$started" ] || fail "the server did not start"

ready="ready host=$sockdir port=$port user=postgres dbname=postgres"
echo "$ready"
# Until the caller goes away.
while read -r command; do
	case $command in
	stop)
		if "${as_owner[@]}" "$bindir/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1
		then echo stopped
		else echo "error the server did not stop"
		fi ;;
	start)
		if start_server; then echo "$ready"
		else echo "error the server did not start again on port $port"
		fi ;;
	*) echo "error unknown command '$command': use stop or start" ;;
	esac
done
