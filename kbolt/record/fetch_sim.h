/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The instruction-fetch model of the evaluation plugin (eval_plugin.c): an L1
 * instruction cache of 32 KiB, 8-way set associative with 64-byte lines and true LRU
 * replacement (64 sets, indexed by the low bits of the line number, as on the Intel
 * and AMD cores of the last decade), and a fully associative instruction TLB of 64
 * entries of 4 KiB pages with true LRU.  One model per vCPU: each core has its own.
 * Header-only so that selftests/unit/fetch_sim.c can drive it with synthetic addresses.
 */
#ifndef KBOLT_RECORD_FETCH_SIM_H
#define KBOLT_RECORD_FETCH_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define FETCH_LINE_SHIFT	6	/* 64-byte lines */
#define FETCH_PAGE_SHIFT	12	/* 4 KiB pages */
#define L1I_WAYS		8
#define L1I_SETS		64	/* 32 KiB / 64 bytes / 8 ways */
#define ITLB_ENTRIES		64

struct fetch_sim {
	/* line or page number + 1 (0: an empty way), most recently used first */
	uint64_t l1i[L1I_SETS][L1I_WAYS];
	uint64_t itlb[ITLB_ENTRIES];
	uint64_t nr_insns, l1i_misses, itlb_misses;
};

/*
 * Look key up in an LRU-ordered array of n ways and make it the most recently used:
 * true on a hit.  A miss takes the first empty way, else evicts the last (the LRU).
 */
static inline bool lru_access(uint64_t *ways, size_t n, uint64_t key)
{
	size_t i = 0;
	bool hit;

	if (ways[0] == key)	/* the common case: the line or page just fetched */
		return true;
	while (i < n - 1 && ways[i] != key && ways[i])
		i++;
	hit = ways[i] == key;
	memmove(ways + 1, ways, i * sizeof(*ways));
	ways[0] = key;
	return hit;
}

/* The fetch of one line: true if it hit */
static inline bool fetch_sim_line(struct fetch_sim *sim, uint64_t line)
{
	bool hit = lru_access(sim->l1i[line % L1I_SETS], L1I_WAYS, line + 1);

	sim->l1i_misses += !hit;
	return hit;
}

static inline void fetch_sim_page(struct fetch_sim *sim, uint64_t page)
{
	if (!lru_access(sim->itlb, ITLB_ENTRIES, page + 1))
		sim->itlb_misses++;
}

/* The fetch of one instruction of size bytes at addr: every line and page it touches */
static inline void fetch_sim_insn(struct fetch_sim *sim, uint64_t addr, size_t size)
{
	uint64_t last = addr + (size ? size - 1 : 0);

	for (uint64_t l = addr >> FETCH_LINE_SHIFT; l <= last >> FETCH_LINE_SHIFT; l++)
		fetch_sim_line(sim, l);
	for (uint64_t p = addr >> FETCH_PAGE_SHIFT; p <= last >> FETCH_PAGE_SHIFT; p++)
		fetch_sim_page(sim, p);
	sim->nr_insns++;
}

#endif
