/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loops whose iterations share nothing, spread over threads.  Output never depends on
 * the number of threads: each iteration writes only its own item.
 */
#ifndef KBOLT_PARALLEL_H
#define KBOLT_PARALLEL_H

#include <stddef.h>

#include "../../kmeta/kmeta.h"

/* fn(arg, i, worker) for item i, on the thread numbered worker (0 .. nr_workers - 1) */
typedef void (*parallel_fn)(void *arg, size_t i, unsigned int worker);

/* Threads the loops use: KBOLT_THREADS if set (1 .. 64), else the CPUs kbolt may run on */
unsigned int parallel_nr_workers(void);

/*
 * fn for every i < n, each once, on up to parallel_nr_workers() threads, the caller's
 * among them as worker 0; returns when all are done.
 */
void parallel_for(size_t n, parallel_fn fn, void *arg);

/*
 * kmeta's scan for relative references (kmeta_rel_scan_new()), its parts scanned by
 * parallel_for(): fn is called in one thread, after the loop, for every hit in
 * address order.  0 or a negative errno.
 */
int parallel_scan_rel_refs(struct kmeta_image *img, const struct kmeta_range *r, size_t nr,
			   kmeta_scan_fn fn, void *ctx);

#endif
