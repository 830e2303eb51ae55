// SPDX-License-Identifier: GPL-2.0
/*
 * Block order of one function.  Blocks linked by fall-through form chains that cost
 * nothing to keep together; both layouts move chains and break them only where it pays.
 *
 * profile: ext-TSP (ext_tsp.c), and if its order does not fit, greedy.
 * greedy:  greedy chain merging (Pettis and Hansen): edges by weight, heaviest first,
 *          join a chain's tail to another's head; chains that ran go first by heat, the
 *          entry's chain at the front; never-executed chains last in their old order.
 * random:  a seeded shuffle of the chains, some broken at random (a torture test of
 *          the rewriter, not an optimization).
 *
 * The first order that fits the function's bytes wins: the preferred one, then safer
 * ones (cold chains moved to the end only), else the function keeps its old layout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../model/opt.h"
#include "emit.h"
#include "layout.h"

struct chain {
	uint32_t head, tail;	/* blocks; next[] links them */
	uint64_t heat;		/* summed block counts */
	uint32_t nr;
	uint32_t idx;		/* original position of its head */
};

struct chains {
	struct chain *c;
	uint32_t nr;
	int32_t *next;		/* per block: the block after it in its chain, -1 */
	int32_t *of;		/* per block: its chain */
};

static void chains_free(struct chains *cs)
{
	free(cs->c);
	free(cs->next);
	free(cs->of);
}

/* Chains of blocks that fall into each other, in their old order */
static void chains_init(const struct func *f, struct chains *cs)
{
	/* merged chains stay as empty slots, and splits add some: room for both */
	cs->c = xcalloc(2 * f->nr_bbs, sizeof(*cs->c));
	cs->next = xmalloc(f->nr_bbs * sizeof(*cs->next));
	cs->of = xmalloc(f->nr_bbs * sizeof(*cs->of));
	cs->nr = 0;
	for (uint32_t b = 0; b < f->nr_bbs; b++) {
		const struct bb *bb = &f->bbs[b];

		cs->next[b] = -1;
		cs->of[b] = -1;
		if (bb->drop)
			continue;
		if (b && !f->bbs[b - 1].drop && f->bbs[b - 1].fall == (int32_t)b) {
			struct chain *c = &cs->c[cs->of[b - 1]];

			cs->next[c->tail] = b;
			c->tail = b;
			c->nr++;
			c->heat += bb->count;
			cs->of[b] = cs->of[b - 1];
			continue;
		}
		cs->c[cs->nr] = (struct chain){ b, b, bb->count, 1, b };
		cs->of[b] = cs->nr++;
	}
}

static bool order_is_old(const struct func *f)
{
	for (uint32_t k = 1; k < f->nr_order; k++)
		if (f->order[k] < f->order[k - 1])
			return false;
	return true;
}

/* A well-mixed, never zero, state for xorshift from a seed and a function's address */
static uint64_t splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x ? x : 1;
}

/* xorshift64*: the same seed gives the same layouts everywhere */
static uint64_t rnd_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dULL;
}

/* Cut c's chain after block b: the rest becomes a chain of its own */
static void split_after(struct chains *cs, int32_t b)
{
	struct chain *c = &cs->c[cs->of[b]];
	int32_t n = cs->next[b];

	if (n < 0)
		return;
	cs->c[cs->nr] = (struct chain){ n, c->tail, 0, 0, n };
	for (int32_t x = n; x >= 0; x = cs->next[x]) {
		cs->of[x] = cs->nr;
		cs->c[cs->nr].nr++;
	}
	c->nr -= cs->c[cs->nr].nr;
	cs->nr++;
	c->tail = b;
	cs->next[b] = -1;
}

static void merge_chains(struct chains *cs, uint32_t a, uint32_t b);

/* Break some chains at random fall-through points: the emitter then adds jmps */
static void break_chains(const struct func *f, struct chains *cs, uint64_t *rs)
{
	for (uint32_t b = 0; b < f->nr_bbs; b++)
		if (cs->of[b] >= 0 && cs->next[b] >= 0 && !(rnd_next(rs) % 4))
			split_after(cs, b);
}

