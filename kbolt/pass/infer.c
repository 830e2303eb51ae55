// SPDX-License-Identifier: GPL-2.0
/*
 * Flow inference: block and edge counts of one function from the samples of its
 * instructions, for a profile that has samples (S records) but no edge reaching the
 * function.  As LLVM's profi (SampleProfileInference.cpp, used by AutoFDO/CSSPGO and
 * BOLT's stale matching), a minimum-cost flow: the counts must satisfy flow
 * conservation over the CFG (what enters a block leaves it), and among all such flows
 * the one is taken that changes the blocks' sample-based estimates least, increasing a
 * count costing less than decreasing it (a block may run without being sampled, not
 * the reverse).  Documentation/design.rst, "Flow inference", says why this one.
 *
 * A block's estimate is its samples per instruction (BOLT's no-LBR mode normalizes by
 * instruction count too), times SCALE to keep resolution in integers.  The network,
 * each block b split into in(b) and out(b):
 *
 *   in(b) -> out(b)    unbounded, COST_INC a unit: the count raised above the estimate
 *   out(b) -> in(b)    w(b) units, COST_DEC a unit: the count lowered below it
 *   SS -> out(b), in(b) -> TT    w(b) units, free: the estimate itself, as supply and
 *                      demand (the flow first "runs" w(b) through b; the two arcs
 *                      above correct it)
 *   out(b) -> in(s)    for each CFG successor s, unbounded, COST_FALL, or COST_TAKEN
 *                      for the taken side of a two-way branch
 *   S -> in(entry), out(exit) -> T, T -> S    free: the function's own circulation
 *   S -> in(b), out(b) -> T    the others, COST_ENTER, COST_LEAVE: control arriving or
 *                      leaving where the CFG does not say (an exception fixup, an
 *                      indirect jump's target, a noreturn path)
 *
 * The maximum flow from SS to TT is the sum of the estimates (each can go round its
 * own out(b) -> in(b) arc), and its minimum cost is found by successive shortest paths
 * with Dijkstra over reduced costs (all costs are non-negative, so the potentials
 * start at 0).  A block's count is w(b) + flow(in->out) - flow(out->in); an edge's,
 * the flow on its arc.  Deterministic: the heap breaks ties by node number, the arcs
 * are added in block order.
 */
#include <stdlib.h>

#include "../../common/util.h"
#include "../model/opt.h"
#include "cfg.h"
#include "prof_map.h"

#define SCALE		16	/* a count unit: 1/16 of a sample per instruction */
#define COST_INC	10	/* profi's defaults: raising a count by one */
#define COST_INC_ZERO	11	/* ... of a block without samples */
#define COST_DEC	20	/* lowering it */
#define COST_FALL	1	/* a unit over an edge: a fall-through, or the only successor */
#define COST_TAKEN	2	/* over the taken edge of a block with two: the compiler lays
				   the likely path out as the fall-through */
#define COST_ENTER	40	/* entering elsewhere than at the entry */
#define COST_ENTER_REF	10	/* ... at a block something outside the function points to */
#define COST_LEAVE	40	/* leaving where the code cannot */
#define UNBOUNDED	((int64_t)1 << 60)
#define MAX_ESTIMATE	((int64_t)1 << 48)	/* so that no sum of estimates overflows */

struct arc {
	uint32_t to, next;	/* next: the next arc out of the same node, NONE at the end */
	int64_t cap;		/* residual capacity */
	int64_t cost;
};

#define NONE UINT32_MAX

struct network {
	struct arc *arcs;
	size_t nr_arcs, cap_arcs;
	uint32_t *first;	/* per node, its first arc */
	uint32_t nr_nodes;
};

struct heap_item {
	int64_t dist;
	uint32_t node;
};

/* An arc and its reverse (at index ^ 1), which carries what was sent back */
static uint32_t add_arc(struct network *n, uint32_t from, uint32_t to, int64_t cap, int64_t cost)
{
	uint32_t idx = n->nr_arcs;

	GROW(n->arcs, n->cap_arcs, n->nr_arcs + 2);
	n->arcs[idx] = (struct arc){ to, n->first[from], cap, cost };
	n->first[from] = idx;
	n->arcs[idx + 1] = (struct arc){ from, n->first[to], 0, -cost };
	n->first[to] = idx + 1;
	n->nr_arcs += 2;
	return idx;
}

