// SPDX-License-Identifier: BSD-3-Clause
/*
 * The agent's writer thread (writer.h).
 *
 * Decisions:
 * - The queue is in memory and unbounded. It grows only while one store
 *   attempt holds the thread: SQLite's busy timeout (5 s), libpq's
 *   connect timeout (10 s); after a failed attempt the sink spools at the
 *   local disk's speed and backs off, so the queue drains within a few
 *   windows. Blocking the window loop instead would stall counting, and
 *   dropping a window would lose it.
 * - The sink is used by this thread alone (sink.h: one thread at a
 *   time); the window loop reads a copy of its stats, taken after each
 *   batch under the lock.
 * - A run still queued when the agent stops is written before the thread
 *   ends (td_writer_free), and td_writer_finish then tries the store once
 *   more for what waits in the spool.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "labels.h"
#include "writer.h"

#define NS_PER_MS 1000000ll

struct batch {
	struct batch *next;
	struct td_run **runs;
	size_t nr_runs;
};

struct td_writer {
	struct td_sink *sink;
	int64_t late_after_ns;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;  /* a batch queued, the queue emptied, a flush done, stop */
	struct batch *head, *tail;
	bool flush_wanted;       /* td_writer_finish waits for the flush */
	int flush_ret;
	char flush_err[512];
	bool stopping;
	struct td_writer_state state;
};

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Labels run with its delay when late: what the stall was, in the stored run itself. */
static bool mark_if_late(struct td_writer *w, struct td_run *run)
{
	int64_t delay = realtime_ns() - run->ended_ns;
	char text[32];

	if (delay <= w->late_after_ns)
		return false;
	snprintf(text, sizeof(text), "%.3f", (double)delay / NS_PER_MS);
	td_labels_set(&run->labels, "agent.store_delay_ms", text); /* out of memory: stored unmarked */
	return true;
}

/* One window's runs into the sink, outside the lock; each run freed once handed over. */
static void write_batch(struct td_writer *w, struct batch *b)
{
	char err[768];

	if (!b->nr_runs)
		td_sink_replay(w->sink, err, sizeof(err));
	for (size_t i = 0; i < b->nr_runs; i++) {
		bool late = mark_if_late(w, b->runs[i]);
		int ret;

		err[0] = '\0';
		ret = td_sink_write(w->sink, b->runs[i], err, sizeof(err));
		pthread_mutex_lock(&w->lock);
		w->state.queued--;
		w->state.late += late;
		if (ret) {
			w->state.lost++;
			snprintf(w->state.last_lost, sizeof(w->state.last_lost), "run %s of '%s' is lost: %s",
				 b->runs[i]->id, b->runs[i]->process ? b->runs[i]->process : "", err);
		}
		pthread_mutex_unlock(&w->lock);
		td_run_free(b->runs[i]);
	}
	free(b->runs);
	free(b);
}

static void *writer_main(void *arg)
{
	struct td_writer *w = arg;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		struct batch *b = w->head;

		if (b) {
			w->head = b->next;
			if (!w->head)
				w->tail = NULL;
			pthread_mutex_unlock(&w->lock);
			write_batch(w, b);
			pthread_mutex_lock(&w->lock);
			td_sink_stats(w->sink, &w->state.sink);
			pthread_cond_broadcast(&w->changed);
		} else if (w->flush_wanted) {
			pthread_mutex_unlock(&w->lock);
			w->flush_err[0] = '\0';
			w->flush_ret = td_sink_flush(w->sink, w->flush_err, sizeof(w->flush_err));
			pthread_mutex_lock(&w->lock);
			td_sink_stats(w->sink, &w->state.sink);
			w->flush_wanted = false;
			pthread_cond_broadcast(&w->changed);
		} else if (w->stopping) {
			break;
		} else {
			pthread_cond_wait(&w->changed, &w->lock);
		}
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct td_writer *td_writer_start(struct td_sink *sink, int64_t late_after_ns, char *err, size_t errlen)
{
	struct td_writer *w = calloc(1, sizeof(*w));
	sigset_t all, before;
	int ret;

	if (!w) {
		snprintf(err, errlen, "out of memory starting the agent's writer");
		return NULL;
	}
	w->sink = sink;
	w->late_after_ns = late_after_ns;
	td_sink_stats(sink, &w->state.sink);
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->changed, NULL);
	/* signals (SIGTERM, SIGHUP) stay with the window loop, whose poll they wake */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &before);
	ret = pthread_create(&w->thread, NULL, writer_main, w);
	pthread_sigmask(SIG_SETMASK, &before, NULL);
	if (ret) {
		snprintf(err, errlen, "cannot start the agent's writer thread: %s", strerror(ret));
		pthread_cond_destroy(&w->changed);
		pthread_mutex_destroy(&w->lock);
		free(w);
		return NULL;
	}
	return w;
}

void td_writer_submit(struct td_writer *w, struct td_run **runs, size_t nr_runs)
{
	struct batch *b = malloc(sizeof(*b));

	if (!b) { /* nowhere to keep them: said as lost, like a run no sink took */
		pthread_mutex_lock(&w->lock);
		w->state.lost += nr_runs;
		snprintf(w->state.last_lost, sizeof(w->state.last_lost),
			 "%zu runs of a window are lost: out of memory queueing them for the store", nr_runs);
		pthread_mutex_unlock(&w->lock);
		for (size_t i = 0; i < nr_runs; i++)
			td_run_free(runs[i]);
		free(runs);
		return;
	}
	*b = (struct batch){ .runs = runs, .nr_runs = nr_runs };
	pthread_mutex_lock(&w->lock);
	if (w->tail)
		w->tail->next = b;
	else
		w->head = b;
	w->tail = b;
	w->state.queued += nr_runs;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
}

int td_writer_finish(struct td_writer *w, char *err, size_t errlen)
{
	int ret;

	pthread_mutex_lock(&w->lock);
	w->flush_wanted = true;
	pthread_cond_broadcast(&w->changed);
	while (w->flush_wanted)
		pthread_cond_wait(&w->changed, &w->lock);
	ret = w->flush_ret;
	if (ret)
		snprintf(err, errlen, "%s", w->flush_err);
	pthread_mutex_unlock(&w->lock);
	return ret;
}

void td_writer_state(struct td_writer *w, struct td_writer_state *out)
{
	pthread_mutex_lock(&w->lock);
	*out = w->state;
	pthread_mutex_unlock(&w->lock);
}

void td_writer_free(struct td_writer *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->lock);
	pthread_join(w->thread, NULL);
	td_sink_close(w->sink);
	pthread_cond_destroy(&w->changed);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
