// SPDX-License-Identifier: GPL-2.0
/* Sorted start addresses with a bucket table: see addr_index.h. */
#include <stdlib.h>

#include "../common/util.h"
#include "addr_index.h"

#define BUCKET_SHIFT 8
/* A span wider than this (not one kernel's code) gets plain binary searches */
#define MAX_BUCKETS (1u << 22)

void addr_index_init(struct addr_index *x, uint64_t *starts, size_t nr)
{
	uint64_t span = nr ? starts[nr - 1] - starts[0] : 0;
	size_t i = 0;

	*x = (struct addr_index){ .starts = starts, .nr = nr };
	if (!nr || span >> BUCKET_SHIFT >= MAX_BUCKETS)
		return;
	x->nr_buckets = (span >> BUCKET_SHIFT) + 1;
	x->first = xmalloc((x->nr_buckets + 1) * sizeof(*x->first));
	for (size_t b = 0; b <= x->nr_buckets; b++) {
		uint64_t bucket_start = starts[0] + ((uint64_t)b << BUCKET_SHIFT);

		while (i < nr && starts[i] < bucket_start)
			i++;
		x->first[b] = i;
	}
}

void addr_index_free(struct addr_index *x)
{
	free(x->starts);
	free(x->first);
	*x = (struct addr_index){ 0 };
}

size_t addr_index_upto(const struct addr_index *x, uint64_t addr)
{
	uint64_t b;

	if (!x->nr || addr < x->starts[0])
		return 0;
	b = (addr - x->starts[0]) >> BUCKET_SHIFT;
	if (!x->first)
		return upper_bound_u64(x->starts, x->nr, sizeof(*x->starts), 0, addr);
	if (b >= x->nr_buckets)
		return x->nr;	/* past the last start */
	/* every start before bucket b is < addr, every one from bucket b + 1 is > addr */
	return x->first[b] + upper_bound_u64(x->starts + x->first[b], x->first[b + 1] - x->first[b],
					     sizeof(*x->starts), 0, addr);
}
