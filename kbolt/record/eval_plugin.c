// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt's evaluation plugin for QEMU TCG: the kernel's instruction fetch, simulated
 * through an L1i and an iTLB (fetch_sim.h) while a workload runs, to compare the code
 * layouts of kernels built from the same source (Documentation/evaluate.rst).
 *
 * Only kernel instructions are simulated (addresses from 0xffffffff80000000: the
 * kernel image and modules), and only between the workload markers the lab executes
 * (plugin.h), or from the start with boot=on.  User code shares the real caches but is
 * the same program whatever the kernel's layout: leaving it out measures what a layout
 * changes.  The caches start empty at the start marker.
 *
 * Pages as the kernel maps them (fetch_sim.h): 2 MiB for the kernel image's text, 4
 * KiB for module text.  The image must be at its link address, below the module area
 * (scripts/vmtest refuses --evaluate with --kaslr).
 *
 * Speed: an exec callback per instruction would slow TCG several times, so the work
 * is done once per translation: each kernel TB gets the list of the cache lines and of
 * the pages its instructions touch, in fetch order, repeats of the line or page just
 * fetched left out (a repeat is a hit that leaves the LRU order as it is: leaving it
 * out changes no figure), and one exec callback replays the list.  A TB left early, by
 * an exception or a fault in its middle, is still counted whole: the instructions and
 * lines after the faulting one are counted though they did not run.  TCG takes
 * interrupts only between TBs, so they do not cut a TB short; faults in kernel code are
 * rare (exception-table fixups, page faults on vmalloc'd module text), and the error is
 * the same for every layout.
 *
 * Per vCPU: one fetch model each (a core has its own L1i and iTLB), figures summed at
 * exit.  Distinct lines are counted in a bitmap over the upper 2 GiB; a 64-bit word of
 * it is a 4 KiB page, which gives the distinct 4 KiB pages (the footprint).
 *
 * Arguments: out=FILE (required), boot=on (from the start of the boot, not the markers),
 * misses=FILE (the L1i misses of each line, to tell which code they are in).
 * Output: "key value" lines, Documentation/evaluate.rst; written at QEMU's exit.
 */
#include <inttypes.h>

#include "fetch_sim.h"
#include "plugin.h"

/* The simulated range: the kernel image and modules, the upper 2 GiB */
#define EVAL_MIN	KERNEL_IMAGE_START
#define NR_LINES	((0 - EVAL_MIN) >> FETCH_LINE_SHIFT)

/* Per kernel TB: its instruction count and the lines, then the pages, it fetches */
struct tb_fetch {
	uint32_t nr_insns;
	uint16_t nr_lines, nr_pages;
	uint64_t nums[];	/* nr_lines line numbers, then nr_pages iTLB keys */
};

struct vcpu {
	struct fetch_sim sim;
} __attribute__((aligned(64)));

static struct vcpu *vcpus;
static int nr_vcpus;
static volatile bool active;
static const char *out_path, *misses_path;
static uint64_t *line_map;		/* bit set: touched while active */
static uint32_t *line_misses;		/* per line, with misses=FILE */

static void mark(uint64_t *map, uint64_t idx)
{
	uint64_t bit = 1ULL << (idx % 64);

	/* vCPUs run in threads of their own: set the bit atomically, test it first */
	if (!(__atomic_load_n(&map[idx / 64], __ATOMIC_RELAXED) & bit))
		__atomic_fetch_or(&map[idx / 64], bit, __ATOMIC_RELAXED);
}

static void tb_exec(unsigned int cpu, void *udata)
{
	const struct tb_fetch *tf = udata;
	struct fetch_sim *sim = &vcpus[cpu < (unsigned int)nr_vcpus ? cpu : 0].sim;
	const uint64_t *page = tf->nums + tf->nr_lines;

	if (!active)
		return;
	for (unsigned int i = 0; i < tf->nr_lines; i++) {
		uint64_t idx = tf->nums[i] - (EVAL_MIN >> FETCH_LINE_SHIFT);

		if (!fetch_sim_line(sim, tf->nums[i]) && line_misses)
			__atomic_fetch_add(&line_misses[idx], 1, __ATOMIC_RELAXED);
		mark(line_map, idx);
	}
	for (unsigned int i = 0; i < tf->nr_pages; i++)
		fetch_sim_page(sim, page[i]);
	sim->nr_insns += tf->nr_insns;
}

static void marker_exec(unsigned int cpu, void *udata)
{
	active = udata != NULL;
}

/* Append num to the list of n unless it repeats the last one; the new count */
static uint16_t add_num(uint64_t *list, uint16_t n, uint64_t num)
{
	if (n && list[n - 1] == num)
		return n;
	list[n] = num;
	return n + 1;
}

static struct tb_fetch *tb_fetch_new(struct qemu_plugin_tb *tb, size_t n)
{
	/* at most two lines and two pages per instruction (x86: at most 15 bytes) */
	uint64_t *lines = xcalloc(2 * n, sizeof(*lines)), *pages = xcalloc(2 * n, sizeof(*pages));
	uint16_t nr_lines = 0, nr_pages = 0;
	struct tb_fetch *tf;

	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t addr = qemu_plugin_insn_vaddr(insn);
		uint64_t last = addr + qemu_plugin_insn_size(insn) - 1;

		nr_lines = add_num(lines, nr_lines, addr >> FETCH_LINE_SHIFT);
		nr_lines = add_num(lines, nr_lines, last >> FETCH_LINE_SHIFT);
		nr_pages = add_num(pages, nr_pages, fetch_page_key(addr));
		nr_pages = add_num(pages, nr_pages, fetch_page_key(last));
	}
	tf = xcalloc(1, sizeof(*tf) + (nr_lines + nr_pages) * sizeof(uint64_t));
	tf->nr_insns = n;
	tf->nr_lines = nr_lines;
	tf->nr_pages = nr_pages;
	memcpy(tf->nums, lines, nr_lines * sizeof(uint64_t));
	memcpy(tf->nums + nr_lines, pages, nr_pages * sizeof(uint64_t));
	free(lines);
	free(pages);
	return tf;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	if (!n)
		return;
	if (qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0)) < EVAL_MIN) {
		markers_register(tb, marker_exec);
		return;
	}
	/* one per translation: QEMU keeps no plugin data we could free with it */
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
					     tb_fetch_new(tb, n));
}

