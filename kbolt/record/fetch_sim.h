/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The instruction-fetch model of the evaluation plugin (eval_plugin.c): an L1
 * instruction cache of 32 KiB, 8-way set associative with 64-byte lines and true LRU
 * replacement (64 sets, indexed by the low bits of the line number, as on the Intel
 * and AMD cores of the last decade), and a fully associative instruction TLB of 64
 * entries with true LRU, each entry a page of either size (as AMD Zen's L1 iTLB).
 * Pages are the kernel's own: x86-64 maps the kernel image, its text included, with
 * 2 MiB pages from __START_KERNEL_map (level2_kernel_pgt, arch/x86/kernel/head_64.S;
 * read-only data starts on a 2 MiB boundary, arch/x86/kernel/vmlinux.lds.S, so the
 * text's pages stay whole), and module text with 4 KiB pages (vmalloc'd in the module
 * area, arch/x86/include/asm/pgtable_64_types.h).  One model per vCPU: each core has
 * its own.  Header-only so that selftests/unit/fetch_sim.c can drive it with synthetic
 * addresses.
 */
#ifndef KBOLT_RECORD_FETCH_SIM_H
#define KBOLT_RECORD_FETCH_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../../kmeta/kernel_addr.h"

#define FETCH_LINE_SHIFT	6	/* 64-byte lines */
#define FETCH_PAGE_SHIFT	12	/* 4 KiB pages: module text */
#define FETCH_HUGE_SHIFT	21	/* 2 MiB pages: the kernel image's text */
#define L1I_WAYS		8
#define L1I_SETS		64	/* 32 KiB / 64 bytes / 8 ways */
#define ITLB_ENTRIES		64

/* An iTLB key's bit for a 2 MiB page: no 4 KiB page number reaches it */
#define FETCH_HUGE_KEY		(1ULL << 62)

struct fetch_sim {
	/* line number or iTLB key + 1 (0: an empty way), most recently used first */
	uint64_t l1i[L1I_SETS][L1I_WAYS];
	uint64_t itlb[ITLB_ENTRIES];
	uint64_t nr_insns, l1i_misses, itlb_misses;
};

/*
 * The iTLB key of the page that maps addr: a 2 MiB page of the kernel image (at its
 * link address: kernel_addr.h), else 4 KiB (module text)
 */
static inline uint64_t fetch_page_key(uint64_t addr)
{
	if (addr >= KERNEL_IMAGE_START && addr < KERNEL_MODULES_START)
		return FETCH_HUGE_KEY | addr >> FETCH_HUGE_SHIFT;
	return addr >> FETCH_PAGE_SHIFT;
}

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

/* The translation of one page, by its key (fetch_page_key()) */
static inline void fetch_sim_page(struct fetch_sim *sim, uint64_t key)
{
	if (!lru_access(sim->itlb, ITLB_ENTRIES, key + 1))
		sim->itlb_misses++;
}

/* The fetch of one instruction of size bytes at addr: every line and page it touches */
static inline void fetch_sim_insn(struct fetch_sim *sim, uint64_t addr, size_t size)
{
	uint64_t last = addr + (size ? size - 1 : 0);

	for (uint64_t l = addr >> FETCH_LINE_SHIFT; l <= last >> FETCH_LINE_SHIFT; l++)
		fetch_sim_line(sim, l);
	/* at most 15 bytes: one page, or two */
	fetch_sim_page(sim, fetch_page_key(addr));
	if (fetch_page_key(last) != fetch_page_key(addr))
		fetch_sim_page(sim, fetch_page_key(last));
	sim->nr_insns++;
}

#endif
