// SPDX-License-Identifier: BSD-3-Clause
/*
 * td-many-threads N SECONDS: N threads that each wake every 100 ms, do a
 * little work and sleep again, for SECONDS; topdown top's benchmark
 * (bench/bench_top.sh) watches them. Each thread switches about 10 times
 * a second, so 1,000 of them make 10,000 switches a second to track
 * without taking the host's CPUs.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;

static void *sleeper(void *arg)
{
	struct timespec nap = { 0, 100 * 1000 * 1000 };
	volatile unsigned long sink = 0;

	(void)arg;
	while (!stop) {
		for (int i = 0; i < 20000; i++) /* about 20 us of work a wake-up */
			sink += (unsigned long)i;
		nanosleep(&nap, NULL);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, seconds = argc > 2 ? atoi(argv[2]) : 60;
	pthread_attr_t attr;
	pthread_t *threads = calloc(n > 0 ? n : 1, sizeof(*threads));

	if (n < 1 || seconds < 1 || !threads) {
		fprintf(stderr, "usage: td-many-threads N SECONDS\n");
		return 2;
	}
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024); /* 1,000 default stacks would be 8 GB of address space */
	for (int i = 0; i < n; i++)
		if (pthread_create(&threads[i], &attr, sleeper, NULL)) {
			fprintf(stderr, "td-many-threads: thread %d would not start\n", i);
			return 1;
		}
	sleep((unsigned)seconds);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	free(threads);
	return 0;
}
