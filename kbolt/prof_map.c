// SPDX-License-Identifier: GPL-2.0
/*
 * Profile edges onto functions, then onto blocks.  Each function gets the total weight
 * of the records leaving it (lite mode decodes only those with some, --stats reports
 * it).  Then taken branches weigh their block's taken edge, fall-through records (one
 * step in kbolt's format, a range in BOLT's) weigh every fall-through edge they
 * cross, and every block reached counts an execution.
 */
#include "opt.h"

static long bb_containing(const struct func *f, uint64_t addr)
{
	long i;

	if (!f || !f->nr_bbs)
		return -1;
	i = find_op_containing(f, addr);
	return i < 0 ? -1 : find_bb_of_op(f, i);
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
void weigh_funcs(struct opt *opt)
{
	for (size_t k = 0; opt->prof && k < opt->prof->nr_edges; k++) {
		const struct prof_edge *e = &opt->prof->edges[k];
		struct func *f = find_func_containing(opt, e->from);

		opt->total_weight += e->count;
		if (f)
			f->weight += e->count;
	}
}

void apply_profile(struct opt *opt)
{
	for (size_t k = 0; opt->prof && k < opt->prof->nr_edges; k++) {
		const struct prof_edge *e = &opt->prof->edges[k];
		struct func *f = find_func_containing(opt, e->from);

		if (!f || !f->nr_bbs)
			continue;
		if (e->kind == PK_FALLTHROUGH)
			map_fallthrough(f, e);
		else
			map_branch(opt, f, e);
	}
}