/* 0: planned; -ENOENT: the order is the old one; -ENOSPC: it does not fit */
static int try_order(struct opt *opt, struct func *f)
{
	if (order_is_old(f))
		return -ENOENT;
	return emit_plan(opt, f);
}

struct edge_ref {
	uint64_t w;
	uint32_t from, to;
	bool fall;
};

static int cmp_edge(const void *a, const void *b)
{
	const struct edge_ref *x = a, *y = b;

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	if (x->fall != y->fall)
		return x->fall ? -1 : 1;
	return x->from < y->from ? -1 : x->from > y->from;
}

static void merge_chains(struct chains *cs, uint32_t a, uint32_t b)
{
	struct chain *x = &cs->c[a], *y = &cs->c[b];

	cs->next[x->tail] = y->head;
	x->tail = y->tail;
	x->heat += y->heat;
	x->nr += y->nr;
	for (int32_t k = y->head; k >= 0; k = cs->next[k])
		cs->of[k] = a;
	y->nr = 0;	/* empty: skipped when ordering */
}

/* How chains are ordered: as in the old code, cold ones moved last, or hot first */
enum chain_order { ORDER_OLD, ORDER_COLD_LAST, ORDER_HEAT };

struct chain_sort {
	const struct chains *cs;
	enum chain_order mode;
};

