/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An index of sorted start addresses (of functions, say) that answers "how many start
 * at or before this address" in about constant time: a table per 256-byte bucket of
 * the covered span narrows the binary search to the few starts inside one bucket.
 * Lookups by address run millions of times per kbolt run (every relocation, table
 * entry and ORC entry), and a plain binary search over 46k functions misses the cache
 * at every step.
 */
#ifndef KMETA_ADDR_INDEX_H
#define KMETA_ADDR_INDEX_H

#include <stddef.h>
#include <stdint.h>

struct addr_index {
	uint64_t *starts;	/* ascending (duplicates allowed), owned */
	size_t nr;
	uint32_t *first;	/* per bucket: how many start before it; NULL: no buckets */
	size_t nr_buckets;
};

/* Takes ownership of starts[0..nr), which must be ascending */
void addr_index_init(struct addr_index *x, uint64_t *starts, size_t nr);
void addr_index_free(struct addr_index *x);

/* How many starts are <= addr: the index of the last one at or before addr, plus one */
size_t addr_index_upto(const struct addr_index *x, uint64_t addr);

#endif
