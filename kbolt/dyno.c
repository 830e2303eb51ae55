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

#include "../kmeta/util.h"
#include "dyno.h"

/*
 * Executions leaving each block into the next one in the old code.  kbolt's recorder
 * writes fall-through records at jccs only: a block without a branch of ours that
 * falls into a branch target has no record, so its executions are what entered it,
 * by the records and by falling from the block before.  BOLT's ranges do cross such
 * boundaries (w_fall is then set and already counted in the next block's count).
 */
static uint64_t *fall_weights(const struct func *f)
{
	uint64_t *w = xcalloc(f->nr_bbs, sizeof(*w)), in = 0;

	for (uint32_t b = 0; b < f->nr_bbs; b++) {
		const struct bb *bb = &f->bbs[b];
		uint64_t exec = bb->count + in;

		w[b] = bb->w_fall;
		if (bb->term == TERM_NONE && bb->fall >= 0 && !bb->w_fall)
			w[b] = exec;
		in = bb->term == TERM_NONE && bb->fall == (int32_t)b + 1 && !bb->w_fall ? w[b] : 0;
	}
	return w;
}

/* Block b, followed in the new layout by next (-1: nothing), or at its old place (old) */
static void count_block(const struct func *f, uint32_t b, long next, bool old, uint64_t fall_w,
			uint64_t *v)
{
	const struct bb *bb = &f->bbs[b];

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
		fall_w = bb->w_fall;
		break;
	case TERM_JMP:
		v[!old && next == bb->taken ? DYNO_FALL : DYNO_JMP] += bb->w_taken;
		return;
	}
	if (bb->fall >= 0)
		v[old || next == bb->fall ? DYNO_FALL : DYNO_JMP] += fall_w;
}

static void count_func(const struct func *f, struct dyno_stats *d)
{
	uint64_t *fall_w = fall_weights(f);
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
		count_block(f, b, -1, true, fall_w[b], d->v[DYNO_BEFORE]);
		if (!next)
			count_block(f, b, -1, true, fall_w[b], d->v[DYNO_AFTER]);
		else if (next[b] != -2)
			count_block(f, b, next[b], false, fall_w[b], d->v[DYNO_AFTER]);
	}
	free(next);
	free(fall_w);
}

void dyno_gather(const struct opt *opt, struct dyno_stats *d)
{
	for (size_t i = 0; opt->prof && i < opt->nr_funcs; i++) {
		const struct func *f = &opt->funcs[i];

		if (!f->alias && f->nr_bbs && f->weight)
			count_func(f, d);
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
			json_key(j, dyno_key[k]);
			json_u64(j, v[k]);
		}
		json_key(j, "conditional");
		json_u64(j, v[DYNO_TAKEN_JCC] + v[DYNO_NOT_TAKEN_JCC]);
		json_key(j, "taken");
		json_u64(j, v[DYNO_TAKEN_JCC] + v[DYNO_JMP]);
		json_key(j, "total_branches");
		json_u64(j, v[DYNO_TAKEN_JCC] + v[DYNO_NOT_TAKEN_JCC] + v[DYNO_JMP]);
		json_obj_close(j);
	}
	json_obj_close(j);
}