/* The entry's chain first, then by the mode; ties in old order */
static int cmp_chain(const void *a, const void *b, void *arg)
{
	const struct chain_sort *s = arg;
	const struct chain *x = &s->cs->c[*(const uint32_t *)a];
	const struct chain *y = &s->cs->c[*(const uint32_t *)b];
	bool xe = x->head == 0, ye = y->head == 0;

	if (xe != ye)
		return xe ? -1 : 1;
	if (s->mode != ORDER_OLD && !x->heat != !y->heat)
		return x->heat ? -1 : 1;
	if (s->mode == ORDER_HEAT && x->heat && x->heat * y->nr != y->heat * x->nr)
		return x->heat * y->nr > y->heat * x->nr ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void order_chains(struct func *f, struct chains *cs, enum chain_order mode)
{
	uint32_t *corder = xmalloc(cs->nr * sizeof(*corder)), n = 0;

	for (uint32_t k = 0; k < cs->nr; k++) {
		struct chain *c = &cs->c[k];

		if (!c->nr)
			continue;
		c->heat = 0;
		c->idx = c->head;
		for (int32_t b = c->head; b >= 0; b = cs->next[b])
			c->heat += f->bbs[b].count;
		corder[n++] = k;
	}
	qsort_r(corder, n, sizeof(*corder), cmp_chain, &(struct chain_sort){ cs, mode });
	f->nr_order = 0;
	for (uint32_t k = 0; k < n; k++)
		for (int32_t b = cs->c[corder[k]].head; b >= 0; b = cs->next[b])
			f->order[f->nr_order++] = b;
	free(corder);
}

/* Plan f with cs in mode: does it fit? */
static bool fits(struct opt *opt, struct func *f, struct chains *cs, enum chain_order mode)
{
	order_chains(f, cs, mode);
	return try_order(opt, f) != -ENOSPC;
}

static void chains_copy(struct chains *dst, const struct chains *src, uint32_t nr_bbs)
{
	dst->nr = src->nr;
	memcpy(dst->c, src->c, 2 * nr_bbs * sizeof(*src->c));
	memcpy(dst->next, src->next, nr_bbs * sizeof(*src->next));
	memcpy(dst->of, src->of, nr_bbs * sizeof(*src->of));
}

/* Profile edges, heaviest first */
static struct edge_ref *weighted_edges(const struct func *f, size_t *nr)
{
	struct edge_ref *e = xcalloc(2 * f->nr_bbs, sizeof(*e));

	*nr = 0;
	for (uint32_t b = 0; b < f->nr_bbs; b++) {
		const struct bb *bb = &f->bbs[b];

		if (bb->drop)
			continue;
		if (bb->fall > 0 && bb->w_fall && !f->bbs[bb->fall].drop)
			e[(*nr)++] = (struct edge_ref){ bb->w_fall, b, bb->fall, true };
		if (bb->taken > 0 && bb->taken != bb->fall && bb->w_taken &&
		    !f->bbs[bb->taken].drop)
			e[(*nr)++] = (struct edge_ref){ bb->w_taken, b, bb->taken, false };
	}
	qsort(e, *nr, sizeof(*e), cmp_edge);
	return e;
}

/*
 * Make e->to follow e->from.  A jcc's fall-through may be cut (the jcc is inverted, no
 * cost); cutting the block that falls into e->to costs it a jmp.  False if the edge
 * cannot be laid out as a fall-through.
 */
static bool join_edge(const struct func *f, struct chains *cs, const struct edge_ref *e)
{
	int32_t a = e->from, t = e->to;

	if (cs->of[a] == cs->of[t])
		return false;
	if (cs->next[a] >= 0) {
		if (e->fall || f->bbs[a].term != TERM_JCC)
			return false;
		split_after(cs, a);
	}
	if (cs->c[cs->of[t]].head != (uint32_t)t) {
		for (uint32_t p = 0; p < f->nr_bbs; p++)
			if (cs->next[p] == t) {
				split_after(cs, p);
				break;
			}
	}
	merge_chains(cs, cs->of[a], cs->of[t]);
	return true;
}

static void join_edges(struct opt *opt, struct func *f, struct chains *cs,
		       const struct edge_ref *e, size_t nr);

/*
 * From the old layout (which fits), join edges one by one in the old order of
 * chains, each join kept only if the function still fits; then order the chains hot
 * first, or at least cold last, if that fits too.
 */
static int layout_chains(struct opt *opt, struct func *f, const struct edge_ref *e, size_t nr)
{
	static const enum chain_order finals[] = { ORDER_HEAT, ORDER_COLD_LAST, ORDER_OLD };
	struct chains cs;
	int err = -ENOENT;

	chains_init(f, &cs);
	join_edges(opt, f, &cs, e, nr);
	for (size_t k = 0; k < ARRAY_SIZE(finals); k++) {
		order_chains(f, &cs, finals[k]);
		err = try_order(opt, f);
		if (err != -ENOSPC)
			break;
	}
	chains_free(&cs);
	return err;
}

/* Greedy: the heaviest profile edges first */
static int layout_greedy(struct opt *opt, struct func *f)
{
	size_t nr;
	struct edge_ref *e;
	int err;

	if (!f->weight)
		return -ENOENT;
	e = weighted_edges(f, &nr);
	err = layout_chains(opt, f, e, nr);
	free(e);
	return err;
}

/* The edges ext-TSP made fall-throughs (consecutive in f->order), heaviest first */
static struct edge_ref *ext_tsp_edges(const struct func *f, size_t *nr)
{
	struct edge_ref *e = xcalloc(f->nr_order + 1, sizeof(*e));

	*nr = 0;
	for (uint32_t k = 0; k + 1 < f->nr_order; k++) {
		const struct bb *bb = &f->bbs[f->order[k]];
		int32_t to = f->order[k + 1];

		if (bb->fall == to && bb->w_fall)
			e[(*nr)++] = (struct edge_ref){ bb->w_fall, f->order[k], to, true };
		else if (bb->taken == to && bb->w_taken)
			e[(*nr)++] = (struct edge_ref){ bb->w_taken, f->order[k], to, false };
	}
	qsort(e, *nr, sizeof(*e), cmp_edge);
	return e;
}

/*
 * The ext-TSP order if it fits the function's bytes (the emitter's jmps and branch
 * encodings may not); else as many of its fall-throughs as fit, joined one by one,
 * heaviest first; else (a function too big for ext-TSP) the greedy layout.
 */
static int layout_ext_tsp(struct opt *opt, struct func *f)
{
	struct edge_ref *e;
	size_t nr;
	int err;

	if (!f->weight)
		return -ENOENT;
	if (ext_tsp_order(f)) {
		err = layout_greedy(opt, f);
		f->greedy_fallback = !err;
		return err;
	}
	err = try_order(opt, f);
	if (err != -ENOSPC)
		return err;
	e = ext_tsp_edges(f, &nr);
	err = layout_chains(opt, f, e, nr);
	f->greedy_fallback = !err;
	free(e);
	return err;
}

/* Join edges in their order, each kept only if f still fits with chains in old order */
static void join_edges(struct opt *opt, struct func *f, struct chains *cs,
		       const struct edge_ref *e, size_t nr)
{
	struct chains saved;

	chains_init(f, &saved);
	for (size_t k = 0; k < nr; k++) {
		chains_copy(&saved, cs, f->nr_bbs);
		if (join_edge(f, cs, &e[k]) && !fits(opt, f, cs, ORDER_OLD))
			chains_copy(cs, &saved, f->nr_bbs);
	}
	chains_free(&saved);
}

/* Every branch edge inside f, in a random order */
static struct edge_ref *random_edges(const struct func *f, size_t *nr, uint64_t *rs)
{
	struct edge_ref *e = xcalloc(f->nr_bbs, sizeof(*e));

	*nr = 0;
	for (uint32_t b = 0; b < f->nr_bbs; b++) {
		const struct bb *bb = &f->bbs[b];

		if (!bb->drop && bb->taken > 0 && bb->taken != bb->fall && !f->bbs[bb->taken].drop)
			e[(*nr)++] = (struct edge_ref){ rnd_next(rs) | 1, b, bb->taken, false };
	}
	qsort(e, *nr, sizeof(*e), cmp_edge);
	return e;
}

/* A random order of the non-empty chains, the entry's first */
static void shuffle_chains(struct func *f, const struct chains *cs, uint64_t *rs)
{
	uint32_t *corder = xmalloc(cs->nr * sizeof(*corder)), n = 0;

	corder[n++] = cs->of[0];
	for (uint32_t k = 0; k < cs->nr; k++)
		if (cs->c[k].nr && k != (uint32_t)cs->of[0])
			corder[n++] = k;
	for (uint32_t k = n - 1; k > 1; k--) {
		uint32_t j = 1 + rnd_next(rs) % k, t = corder[k];

		corder[k] = corder[j];
		corder[j] = t;
	}
	f->nr_order = 0;
	for (uint32_t k = 0; k < n; k++)
		for (int32_t b = cs->c[corder[k]].head; b >= 0; b = cs->next[b])
			f->order[f->nr_order++] = b;
	free(corder);
}

/*
 * Random edges joined while the function fits (a jmp whose target comes next goes
 * away and pays for others), then a shuffle of the chains that fits, else their old
 * order; as a last resort, chains broken at random fall-throughs.
 */
static int layout_random(struct opt *opt, struct func *f)
{
	uint64_t rs = splitmix64(opt->o->seed ^ splitmix64(f->sym->addr));
	struct chains cs;
	struct edge_ref *e;
	bool too_big = false;
	size_t nr;
	int err = -ENOENT;

	chains_init(f, &cs);
	e = random_edges(f, &nr, &rs);
	join_edges(opt, f, &cs, e, nr);
	free(e);
	for (int attempt = 0; attempt < 4 && err; attempt++) {
		shuffle_chains(f, &cs, &rs);
		err = try_order(opt, f);
		too_big |= err == -ENOSPC;
	}
	if (err) {
		order_chains(f, &cs, ORDER_OLD);
		err = try_order(opt, f);
	}
	for (int attempt = 0; attempt < 3 && err; attempt++) {
		chains_free(&cs);
		chains_init(f, &cs);
		break_chains(f, &cs, &rs);
		shuffle_chains(f, &cs, &rs);
		err = try_order(opt, f);
		too_big |= err == -ENOSPC;
	}
	chains_free(&cs);
	return err && too_big ? -ENOSPC : err;
}

/*
 * 0: f has a new layout, planned; -ENOENT: the old one is as good (nothing to move or
 * no profile for it); -ENOSPC: no new layout fits.
 */
int layout_func(struct opt *opt, struct func *f)
{
	uint32_t movable = 0;

	f->order = xmalloc(f->nr_bbs * sizeof(*f->order));
	for (uint32_t b = 1; b < f->nr_bbs; b++)
		movable += !f->bbs[b].drop;
	if (!movable)
		return -ENOENT;
	if (opt->o->layout == LAYOUT_RANDOM)
		return layout_random(opt, f);
	if (opt->o->layout == LAYOUT_GREEDY)
		return layout_greedy(opt, f);
	return layout_ext_tsp(opt, f);
}
