// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the evaluation plugin's fetch model (kbolt/record/fetch_sim.h) on
 * synthetic address sequences whose misses are known: code that fits the L1i, lines
 * that thrash one set, the LRU victim, instructions across a line and a page, the
 * iTLB's capacity, and its pages: 2 MiB for the kernel image's text, 4 KiB for module
 * text.  TAP output.
 */
#include <stdlib.h>

#include "../../kbolt/record/fetch_sim.h"
#include "tap.h"

#define TEXT	0xffffffff81000000ULL	/* a kernel text address, page- and set-aligned */
#define MODULE	0xffffffffc0000000ULL	/* a module text address (4 KiB pages) */
#define PAGE	4096
#define HUGE	(2 * 1024 * 1024)
#define SET_STRIDE	((uint64_t)L1I_SETS << FETCH_LINE_SHIFT)	/* same set, next line */

static struct fetch_sim *sim_new(void)
{
	struct fetch_sim *sim = calloc(1, sizeof(*sim));

	if (!sim)
		abort();
	return sim;
}

/* Fetch nr lines stride bytes apart from base, rounds times over; the L1i misses */
static uint64_t loop_at(struct fetch_sim *sim, uint64_t base, uint64_t stride, int nr,
			int rounds)
{
	uint64_t before = sim->l1i_misses;

	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < nr; i++)
			fetch_sim_insn(sim, base + i * stride, 4);
	return sim->l1i_misses - before;
}

static uint64_t loop_lines(struct fetch_sim *sim, uint64_t stride, int nr, int rounds)
{
	return loop_at(sim, TEXT, stride, nr, rounds);
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

	fetch_sim_insn(sim, MODULE + 62, 5);
	ok(sim->l1i_misses == 2 && sim->itlb_misses == 1,
	   "an instruction across a line fetches two lines, one page");
	fetch_sim_insn(sim, MODULE + PAGE - 2, 5);
	ok(sim->l1i_misses == 4 && sim->itlb_misses == 2,
	   "module text: an instruction across a 4 KiB page fetches two lines, two pages");
	fetch_sim_insn(sim, MODULE + PAGE, 1);
	ok(sim->l1i_misses == 4 && sim->itlb_misses == 2, "... both then hit");
	fetch_sim_insn(sim, TEXT + PAGE - 2, 5);
	ok(sim->l1i_misses == 6 && sim->itlb_misses == 3,
	   "kernel text: across a 4 KiB boundary, one 2 MiB page (%llu iTLB misses)",
	   (unsigned long long)sim->itlb_misses);
	fetch_sim_insn(sim, TEXT + HUGE - 2, 5);
	ok(sim->l1i_misses == 8 && sim->itlb_misses == 4,
	   "... across a 2 MiB boundary, the next 2 MiB page (%llu iTLB misses)",
	   (unsigned long long)sim->itlb_misses);
	free(sim);
}

/* The iTLB misses of a fresh model fetching nr lines stride bytes apart, rounds times */
static unsigned long long itlb_misses(uint64_t base, uint64_t stride, int nr, int rounds)
{
	struct fetch_sim *sim = sim_new();
	unsigned long long n;

	loop_at(sim, base, stride, nr, rounds);
	n = sim->itlb_misses;
	free(sim);
	return n;
}

/* An iTLB of 64 entries, LRU, whatever the page size */
static void test_itlb(void)
{
	unsigned long long n;

	ok(itlb_misses(MODULE, PAGE, ITLB_ENTRIES, 2) == ITLB_ENTRIES,
	   "64 pages fit the iTLB: 64 misses in 2 rounds");
	n = itlb_misses(MODULE, PAGE, ITLB_ENTRIES + 1, 2);
	ok(n == 2 * (ITLB_ENTRIES + 1), "65 pages in a loop: LRU misses every page (%llu)", n);
	n = itlb_misses(TEXT, HUGE, ITLB_ENTRIES + 1, 2);
	ok(n == 2 * (ITLB_ENTRIES + 1),
	   "65 2 MiB pages of kernel text in a loop: LRU misses every page (%llu)", n);
}

/*
 * The pages as the kernel maps them: its image's text with 2 MiB pages, module text
 * with 4 KiB ones.  Code spread over 512 4 KiB pages of one 2 MiB page of the kernel's
 * text is one iTLB entry; over as many pages of module text, a miss on every page.
 */
static void test_page_sizes(void)
{
	struct fetch_sim *sim;
	unsigned long long n;

	n = itlb_misses(TEXT, PAGE, HUGE / PAGE, 2);
	ok(n == 1, "kernel text: 512 4 KiB pages of one 2 MiB page, 2 rounds: one iTLB miss (%llu)",
	   n);
	n = itlb_misses(MODULE, PAGE, HUGE / PAGE, 2);
	ok(n == 2 * HUGE / PAGE,
	   "module text: the same 512 pages, 2 rounds: a miss on every page (%llu)", n);
	sim = sim_new();
	fetch_sim_insn(sim, KERNEL_MODULES_START - 4, 4);
	fetch_sim_insn(sim, KERNEL_MODULES_START, 4);
	fetch_sim_insn(sim, KERNEL_MODULES_START + PAGE, 4);
	fetch_sim_insn(sim, KERNEL_MODULES_START - HUGE, 4);
	ok(sim->itlb_misses == 3,
	   "the image's last 2 MiB page, then the module area's 4 KiB pages (%llu)",
	   (unsigned long long)sim->itlb_misses);
	free(sim);
}

int main(void)
{
	test_capacity();
	test_sets();
	test_crossing();
	test_itlb();
	test_page_sizes();
	return tap_done();
}
