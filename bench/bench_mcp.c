// SPDX-License-Identifier: BSD-3-Clause
/*
 * bench_mcp: how fast `topdown mcp-serve` answers, measured as a client
 * sees it: from writing a request on the server's stdin to reading the
 * whole answer line from its stdout.
 *
 *   bench_mcp --topdown PATH --db PATH --starts N
 *       start the server N times: fork+exec to initialize answered
 *   bench_mcp --topdown PATH --db PATH --calls N --tool NAME --args JSON
 *       one session: one warm-up call, then N calls of the tool
 *   bench_mcp --topdown PATH --db PATH --calls N --tool ping
 *       the same with ping, the protocol's own cost
 *
 * Prints one markdown table row: median, p90, p99 and max in ms.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct server {
	pid_t pid;
	int in, out;
	char buf[1 << 20];
	size_t have;
};

static const char initialize[] =
	"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
	"\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n";

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what)
{
	fprintf(stderr, "bench_mcp: %s: %s\n", what, errno ? strerror(errno) : "failed");
	exit(1);
}

static void start(struct server *s, const char *topdown, const char *db)
{
	int in[2], out[2];

	if (pipe(in) || pipe(out))
		die("pipe");
	if ((s->pid = fork()) < 0)
		die("fork");
	if (s->pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		close(in[1]);
		close(out[0]);
		execl(topdown, "topdown", "mcp-serve", "--db", db, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	s->in = in[1];
	s->out = out[0];
	s->have = 0;
}

static void stop(struct server *s)
{
	close(s->in);
	close(s->out);
	waitpid(s->pid, NULL, 0);
}

static void send_line(struct server *s, const char *line)
{
	size_t len = strlen(line);

	if (write(s->in, line, len) != (ssize_t)len)
		die("write to the server");
}

/* Reads one answer line; fails when it is an error or an isError result. */
static void read_answer(struct server *s)
{
	char *nl;

	while (!(nl = memchr(s->buf, '\n', s->have))) {
		ssize_t n;

		if (s->have == sizeof(s->buf))
			die("an answer over 1 MiB");
		n = read(s->out, s->buf + s->have, sizeof(s->buf) - s->have);
		if (n <= 0)
			die("the server closed its output");
		s->have += (size_t)n;
	}
	*nl = '\0';
	if (strstr(s->buf, "\"error\":{") || strstr(s->buf, "\"isError\":true")) {
		fprintf(stderr, "bench_mcp: the server answered: %.300s\n", s->buf);
		exit(1);
	}
	s->have -= (size_t)(nl + 1 - s->buf);
	memmove(s->buf, nl + 1, s->have);
}

static int compare_doubles(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double percentile(const double *sorted, size_t n, double p)
{
	size_t i = (size_t)(p * (n - 1) + 0.5);

	return sorted[i < n ? i : n - 1];
}

static void report(const char *what, double *ms, size_t n)
{
	qsort(ms, n, sizeof(*ms), compare_doubles);
	printf("| %s | %zu | %.2f | %.2f | %.2f | %.2f |\n", what, n, percentile(ms, n, 0.5),
	       percentile(ms, n, 0.9), percentile(ms, n, 0.99), ms[n - 1]);
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "topdown", required_argument, NULL, 't' }, { "db", required_argument, NULL, 'd' },
		{ "starts", required_argument, NULL, 's' }, { "calls", required_argument, NULL, 'c' },
		{ "tool", required_argument, NULL, 'n' }, { "args", required_argument, NULL, 'a' },
		{ "label", required_argument, NULL, 'l' }, { 0 }
	};
	const char *topdown = "build/topdown", *db = NULL, *tool = "query_bottlenecks";
	const char *args = "{}", *label = NULL;
	size_t starts = 0, calls = 0;
	struct server s;
	char *request = NULL, what[512];
	double *ms;
	int opt;

	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 't': topdown = optarg; break;
		case 'd': db = optarg; break;
		case 's': starts = strtoul(optarg, NULL, 10); break;
		case 'c': calls = strtoul(optarg, NULL, 10); break;
		case 'n': tool = optarg; break;
		case 'a': args = optarg; break;
		case 'l': label = optarg; break;
		default: return 2;
		}
	}
	if (!db || !(starts || calls) || (starts && calls)) {
		fprintf(stderr, "usage: bench_mcp [--topdown PATH] --db PATH (--starts N | --calls N "
			"[--tool NAME] [--args JSON]) [--label TEXT]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	ms = calloc(starts + calls, sizeof(*ms));
	if (!ms)
		die("memory");
	for (size_t i = 0; i < starts; i++) {
		double t0 = now_ms();

		start(&s, topdown, db);
		send_line(&s, initialize);
		read_answer(&s);
		ms[i] = now_ms() - t0;
		stop(&s);
	}
	if (starts) {
		report(label ? label : "start to initialize answered", ms, starts);
		return 0;
	}
	if (!strcmp(tool, "ping"))
		request = strdup("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n");
	else if (asprintf(&request, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
			  "\"params\":{\"name\":\"%s\",\"arguments\":%s}}\n", tool, args) < 0)
		request = NULL;
	if (!request)
		die("memory");
	start(&s, topdown, db);
	send_line(&s, initialize);
	read_answer(&s);
	send_line(&s, request); /* the warm-up: opens the store, fills the caches */
	read_answer(&s);
	for (size_t i = 0; i < calls; i++) {
		double t0 = now_ms();

		send_line(&s, request);
		read_answer(&s);
		ms[i] = now_ms() - t0;
	}
	stop(&s);
	snprintf(what, sizeof(what), "`%s` `%s`", tool, args);
	report(label ? label : what, ms, calls);
	free(request);
	free(ms);
	return 0;
}
