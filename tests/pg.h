/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A private PostgreSQL server for one test binary, from tests/pg_server.sh:
 * a cluster under the build tree (next to the binary's tests/ directory),
 * a free port on 127.0.0.1 and its socket in the cluster's directory.
 * The script holds our pipe on its stdin and stops the server when the
 * pipe closes, which happens when this process ends however it ends, so a
 * failed or crashed test leaves no server behind. Through the same pipe
 * pg_pause() and pg_resume() take the server away and bring it back, as an
 * outage or a restart would.
 *
 * Each test gets a schema of its own from pg_new_database().
 */
#ifndef TOPDOWN_TESTS_PG_H
#define TOPDOWN_TESTS_PG_H

#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <libpq-fe.h>

struct pg_server {
	bool ready;
	char why[512];  /* when not ready: the reason, for SKIP or failure messages */
	char dsn[512];  /* the server's maintenance database */
	pid_t pid;
	int keep;       /* our end of the script's stdin */
	int answers;    /* our end of the script's stdout */
	bool paused;    /* stopped by pg_pause() */
	unsigned next_db;
};

static struct pg_server pg_server;

/* Reads the script's one status line from fd into line. */
static inline bool pg_read_line(int fd, char *line, size_t len)
{
	size_t used = 0;

	while (used + 1 < len) {
		ssize_t n = read(fd, line + used, 1);

		if (n <= 0)
			break;
		if (line[used] == '\n')
			break;
		used++;
	}
	line[used] = '\0';
	return used > 0;
}

/*
 * Starts the server; argv0 locates the build tree. false with pg_server.why
 * set when it cannot run here (why starts with "skip" when the binaries are
 * missing, a reason to skip rather than fail).
 */
static inline bool pg_start(const char *argv0)
{
	const char *script = getenv("TD_PG_SERVER") ? getenv("TD_PG_SERVER") : "tests/pg_server.sh";
	char copy[PATH_MAX], dir[PATH_MAX + 64], line[512];
	int to_script[2], from_script[2];

	snprintf(copy, sizeof(copy), "%s", argv0);
	/* build/tests/test_x -> build/pg-<pid> */
	snprintf(dir, sizeof(dir), "%s/pg-%d", dirname(dirname(copy)), (int)getpid());
	if (pipe2(to_script, O_CLOEXEC) || pipe2(from_script, O_CLOEXEC)) {
		snprintf(pg_server.why, sizeof(pg_server.why), "cannot make pipes");
		return false;
	}
	pg_server.pid = fork();
	if (pg_server.pid == 0) {
		dup2(to_script[0], STDIN_FILENO);
		dup2(from_script[1], STDOUT_FILENO);
		execlp("bash", "bash", script, dir, (char *)NULL);
		_exit(127);
	}
	close(to_script[0]);
	close(from_script[1]);
	pg_server.keep = to_script[1];
	pg_server.answers = from_script[0];
	if (!pg_read_line(pg_server.answers, line, sizeof(line)))
		snprintf(line, sizeof(line), "error %s printed nothing", script);
	if (strncmp(line, "ready ", 6) == 0) {
		snprintf(pg_server.dsn, sizeof(pg_server.dsn), "%s", line + 6);
		pg_server.ready = true;
	} else {
		snprintf(pg_server.why, sizeof(pg_server.why), "%s", line);
	}
	return pg_server.ready;
}

/* Stops the server and waits for the script to clean up. */
static inline void pg_stop(void)
{
	if (pg_server.pid <= 0)
		return;
	close(pg_server.keep);
	close(pg_server.answers);
	waitpid(pg_server.pid, NULL, 0);
	pg_server.pid = 0;
	pg_server.ready = false;
}

/* Sends the script one command line; true when its answer starts with
 * expect, else false with the answer in pg_server.why. */
static inline bool pg_command(const char *command, const char *expect)
{
	char line[512];
	size_t len = strlen(command);

	if (pg_server.pid <= 0 || write(pg_server.keep, command, len) != (ssize_t)len ||
	    !pg_read_line(pg_server.answers, line, sizeof(line)))
		snprintf(line, sizeof(line), "error the server's script does not answer");
	if (strncmp(line, expect, strlen(expect)) == 0)
		return true;
	snprintf(pg_server.why, sizeof(pg_server.why), "%s", line);
	return false;
}

/* Stops the server, cutting its sessions; its data and port stay for
 * pg_resume(). false with pg_server.why when it would not stop. */
static inline bool pg_pause(void)
{
	if (pg_server.paused)
		return true;
	pg_server.paused = pg_command("stop\n", "stopped");
	return pg_server.paused;
}

/* Starts the server again after pg_pause() (nothing to do when it runs). */
static inline bool pg_resume(void)
{
	if (!pg_server.paused)
		return true;
	pg_server.paused = !pg_command("start\n", "ready ");
	return !pg_server.paused;
}

/* Runs sql on the database conninfo names; false with why on failure. */
static inline bool pg_exec(const char *conninfo, const char *sql, char *why, size_t len)
{
	PGconn *conn = PQconnectdb(conninfo);
	PGresult *res = NULL;
	bool ok = PQstatus(conn) == CONNECTION_OK;

	if (ok) {
		res = PQexec(conn, sql);
		ok = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK;
	}
	if (!ok)
		snprintf(why, len, "%s: %s", sql, PQerrorMessage(conn));
	PQclear(res);
	PQfinish(conn);
	return ok;
}

/* The single integer sql returns on conninfo's database; -1 on failure. */
static inline long long pg_int(const char *conninfo, const char *sql)
{
	PGconn *conn = PQconnectdb(conninfo);
	PGresult *res = PQexec(conn, sql);
	long long value = -1;

	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		value = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	PQfinish(conn);
	return value;
}

/*
 * A new empty place for one test's tables: a schema of the server's
 * database, which the connection string makes the only one searched
 * (much quicker to make than a database). Its connection string into dsn.
 */
static inline bool pg_new_database(char *dsn, size_t len, char *why, size_t whylen)
{
	char sql[64];

	snprintf(sql, sizeof(sql), "CREATE SCHEMA t%u", ++pg_server.next_db);
	if (!pg_exec(pg_server.dsn, sql, why, whylen))
		return false;
	snprintf(dsn, len, "%s options='-c search_path=t%u'", pg_server.dsn, pg_server.next_db);
	return true;
}

#endif
