# A private PostgreSQL server for the bench scripts (tests/pg_server.sh),
# sourced: pg_private_start DIR starts one with its data in DIR (which must
# not exist) and sets pg_dsn; pg_private_stop stops it, and DIR goes with
# it. The server lives while our end of the pipe to its stdin stays open.
pg_private_keep=
pg_private_dir=

pg_private_start() {
	pg_private_dir=$1
	local state
	exec {pg_private_keep}> >(tests/pg_server.sh "$pg_private_dir" >"$pg_private_dir.status")
	# initdb takes seconds, more on a busy host.
	for _ in $(seq 600); do
		grep -q . "$pg_private_dir.status" 2>/dev/null && break
		sleep 0.1
	done
	read -r state pg_dsn <"$pg_private_dir.status" || state="did not start within 60 s"
	[ "$state" = ready ] || { echo "bench: PostgreSQL: $state $pg_dsn" >&2; return 1; }
}

pg_private_stop() {
	[ -n "$pg_private_keep" ] || return 0
	exec {pg_private_keep}>&-
	pg_private_keep=
	# The server removes its directory once stopped.
	for _ in $(seq 300); do
		[ -d "$pg_private_dir" ] || break
		sleep 0.1
	done
	rm -f "$pg_private_dir.status"
}
