// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the evaluation plugin's fetch model (kbolt/record/fetch_sim.h) on
 * synthetic address sequences whose misses are known: code that fits the L1i, lines
 * that thrash one set, the LRU victim, instructions across a line and a page, and the
 * iTLB's capacity.  TAP output.
 */
#include <stdlib.h>

#include "../../kbolt/record/fetch_sim.h"
#include "tap.h"

#define TEXT	0xffffffff81000000ULL	/* a kernel text address, page- and set-aligned */
#define SET_STRIDE	((uint64_t)L1I_SETS << FETCH_LINE_SHIFT)	/* same set, next line */

static struct fetch_sim *sim_new(void)
{
	struct fetch_sim *sim = calloc(1, sizeof(*sim));

	if (!sim)
		abort();
	return sim;
}

/* Fetch nr lines stride bytes apart, rounds times over; the misses that made */
static uint64_t loop_lines(struct fetch_sim *sim, uint64_t stride, int nr, int rounds)
{
	uint64_t before = sim->l1i_misses;

	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < nr; i++)
			fetch_sim_insn(sim, TEXT + i * stride, 4);
	return sim->l1i_misses - before;
}

static void test_capacity(void)
{
	struct fetch_sim *sim = sim_new();
	int nr = L1I_SETS * L1I_WAYS;	/* 32 KiB of 64-byte lines */

	ok(loop_lines(sim, 64, nr, 1) == (uint64_t)nr, "32 KiB of code: every line misses once");
	ok(loop_lines(sim, 64, nr, 3) == 0, "... and then fits: no miss in 3 more rounds");
	ok(sim->nr_insns == 4u * nr, "instructions are counted (%llu)",
	   (unsigned long long)sim->nr_insns);
	free(sim);
}

static void test_sets(void)
{
	struct fetch_sim *sim = sim_new();

	ok(loop_lines(sim, SET_STRIDE, L1I_WAYS, 10) == L1I_WAYS,
	   "8 lines of one set fit its 8 ways: 8 misses in 10 rounds");
	free(sim);
	sim = sim_new();
	ok(loop_lines(sim, SET_STRIDE, L1I_WAYS + 1, 10) == 10 * (L1I_WAYS + 1),
	   "9 lines of one set in a loop: LRU misses every fetch");
	free(sim);
	sim = sim_new();
	/* lines 0..7 of a set, then 0 again (now the most recent), then 8: evicts 1 */
	loop_lines(sim, SET_STRIDE, L1I_WAYS, 1);
	fetch_sim_insn(sim, TEXT, 4);
	fetch_sim_insn(sim, TEXT + L1I_WAYS * SET_STRIDE, 4);
	ok(loop_lines(sim, SET_STRIDE, 1, 1) == 0, "LRU: the line used again stays");
	ok(loop_lines(sim, SET_STRIDE, 2, 1) == 1, "LRU: the least recently used is evicted");
	free(sim);
}

static void test_crossing(void)
{
	struct fetch_sim *sim = sim_new();

	fetch_sim_insn(sim, TEXT + 62, 5);
	ok(sim->l1i_misses == 2 && sim->itlb_misses == 1,
	   "an instruction across a line fetches two lines, one page");
	fetch_sim_insn(sim, TEXT + 4094, 5);
	ok(sim->l1i_misses == 4 && sim->itlb_misses == 2,
	   "an instruction across a page fetches two lines, two pages");
	fetch_sim_insn(sim, TEXT + 4096, 1);
	ok(sim->l1i_misses == 4 && sim->itlb_misses == 2, "... both then hit");
	free(sim);
}

static void test_itlb(void)
{
	struct fetch_sim *sim = sim_new();

	loop_lines(sim, 4096, ITLB_ENTRIES, 2);
	ok(sim->itlb_misses == ITLB_ENTRIES, "64 pages fit the iTLB: 64 misses in 2 rounds");
	free(sim);
	sim = sim_new();
	loop_lines(sim, 4096, ITLB_ENTRIES + 1, 2);
	ok(sim->itlb_misses == 2 * (ITLB_ENTRIES + 1),
	   "65 pages in a loop: LRU misses every page (%llu)",
	   (unsigned long long)sim->itlb_misses);
	free(sim);
}

int main(void)
{
	test_capacity();
	test_sets();
	test_crossing();
	test_itlb();
	return tap_done();
}
