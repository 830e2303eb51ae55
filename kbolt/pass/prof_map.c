// SPDX-License-Identifier: GPL-2.0
/*
 * Profile edges onto functions, then onto blocks.  Each function gets the total weight
 * of the records leaving it (lite mode decodes only those with some, --stats reports
 * it).  Then taken branches weigh their block's taken edge, fall-through records (one
 * step in kbolt's format, a range in BOLT's) weigh every fall-through edge they
 * cross, and every block reached counts an execution.  Last, what the records cannot
 * say: a block that ends without a branch runs on into the next one every time it
 * runs (kbolt's recorder writes records at branches only).  Samples (S records) are no
 * transfer: a function that no transfer record gave a count, but that has samples,
 * gets its counts from them by flow inference (infer.c).
 */
#include <stdlib.h>

#include "../../common/util.h"
#include "../model/opt.h"
#include "cfg.h"
#include "prof_map.h"

static long bb_containing(const struct func *f, uint64_t addr)
{
	long i;

	if (!f || !f->nr_bbs)
		return -1;
	i = find_op_containing(f, addr);
	return i < 0 ? -1 : cfg_find_bb_of_op(f, i);
}

static void map_fallthrough(struct func *f, const struct prof_edge *e)
{
	long from = bb_containing(f, e->from), to = bb_containing(f, e->to);

	if (from < 0 || to < from)
		return;
	for (long b = from; b < to; b++) {
		if (f->bbs[b].fall == b + 1)
			f->bbs[b].w_fall += e->count;
		f->bbs[b + 1].count += e->count;
	}
}

static void map_branch(struct opt *opt, struct func *f, const struct prof_edge *e)
{
	struct func *t = find_func_containing(opt, e->to);
	long to = bb_containing(t, e->to), from;

	if (to < 0)
		return;
	t->bbs[to].count += e->count;
	if (t != f)
		return;
	from = bb_containing(f, e->from);
	if (from < 0)
		return;
	if (f->bbs[from].taken == to)
		f->bbs[from].w_taken += e->count;
	else if (f->bbs[from].fall == to)
		f->bbs[from].w_fall += e->count;
}

/* Each function's weight: what lite mode decodes, and --stats reports */
void prof_map_weigh_funcs(struct opt *opt)
{
	for (size_t k = 0; opt->prof && k < opt->prof->nr_edges; k++) {
		const struct prof_edge *e = &opt->prof->edges[k];
		struct func *f = find_func_containing(opt, e->from);

		opt->total_weight += e->count;
		if (f)
			f->weight += e->count;
	}
}

/*
 * Blocks that end without a branch of ours fall into the next with every execution:
 * what entered them by the records, and what fell into them from the block before.
 * In address order, one pass carries those executions down each run of such blocks.
 * (BOLT's ranges cross those boundaries and have set w_fall already.)
 */
static void carry_falls(struct func *f)
{
	for (uint32_t b = 0; b + 1 < f->nr_bbs; b++) {
		struct bb *bb = &f->bbs[b];

		if (bb->term != TERM_NONE || bb->fall != (int32_t)b + 1 || bb->w_fall)
			continue;
		bb->w_fall = bb->count;
		f->bbs[b + 1].count += bb->count;
	}
}

static int cmp_sample(const void *a, const void *b)
{
	const struct prof_edge *x = a, *y = b;

	return (x->from > y->from) - (x->from < y->from);
}

/* The profile's samples, sorted by address: malloc'ed, *nr of them */
static struct prof_edge *collect_samples(const struct prof *p, size_t *nr)
{
	struct prof_edge *s = NULL;
	size_t cap = 0;

	*nr = 0;
	for (size_t k = 0; k < p->nr_edges; k++) {
		if (prof_is_transfer(&p->edges[k]))
			continue;
		GROW(s, cap, *nr + 1);
		s[(*nr)++] = p->edges[k];
	}
	sort_array(s, *nr, sizeof(*s), cmp_sample);
	return s;
}

static bool has_counts(const struct func *f)
{
	for (uint32_t b = 0; b < f->nr_bbs; b++)
		if (f->bbs[b].count || f->bbs[b].w_taken || f->bbs[b].w_fall)
			return true;
	return false;
}

/* f has no count from transfers: infer them from the samples in it, if any */
static void infer_from_samples(struct func *f, const struct prof_edge *s, size_t nr)
{
	size_t k = lower_bound_u64(s, nr, sizeof(*s), offsetof(struct prof_edge, from),
				   f->sym->addr);
	uint64_t *samples, sum = 0;

	if (k == nr || s[k].from >= f->sym->addr + f->sym->size || has_counts(f))
		return;
	samples = xcalloc(f->nr_bbs, sizeof(*samples));
	for (; k < nr && s[k].from < f->sym->addr + f->sym->size; k++) {
		long b = bb_containing(f, s[k].from);

		if (b >= 0 && !__builtin_add_overflow(samples[b], s[k].count, &samples[b]))
			sum += s[k].count;
	}
	if (sum)
		infer_counts(f, samples);
	free(samples);
}

void prof_map_apply(struct opt *opt)
{
	struct prof_edge *samples;
	size_t nr_samples;

	for (size_t k = 0; opt->prof && k < opt->prof->nr_edges; k++) {
		const struct prof_edge *e = &opt->prof->edges[k];
		struct func *f = find_func_containing(opt, e->from);

		if (!f || !f->nr_bbs || !prof_is_transfer(e))
			continue;	/* a sample is no transfer */
		if (e->kind == PK_FALLTHROUGH)
			map_fallthrough(f, e);
		else
			map_branch(opt, f, e);
	}
	for (size_t i = 0; opt->prof && i < opt->nr_funcs; i++)
		if (opt->funcs[i].nr_bbs && opt->funcs[i].weight)
			carry_falls(&opt->funcs[i]);
	if (!opt->prof)
		return;
	/* after carry_falls(): an inferred function's counts are complete as they are */
	samples = collect_samples(opt->prof, &nr_samples);
	for (size_t i = 0; nr_samples && i < opt->nr_funcs; i++)
		if (opt->funcs[i].nr_bbs && !opt->funcs[i].alias)
			infer_from_samples(&opt->funcs[i], samples, nr_samples);
	free(samples);
}
