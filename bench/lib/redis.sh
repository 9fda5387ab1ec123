# A redis-server of the bench's own, for bench/locate.sh and
# bench/bench_redis.sh (sourced, not run): loopback, a free port, no
# persistence (no RDB snapshot or AOF write lands in a measurement), logging
# to a file. Needs redis-server and redis-tools (bench-only packages, see
# docs/BENCHMARKS.md).
#
# redis_start CPUS LOGFILE [REDIS_OPTION...]: starts $redis_server (by
# default redis-server; a bench may point it at a link of another name)
# pinned to CPUS (taskset's list) and waits for its PONG; sets redis_port
# and redis_pid. Exits the bench with one line if it does not answer
# within 10 s.
redis_server=redis-server
redis_port=
redis_pid=

redis_start() {
	local cpus=$1 log=$2
	shift 2
	redis_port=$(awk 'BEGIN {srand(); print 20000 + int(rand() * 20000)}')
	while ss -ltn | grep -q ":$redis_port "; do redis_port=$((redis_port + 1)); done
	taskset -c "$cpus" "$redis_server" --port "$redis_port" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --logfile "$log" "$@" &
	redis_pid=$!
	for _ in $(seq 100); do
		redis-cli -p "$redis_port" ping 2>/dev/null | grep -q PONG && return
		sleep 0.1
	done
	echo "bench: redis-server did not start (see $log)" >&2
	exit 1
}

# redis_stop: stops it (SIGTERM: redis shuts down at once without persistence).
redis_stop() {
	[ -n "$redis_pid" ] || return 0
	kill "$redis_pid" 2>/dev/null || true
	wait "$redis_pid" 2>/dev/null || true
	redis_pid=
}