static bool heap_less(const struct heap_item *a, const struct heap_item *b)
{
	return a->dist < b->dist || (a->dist == b->dist && a->node < b->node);
}

static void heap_push(struct heap_item *h, size_t *nr, struct heap_item it)
{
	size_t i = (*nr)++;

	for (; i && heap_less(&it, &h[(i - 1) / 2]); i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = it;
}

static struct heap_item heap_pop(struct heap_item *h, size_t *nr)
{
	struct heap_item top = h[0], last = h[--*nr];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= *nr)
			break;
		if (c + 1 < *nr && heap_less(&h[c + 1], &h[c]))
			c++;
		if (!heap_less(&h[c], &last))
			break;
		h[i] = h[c];
		i = c;
	}
	if (*nr)
		h[i] = last;
	return top;
}

struct mcf_state {
	int64_t *pot, *dist;
	uint32_t *via;		/* the arc the shortest path reaches each node by */
	struct heap_item *heap;
};

/* Dijkstra over reduced costs from src: is dst reachable? */
static bool shortest_path(struct network *n, struct mcf_state *s, uint32_t src, uint32_t dst)
{
	size_t nr = 0;

	for (uint32_t v = 0; v < n->nr_nodes; v++) {
		s->dist[v] = INT64_MAX;
		s->via[v] = NONE;
	}
	s->dist[src] = 0;
	heap_push(s->heap, &nr, (struct heap_item){ 0, src });
	while (nr) {
		struct heap_item it = heap_pop(s->heap, &nr);

		if (it.dist > s->dist[it.node])
			continue;	/* a stale entry: the node was reached shorter */
		for (uint32_t a = n->first[it.node]; a != NONE; a = n->arcs[a].next) {
			const struct arc *arc = &n->arcs[a];
			int64_t d;

			if (arc->cap <= 0)
				continue;
			d = it.dist + arc->cost + s->pot[it.node] - s->pot[arc->to];
			if (d < s->dist[arc->to]) {
				s->dist[arc->to] = d;
				s->via[arc->to] = a;
				heap_push(s->heap, &nr, (struct heap_item){ d, arc->to });
			}
		}
	}
	return s->dist[dst] != INT64_MAX;
}

/* Successive shortest paths: send all that src can send to dst, at the least cost */
static void min_cost_flow(struct network *n, uint32_t src, uint32_t dst)
{
	struct mcf_state s = {
		.pot = xcalloc(n->nr_nodes, sizeof(*s.pot)),
		.dist = xmalloc(n->nr_nodes * sizeof(*s.dist)),
		.via = xmalloc(n->nr_nodes * sizeof(*s.via)),
		/* each arc relaxed at most once per search, a push each */
		.heap = xmalloc((n->nr_arcs + 1) * sizeof(*s.heap)),
	};

	while (shortest_path(n, &s, src, dst)) {
		int64_t push = UNBOUNDED;

		for (uint32_t v = 0; v < n->nr_nodes; v++)
			if (s.dist[v] != INT64_MAX)
				s.pot[v] += s.dist[v];
		for (uint32_t v = dst; v != src; v = n->arcs[s.via[v] ^ 1].to)
			if (n->arcs[s.via[v]].cap < push)
				push = n->arcs[s.via[v]].cap;
		for (uint32_t v = dst; v != src; v = n->arcs[s.via[v] ^ 1].to) {
			n->arcs[s.via[v]].cap -= push;
			n->arcs[s.via[v] ^ 1].cap += push;
		}
	}
	free(s.pot);
	free(s.dist);
	free(s.via);
	free(s.heap);
}

/* The number of instructions of block b, its trailing padding not counted */
static int64_t bb_insns(const struct func *f, const struct bb *bb)
{
	int64_t n = 0;

	for (uint32_t i = bb->first; i < bb->first + bb->nr; i++)
		n += !(f->ops[i].flags & OP_TRAIL);
	return n ? n : 1;
}

