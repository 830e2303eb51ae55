// SPDX-License-Identifier: GPL-2.0
/*
 * A parallel loop: the items are taken in chunks from one atomic counter, so that a
 * thread that drew cheap items takes more; the caller works too.  Which thread runs
 * which item varies from run to run, so callers keep per-worker scratch (capstone
 * handles, work lists) indexed by the worker number, and merge it in item order.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "../../common/util.h"
#include "../../kmeta/kmeta.h"
#include "parallel.h"

#define MAX_WORKERS	64
#define MAX_CHUNK	16	/* items taken at once: amortises the counter */

struct loop {
	size_t n, chunk;
	_Atomic size_t next;
	parallel_fn fn;
	void *arg;
};

struct worker {
	struct loop *loop;
	unsigned int nr;
	pthread_t thread;
};

unsigned int parallel_nr_workers(void)
{
	static unsigned int nr;
	const char *env;
	cpu_set_t set;

	if (nr)
		return nr;
	env = getenv("KBOLT_THREADS");
	if (env && atoi(env) >= 1)
		nr = atoi(env) < MAX_WORKERS ? atoi(env) : MAX_WORKERS;
	else if (!sched_getaffinity(0, sizeof(set), &set))
		nr = CPU_COUNT(&set) < MAX_WORKERS ? CPU_COUNT(&set) : MAX_WORKERS;
	else
		nr = 1;
	return nr;
}

static void *run_worker(void *arg)
{
	struct worker *w = arg;
	struct loop *l = w->loop;
	size_t start;

	while ((start = atomic_fetch_add(&l->next, l->chunk)) < l->n) {
		size_t end = start + l->chunk < l->n ? start + l->chunk : l->n;

		for (size_t i = start; i < end; i++)
			l->fn(l->arg, i, w->nr);
	}
	if (w->nr)
		kmeta_insn_thread_exit();
	return NULL;
}

void parallel_for(size_t n, parallel_fn fn, void *arg)
{
	struct loop l = { .n = n, .fn = fn, .arg = arg };
	unsigned int nr = parallel_nr_workers();
	struct worker w[MAX_WORKERS];
	bool started[MAX_WORKERS] = { 0 };

	if (nr > n)
		nr = n ? n : 1;
	/* small chunks for few items: each worker gets some */
	l.chunk = n / (8 * nr);
	l.chunk = l.chunk < 1 ? 1 : l.chunk > MAX_CHUNK ? MAX_CHUNK : l.chunk;
	for (unsigned int k = 0; k < nr; k++)
		w[k] = (struct worker){ .loop = &l, .nr = k };
	/* a thread that cannot start leaves its share to the others */
	for (unsigned int k = 1; k < nr; k++)
		started[k] = !pthread_create(&w[k].thread, NULL, run_worker, &w[k]);
	run_worker(&w[0]);
	for (unsigned int k = 1; k < nr; k++)
		if (started[k])
			pthread_join(w[k].thread, NULL);
}

static void scan_item(void *arg, size_t k, unsigned int worker)
{
	kmeta_rel_scan_part(arg, k);
}

int parallel_scan_rel_refs(struct kmeta_image *img, const struct kmeta_range *r, size_t nr,
			   kmeta_scan_fn fn, void *ctx)
{
	struct kmeta_rel_scan *scan;
	int err = kmeta_rel_scan_new(img, r, nr, &scan);

	if (err)
		return err;
	parallel_for(kmeta_rel_scan_nr_parts(scan), scan_item, scan);
	kmeta_rel_scan_report(scan, fn, ctx);
	kmeta_rel_scan_free(scan);
	return 0;
}
