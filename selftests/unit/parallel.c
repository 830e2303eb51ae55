// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kbolt's parallel loop (kbolt/lib/parallel.c): every item runs exactly
 * once, on a worker numbered below the thread count, for counts around the chunk
 * size; no item runs for an empty loop; KBOLT_THREADS sets the thread count.  TAP
 * output.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "../../common/util.h"
#include "../../kbolt/lib/parallel.h"
#include "tap.h"

#define THREADS	3

struct count {
	_Atomic unsigned int *runs;	/* per item */
	_Atomic unsigned int bad_worker;
};

static void count_item(void *arg, size_t i, unsigned int worker)
{
	struct count *c = arg;

	atomic_fetch_add(&c->runs[i], 1);
	if (worker >= THREADS)
		atomic_fetch_add(&c->bad_worker, 1);
}

/* Run a loop of n items; true if each ran once, on a worker in range */
static bool each_once(size_t n)
{
	struct count c = { .runs = calloc(n + 1, sizeof(*c.runs)) };
	bool once = true;

	if (!c.runs)
		abort();
	parallel_for(n, count_item, &c);
	for (size_t i = 0; i < n; i++)
		once &= c.runs[i] == 1;
	once &= c.runs[n] == 0 && c.bad_worker == 0;
	free(c.runs);
	return once;
}

int main(void)
{
	static const size_t sizes[] = { 1, 2, 3, 15, 16, 17, 47, 48, 49, 1000, 100003 };

	setenv("KBOLT_THREADS", "3", 1);	/* read once, at the first loop */
	ok(parallel_nr_workers() == THREADS, "KBOLT_THREADS=3 gives 3 workers (got %u)",
	   parallel_nr_workers());
	ok(each_once(0), "an empty loop runs no item");
	for (size_t k = 0; k < ARRAY_SIZE(sizes); k++)
		ok(each_once(sizes[k]), "%zu items: each runs once, on worker 0..2", sizes[k]);
	return tap_done();
}