static int64_t estimate(const struct func *f, const struct bb *bb, uint64_t samples)
{
	unsigned __int128 w = (unsigned __int128)samples * SCALE;
	int64_t n = bb_insns(f, bb);

	w = (w + n / 2) / n;
	return w > MAX_ESTIMATE ? MAX_ESTIMATE : (int64_t)w;
}

/* Does control leave the function from b: no successor, or a jcc out of it? */
static bool is_exit(const struct func *f, const struct bb *bb)
{
	const struct op *last = &f->ops[bb->first + bb->nr - 1];

	while (last > &f->ops[bb->first] && (last->flags & OP_TRAIL))
		last--;
	return (bb->taken < 0 && bb->fall < 0) || (last->kind == KI_JCC && bb->taken < 0);
}

#define IN(b)	(2 * (b))
#define OUT(b)	(2 * (b) + 1)

void infer_counts(struct func *f, const uint64_t *samples)
{
	uint32_t nr = cfg_nr_body_bbs(f), S = 2 * nr, T = S + 1, SS = S + 2, TT = S + 3;
	struct network n = { .nr_nodes = 2 * nr + 4 };
	uint32_t *inc = xmalloc(nr * sizeof(*inc)), *dec = xmalloc(nr * sizeof(*dec));
	uint32_t *fall = xmalloc(nr * sizeof(*fall)), *taken = xmalloc(nr * sizeof(*taken));
	int64_t *w = xmalloc(nr * sizeof(*w));

	n.first = xmalloc(n.nr_nodes * sizeof(*n.first));
	for (uint32_t v = 0; v < n.nr_nodes; v++)
		n.first[v] = NONE;
	add_arc(&n, T, S, UNBOUNDED, 0);
	for (uint32_t b = 0; b < nr; b++) {
		const struct bb *bb = &f->bbs[b];
		bool ref = f->ops[bb->first].flags & OP_EXTREF;

		w[b] = estimate(f, bb, samples[b]);
		inc[b] = add_arc(&n, IN(b), OUT(b), UNBOUNDED, w[b] ? COST_INC : COST_INC_ZERO);
		dec[b] = w[b] ? add_arc(&n, OUT(b), IN(b), w[b], COST_DEC) : NONE;
		if (w[b]) {
			add_arc(&n, SS, OUT(b), w[b], 0);
			add_arc(&n, IN(b), TT, w[b], 0);
		}
		fall[b] = bb->fall >= 0 && (uint32_t)bb->fall < nr ?
			  add_arc(&n, OUT(b), IN(bb->fall), UNBOUNDED, COST_FALL) : NONE;
		taken[b] = bb->taken >= 0 && (uint32_t)bb->taken < nr ?
			   add_arc(&n, OUT(b), IN(bb->taken), UNBOUNDED,
				   fall[b] != NONE ? COST_TAKEN : COST_FALL) : NONE;
		add_arc(&n, S, IN(b), UNBOUNDED, !b ? 0 : ref ? COST_ENTER_REF : COST_ENTER);
		add_arc(&n, OUT(b), T, UNBOUNDED, is_exit(f, bb) ? 0 : COST_LEAVE);
	}
	min_cost_flow(&n, SS, TT);
	/* the flow an arc carried is what its reverse can send back */
	for (uint32_t b = 0; b < nr; b++) {
		struct bb *bb = &f->bbs[b];

		bb->count = w[b] + n.arcs[inc[b] ^ 1].cap - (dec[b] != NONE ? n.arcs[dec[b] ^ 1].cap : 0);
		bb->w_fall = fall[b] != NONE ? n.arcs[fall[b] ^ 1].cap : 0;
		bb->w_taken = taken[b] != NONE ? n.arcs[taken[b] ^ 1].cap : 0;
	}
	free(n.arcs);
	free(n.first);
	free(inc);
	free(dec);
	free(fall);
	free(taken);
	free(w);
}