static uint64_t count_bits(const uint64_t *map, uint64_t nr_bits)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < nr_bits / 64; i++)
		n += __builtin_popcountll(map[i]);
	return n;
}

/* The 4 KiB pages with a line touched: a word of the line map is 64 lines, 4 KiB */
static uint64_t count_pages(const uint64_t *map, uint64_t nr_bits)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < nr_bits / 64; i++)
		n += map[i] != 0;
	return n;
}

static double per_kilo(uint64_t misses, uint64_t insns)
{
	return insns ? 1000.0 * misses / insns : 0;
}

/* Open path's temporary twin for writing, NULL after reporting; *tmp: its name */
static FILE *open_tmp(const char *path, char **tmp)
{
	FILE *f;

	*tmp = xcalloc(1, strlen(path) + 8);
	sprintf(*tmp, "%s.tmp", path);
	f = fopen(*tmp, "w");
	if (!f) {
		fprintf(stderr, "kbolt plugin: %s: cannot write\n", *tmp);
		free(*tmp);
	}
	return f;
}

/* Close f, and rename only a complete file into place */
static void close_tmp(FILE *f, char *tmp, const char *path)
{
	if (fclose(f) == 0)
		rename(tmp, path);
	free(tmp);
}

/* "ADDRESS COUNT" for each line missed, by address: which code the misses are in */
static void write_line_misses(void)
{
	char *tmp;
	FILE *f = open_tmp(misses_path, &tmp);

	if (!f)
		return;
	fprintf(f, "# kbolt-eval-misses: L1i misses per 64-byte line of kernel code\n");
	fprintf(f, "kbolt-eval-misses 1\n");
	for (uint64_t i = 0; i < NR_LINES; i++)
		if (line_misses[i])
			fprintf(f, "%016" PRIx64 " %" PRIu32 "\n",
				(uint64_t)(EVAL_MIN + (i << FETCH_LINE_SHIFT)), line_misses[i]);
	close_tmp(f, tmp, misses_path);
}

static void write_figures(qemu_plugin_id_t id, void *udata)
{
	struct fetch_sim sum = { 0 };
	char *tmp;
	FILE *f;

	for (int c = 0; c < nr_vcpus; c++) {
		sum.nr_insns += vcpus[c].sim.nr_insns;
		sum.l1i_misses += vcpus[c].sim.l1i_misses;
		sum.itlb_misses += vcpus[c].sim.itlb_misses;
	}
	if (line_misses)
		write_line_misses();
	f = open_tmp(out_path, &tmp);
	if (!f)
		return;
	fprintf(f, "# kbolt-eval: kernel instruction fetch through a simulated L1i and iTLB\n");
	fprintf(f, "kbolt-eval 2\nl1i %d %d %d\nitlb %d %d %d\nvcpus %d\n",
		L1I_SETS * L1I_WAYS << FETCH_LINE_SHIFT, L1I_WAYS, 1 << FETCH_LINE_SHIFT,
		ITLB_ENTRIES, 1 << FETCH_HUGE_SHIFT, 1 << FETCH_PAGE_SHIFT, nr_vcpus);
	fprintf(f, "insns %" PRIu64 "\nl1i-misses %" PRIu64 "\nitlb-misses %" PRIu64 "\n",
		sum.nr_insns, sum.l1i_misses, sum.itlb_misses);
	fprintf(f, "l1i-mpki %.4f\nitlb-mpki %.4f\n", per_kilo(sum.l1i_misses, sum.nr_insns),
		per_kilo(sum.itlb_misses, sum.nr_insns));
	fprintf(f, "lines %" PRIu64 "\npages %" PRIu64 "\n", count_bits(line_map, NR_LINES),
		count_pages(line_map, NR_LINES));
	close_tmp(f, tmp, out_path);
}

static int parse_arg(const char *arg)
{
	if (strncmp(arg, "misses=", 7))
		return 1;
	misses_path = arg + 7;
	return 0;
}

static int init(qemu_plugin_id_t id)
{
	line_map = xcalloc(NR_LINES / 64, sizeof(*line_map));
	/* 128 MiB of address space, of which only the pages of code that misses get used */
	if (misses_path)
		line_misses = xcalloc(NR_LINES, sizeof(*line_misses));
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, write_figures, NULL);
	return 0;
}

PLUGIN_INSTALL(parse_arg, init)
