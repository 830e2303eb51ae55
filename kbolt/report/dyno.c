// SPDX-License-Identifier: GPL-2.0
/*
 * Dyno stats, as llvm-bolt's -dyno-stats: the branches a run of the profile executes,
 * in the old layout and in the new one.  A block's successor in the order decides: a
 * jcc whose taken block comes next is inverted (its taken and not-taken counts swap),
 * a jmp to the block that comes next disappears, a block that no longer falls into
 * its fall-through block gets a jmp (emit.c's plan_block() decides the same way).
 * Functions kept as they were count the same before and after; functions without
 * blocks (not analysed, or skipped before their CFG was built) are not counted.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "../../common/util.h"
#include "../pass/layout.h"
#include "dyno.h"

/* Block b, followed in the new layout by next (-1: nothing), or at its old place (old) */
static void count_block(const struct func *f, uint32_t b, long next, bool old, uint64_t *v)
{
	const struct bb *bb = &f->bbs[b];
	uint64_t fall_w = bb->w_fall;	/* prof_map_apply() carried blocks without a branch */

	switch (bb->term) {
	case TERM_JCC:
		if (!old && next == bb->taken && bb->taken != bb->fall) {
			v[DYNO_TAKEN_JCC] += bb->w_fall;	/* inverted */
			v[DYNO_NOT_TAKEN_JCC] += bb->w_taken;
			v[DYNO_FALL] += bb->w_taken;
			return;
		}
		v[DYNO_TAKEN_JCC] += bb->w_taken;
		v[DYNO_NOT_TAKEN_JCC] += bb->w_fall;
		break;
	case TERM_JMP:
		v[!old && next == bb->taken ? DYNO_FALL : DYNO_JMP] += bb->w_taken;
		return;
	}
	if (bb->fall >= 0)
		v[old || next == bb->fall ? DYNO_FALL : DYNO_JMP] += fall_w;
}

/* The old order of f's emitted blocks */
static uint32_t old_order(const struct func *f, uint32_t *order)
{
	uint32_t nr = 0;

	for (uint32_t b = 0; b < f->nr_bbs; b++)
		if (!f->bbs[b].drop)
			order[nr++] = b;
	return nr;
}

static void score_func(const struct func *f, struct dyno_stats *d)
{
	uint32_t *order = xmalloc(f->nr_bbs * sizeof(*order)), nr = old_order(f, order);
	double before = ext_tsp_score(f, order, nr);

	d->ext_tsp[DYNO_BEFORE] += before;
	d->ext_tsp[DYNO_AFTER] += f->moved ? ext_tsp_score(f, f->order, f->nr_order) : before;
	d->greedy_fallback += f->moved && f->greedy_fallback;
	free(order);
}

static void count_func(const struct func *f, struct dyno_stats *d)
{
	long *next = NULL;

	if (f->moved) {
		next = xmalloc(f->nr_bbs * sizeof(*next));
		for (uint32_t b = 0; b < f->nr_bbs; b++)
			next[b] = -2;	/* not emitted */
		for (uint32_t k = 0; k < f->nr_order; k++)
			next[f->order[k]] = k + 1 < f->nr_order ? (long)f->order[k + 1] : -1;
	}
	for (uint32_t b = 0; b < f->nr_bbs; b++) {
		if (f->bbs[b].drop)
			continue;
		count_block(f, b, -1, true, d->v[DYNO_BEFORE]);
		if (!next)
			count_block(f, b, -1, true, d->v[DYNO_AFTER]);
		else if (next[b] != -2)
			count_block(f, b, next[b], false, d->v[DYNO_AFTER]);
	}
	free(next);
}

void dyno_gather(const struct opt *opt, struct dyno_stats *d)
{
	for (size_t i = 0; opt->prof && i < opt->nr_funcs; i++) {
		const struct func *f = &opt->funcs[i];

		if (!f->alias && f->nr_bbs && f->weight) {
			count_func(f, d);
			score_func(f, d);
		}
	}
}

static const char *const dyno_name[DYNO_NR] = {
	[DYNO_TAKEN_JCC] = "taken conditional branches",
	[DYNO_NOT_TAKEN_JCC] = "non-taken conditional branches",
	[DYNO_JMP] = "executed unconditional jmps",
	[DYNO_FALL] = "executed fall-throughs",
};

static void print_line(uint64_t before, uint64_t after, const char *what)
{
	printf("  %14" PRIu64 " %14" PRIu64 " ", before, after);
	if (before)
		printf(" (%+6.1f%%)", 100.0 * ((double)after - (double)before) / before);
	else
		printf("          ");
	printf("  %s\n", what);
}

void dyno_print_text(const struct dyno_stats *d)
{
	const uint64_t *b = d->v[DYNO_BEFORE], *a = d->v[DYNO_AFTER];

	printf("dyno stats (executions by the profile):\n  %14s %14s  %9s\n", "before", "after",
	       "change");
	for (int k = 0; k < DYNO_NR; k++)
		print_line(b[k], a[k], dyno_name[k]);
	print_line(b[DYNO_TAKEN_JCC] + b[DYNO_NOT_TAKEN_JCC],
		   a[DYNO_TAKEN_JCC] + a[DYNO_NOT_TAKEN_JCC], "all conditional branches");
	print_line(b[DYNO_TAKEN_JCC] + b[DYNO_JMP], a[DYNO_TAKEN_JCC] + a[DYNO_JMP],
		   "taken branches");
	print_line(b[DYNO_TAKEN_JCC] + b[DYNO_NOT_TAKEN_JCC] + b[DYNO_JMP],
		   a[DYNO_TAKEN_JCC] + a[DYNO_NOT_TAKEN_JCC] + a[DYNO_JMP], "total branches");
	print_line((uint64_t)d->ext_tsp[DYNO_BEFORE], (uint64_t)d->ext_tsp[DYNO_AFTER],
		   "ext-TSP score (higher is better)");
	if (d->greedy_fallback)
		printf("  %zu rewritten functions laid out by greedy chains: ext-TSP's order "
		       "did not fit their bytes\n", d->greedy_fallback);
}

static const char *const dyno_key[DYNO_NR] = {
	[DYNO_TAKEN_JCC] = "taken_conditional",
	[DYNO_NOT_TAKEN_JCC] = "non_taken_conditional",
	[DYNO_JMP] = "unconditional_jmps",
	[DYNO_FALL] = "fall_throughs",
};

void dyno_print_json(const struct dyno_stats *d, struct json *j)
{
	json_obj_open(j);
	for (int w = DYNO_BEFORE; w <= DYNO_AFTER; w++) {
		const uint64_t *v = d->v[w];

		json_key(j, w == DYNO_BEFORE ? "before" : "after");
		json_obj_open(j);
		for (int k = 0; k < DYNO_NR; k++) {
			json_member_u64(j, dyno_key[k], v[k]);
		}
		json_member_u64(j, "conditional", v[DYNO_TAKEN_JCC] + v[DYNO_NOT_TAKEN_JCC]);
		json_member_u64(j, "taken", v[DYNO_TAKEN_JCC] + v[DYNO_JMP]);
		json_member_u64(j, "total_branches",
				v[DYNO_TAKEN_JCC] + v[DYNO_NOT_TAKEN_JCC] + v[DYNO_JMP]);
		json_member_u64(j, "ext_tsp_score", (uint64_t)d->ext_tsp[w]);
		json_obj_close(j);
	}
	json_member_u64(j, "greedy_fallback", d->greedy_fallback);
	json_obj_close(j);
}
