// SPDX-License-Identifier: GPL-2.0
/*
 * The ext-TSP block order of one function (Newell and Pupyrev, "Improved Basic Block
 * Reordering", 2020; the layout of LLVM and BOLT).  A layout scores, for every profile
 * edge u -> v of weight w, with u's end at address s and v's start at address d:
 *
 *   s == d (a fall-through)        w * 1.0, or 1.05 when it also saves a jmp
 *   forward jump, d - s <= 1024    w * 0.1 * (1 - (d - s) / 1024)
 *   backward jump, s - d <= 640    w * 0.1 * (1 - (s - d) / 640)
 *
 * which rewards fall-throughs first and short jumps next, the two things the i-cache
 * and the branch unit like.  Every executed block starts as a chain of its own; the
 * pair of chains whose merge gains most is merged, again and again, while a merge
 * gains: X then Y, Y then X, or Y put into X where X is split in two (X1 Y X2, Y X2 X1,
 * X2 X1 Y).  Merges that would move the entry from the front are not made.  The chains
 * are then laid out entry first, then by density (executions per byte), and the blocks
 * that never ran go last in their old order.
 *
 * Block sizes are the old ones: the emitter may shorten or lengthen a branch, and adds
 * a jmp where a block no longer falls into its successor; the score ignores those few
 * bytes.  The caller checks that the order fits the function's bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../model/opt.h"
#include "layout.h"

#define FALL_WEIGHT		1.0
#define FALL_SAVES_JMP_WEIGHT	1.05
#define JUMP_WEIGHT		0.1
#define FORWARD_DISTANCE	1024
#define BACKWARD_DISTANCE	640
#define SPLIT_LIMIT		128	/* chains longer than this are not split (as LLVM) */
/* Functions with more executed blocks keep the greedy layout: the pair table is n^2 */
#define MAX_HOT			512

struct tsp_edge {
	uint32_t from, to;	/* hot block indexes */
	double w;
	bool saves_jmp;		/* as a fall-through, it needs no jmp (TERM_NONE, TERM_JMP) */
};

struct tsp_chain {
	uint32_t *b;		/* hot block indexes, in order */
	uint32_t nr;
	double score;
	bool dead;		/* merged into another */
};

/* The best merge of one pair of chains, cached until either chain changes */
struct tsp_merge {
	double gain;
	uint32_t split;		/* X's blocks before the split, 0: none */
	uint8_t type;		/* enum merge_type */
	bool known;
	bool x_first;		/* the pair as (lower, higher) chain index, or swapped */
};

enum merge_type { M_XY, M_X1_Y_X2, M_Y_X2_X1, M_X2_X1_Y, M_NR };

struct tsp {
	const struct func *f;
	uint32_t n, *block;	/* hot index -> block */
	uint32_t *size;		/* hot index -> bytes */
	struct tsp_edge *e;
	uint32_t nr_e;
	uint32_t *out_first;	/* edges of hot block i: e[out_first[i] .. out_first[i+1]) */
	struct tsp_chain *c;	/* one per hot block at first */
	uint32_t *chain_of;
	struct tsp_merge *pair;	/* n * n, the lower chain index first */
	uint64_t *pos;		/* scratch: address of each hot block in a candidate */
	uint32_t *seq;		/* scratch: a candidate's blocks */
};

static uint32_t bb_size(const struct func *f, uint32_t b)
{
	const struct bb *bb = &f->bbs[b];
	uint32_t end = bb->first + bb->nr < f->nr_ops ? f->ops[bb->first + bb->nr].off :
			(uint32_t)f->sym->size;

	return end - f->ops[bb->first].off;
}

static double edge_score(const struct tsp_edge *e, uint64_t src_end, uint64_t dst)
{
	if (src_end == dst)
		return e->w * (e->saves_jmp ? FALL_SAVES_JMP_WEIGHT : FALL_WEIGHT);
	if (dst > src_end && dst - src_end <= FORWARD_DISTANCE)
		return e->w * JUMP_WEIGHT * (1.0 - (double)(dst - src_end) / FORWARD_DISTANCE);
	if (dst < src_end && src_end - dst <= BACKWARD_DISTANCE)
		return e->w * JUMP_WEIGHT * (1.0 - (double)(src_end - dst) / BACKWARD_DISTANCE);
	return 0;
}

/* Score of the edges between blocks of seq (chains cx and cy), laid out in that order */
static double seq_score(struct tsp *t, const uint32_t *seq, uint32_t nr, uint32_t cx,
			uint32_t cy)
{
	uint64_t addr = 0;
	double s = 0;

	for (uint32_t k = 0; k < nr; k++) {
		t->pos[seq[k]] = addr;
		addr += t->size[seq[k]];
	}
	for (uint32_t k = 0; k < nr; k++) {
		uint32_t u = seq[k];

		for (uint32_t i = t->out_first[u]; i < t->out_first[u + 1]; i++) {
			uint32_t v = t->e[i].to, cv = t->chain_of[v];

			if (cv == cx || cv == cy)
				s += edge_score(&t->e[i], t->pos[u] + t->size[u], t->pos[v]);
		}
	}
	return s;
}

static void append(uint32_t *seq, uint32_t *nr, const uint32_t *b, uint32_t from, uint32_t to)
{
	for (uint32_t k = from; k < to; k++)
		seq[(*nr)++] = b[k];
}

/* The blocks of X and Y merged by type, X split after `split` blocks; their number */
static uint32_t build_seq(const struct tsp_chain *x, const struct tsp_chain *y, uint32_t split,
			  enum merge_type type, uint32_t *seq)
{
	uint32_t nr = 0;

	switch (type) {
	case M_XY:
		append(seq, &nr, x->b, 0, x->nr);
		append(seq, &nr, y->b, 0, y->nr);
		break;
	case M_X1_Y_X2:
		append(seq, &nr, x->b, 0, split);
		append(seq, &nr, y->b, 0, y->nr);
		append(seq, &nr, x->b, split, x->nr);
		break;
	case M_Y_X2_X1:
		append(seq, &nr, y->b, 0, y->nr);
		append(seq, &nr, x->b, split, x->nr);
		append(seq, &nr, x->b, 0, split);
		break;
	default:	/* M_X2_X1_Y */
		append(seq, &nr, x->b, split, x->nr);
		append(seq, &nr, x->b, 0, split);
		append(seq, &nr, y->b, 0, y->nr);
		break;
	}
	return nr;
}

/* The entry (hot block 0, when it ran) stays first in its chain */
static bool keeps_entry(const struct tsp *t, const uint32_t *seq, uint32_t cx, uint32_t cy)
{
	bool has_entry = t->block[0] == 0 && (t->chain_of[0] == cx || t->chain_of[0] == cy);

	return !has_entry || seq[0] == 0;
}

/* Does hot block u have an edge to v (u's at most two)? */
static bool has_edge(const struct tsp *t, uint32_t u, uint32_t v)
{
	for (uint32_t i = t->out_first[u]; i < t->out_first[u + 1]; i++)
		if (t->e[i].to == v)
			return true;
	return false;
}

/*
 * The best way to put Y after or into X.  As LLVM, X is not split where it falls
 * through along an edge: most of a chain does, and the other merge types can still
 * undo such a fall-through where that gains.
 */
static void best_merge(struct tsp *t, uint32_t cx, uint32_t cy, struct tsp_merge *m)
{
	const struct tsp_chain *x = &t->c[cx], *y = &t->c[cy];
	double base = x->score + y->score;
	uint32_t last_split = x->nr <= SPLIT_LIMIT ? x->nr : 1;

	for (uint32_t split = 0; split < last_split; split++) {
		if (split && has_edge(t, x->b[split - 1], x->b[split]))
			continue;
		for (int type = split ? M_X1_Y_X2 : M_XY; type < (split ? M_NR : M_XY + 1); type++) {
			uint32_t nr = build_seq(x, y, split, type, t->seq);
			double gain;

			if (!keeps_entry(t, t->seq, cx, cy))
				continue;
			gain = seq_score(t, t->seq, nr, cx, cy) - base;
			if (gain > m->gain + 1e-9) {
				m->gain = gain;
				m->split = split;
				m->type = type;
			}
		}
	}
}

/* The best merge of chains a < b in either role, cached */
static struct tsp_merge *pair_merge(struct tsp *t, uint32_t a, uint32_t b)
{
	struct tsp_merge *m = &t->pair[(size_t)a * t->n + b], other = { 0 };

	if (m->known)
		return m;
	*m = (struct tsp_merge){ .known = true, .x_first = true };
	best_merge(t, a, b, m);
	best_merge(t, b, a, &other);
	if (other.gain > m->gain + 1e-9) {
		*m = other;
		m->known = true;
		m->x_first = false;
	}
	return m;
}

static void forget_pairs(struct tsp *t, uint32_t c)
{
	for (uint32_t k = 0; k < t->n; k++) {
		t->pair[(size_t)k * t->n + c].known = false;
		t->pair[(size_t)c * t->n + k].known = false;
	}
}

static void apply_merge(struct tsp *t, uint32_t a, uint32_t b, const struct tsp_merge *m)
{
	uint32_t cx = m->x_first ? a : b, cy = m->x_first ? b : a;
	struct tsp_chain *x = &t->c[cx], *y = &t->c[cy];
	uint32_t nr = build_seq(x, y, m->split, m->type, t->seq);

	x->score = seq_score(t, t->seq, nr, cx, cy);
	x->b = xrealloc(x->b, nr * sizeof(*x->b));
	memcpy(x->b, t->seq, nr * sizeof(*x->b));
	x->nr = nr;
	for (uint32_t k = 0; k < y->nr; k++)
		t->chain_of[y->b[k]] = cx;
	y->dead = true;
	forget_pairs(t, cx);
	forget_pairs(t, cy);
}

/* Merge the best pair while some merge gains */
static void merge_all(struct tsp *t)
{
	for (;;) {
		struct tsp_merge *best = NULL;
		uint32_t ba = 0, bb = 0;

		for (uint32_t i = 0; i < t->nr_e; i++) {
			uint32_t a = t->chain_of[t->e[i].from], b = t->chain_of[t->e[i].to];
			struct tsp_merge *m;

			if (a == b)
				continue;
			m = a < b ? pair_merge(t, a, b) : pair_merge(t, b, a);
			if (m->gain > 1e-9 && (!best || m->gain > best->gain)) {
				best = m;
				ba = a < b ? a : b;
				bb = a < b ? b : a;
			}
		}
		if (!best)
			return;
		apply_merge(t, ba, bb, best);
	}
}

static void add_edge(struct tsp *t, const int32_t *hot_of, uint32_t from, int32_t to,
		     uint64_t w, bool saves_jmp)
{
	if (to < 0 || !w || hot_of[to] < 0)
		return;
	t->e[t->nr_e++] = (struct tsp_edge){ hot_of[from], hot_of[to], (double)w, saves_jmp };
}

/* Hot blocks (executed, emitted) and the profile's edges between them, by source */
static int tsp_init(struct tsp *t, const struct func *f)
{
	int32_t *hot_of = xmalloc(f->nr_bbs * sizeof(*hot_of));

	*t = (struct tsp){ .f = f };
	t->block = xmalloc(f->nr_bbs * sizeof(*t->block));
	t->size = xmalloc(f->nr_bbs * sizeof(*t->size));
	for (uint32_t b = 0; b < f->nr_bbs; b++) {
		hot_of[b] = -1;
		if (f->bbs[b].drop || !f->bbs[b].count)
			continue;
		hot_of[b] = t->n;
		t->size[t->n] = bb_size(f, b);
		t->block[t->n++] = b;
	}
	if (t->n > MAX_HOT) {
		free(hot_of);
		return -E2BIG;
	}
	t->e = xcalloc(2 * t->n + 1, sizeof(*t->e));
	t->out_first = xcalloc(t->n + 1, sizeof(*t->out_first));
	for (uint32_t i = 0; i < t->n; i++) {
		const struct bb *bb = &f->bbs[t->block[i]];

		t->out_first[i] = t->nr_e;
		if (bb->taken >= 0 && bb->taken != bb->fall)
			add_edge(t, hot_of, t->block[i], bb->taken, bb->w_taken,
				 bb->term == TERM_JMP);
		add_edge(t, hot_of, t->block[i], bb->fall, bb->w_fall, bb->term == TERM_NONE);
	}
	t->out_first[t->n] = t->nr_e;
	free(hot_of);
	return 0;
}

static void tsp_start_chains(struct tsp *t)
{
	t->c = xcalloc(t->n, sizeof(*t->c));
	t->chain_of = xmalloc(t->n * sizeof(*t->chain_of));
	t->pair = xcalloc((size_t)t->n * t->n, sizeof(*t->pair));
	t->pos = xcalloc(t->n, sizeof(*t->pos));
	t->seq = xmalloc(t->n * sizeof(*t->seq));
	for (uint32_t i = 0; i < t->n; i++) {
		t->c[i].b = xmalloc(sizeof(*t->c[i].b));
		t->c[i].b[0] = i;
		t->c[i].nr = 1;
		t->chain_of[i] = i;
	}
	for (uint32_t i = 0; i < t->n; i++)	/* self-loops score too */
		t->c[i].score = seq_score(t, t->c[i].b, 1, i, i);
}

static void tsp_free(struct tsp *t)
{
	for (uint32_t i = 0; t->c && i < t->n; i++)
		free(t->c[i].b);
	free(t->c);
	free(t->chain_of);
	free(t->pair);
	free(t->pos);
	free(t->seq);
	free(t->e);
	free(t->out_first);
	free(t->block);
	free(t->size);
}

static double density(const struct tsp *t, const struct tsp_chain *c)
{
	uint64_t count = 0, bytes = 0;

	for (uint32_t k = 0; k < c->nr; k++) {
		count += t->f->bbs[t->block[c->b[k]]].count;
		bytes += t->size[c->b[k]];
	}
	return bytes ? (double)count / bytes : 0;
}

struct ranked {
	double density;
	uint32_t chain, head;	/* head: its first block, for ties in old order */
	bool entry;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;

	if (x->entry != y->entry)
		return x->entry ? -1 : 1;
	if (x->density != y->density)
		return x->density > y->density ? -1 : 1;
	return x->head < y->head ? -1 : x->head > y->head;
}

/* f->order: the chains, entry first, then densest first; then the cold blocks */
static void write_order(struct func *f, const struct tsp *t)
{
	struct ranked *r = xcalloc(t->n + 1, sizeof(*r));
	uint32_t nr = 0;

	for (uint32_t i = 0; i < t->n; i++) {
		if (t->c[i].dead)
			continue;
		r[nr++] = (struct ranked){ density(t, &t->c[i]), i, t->block[t->c[i].b[0]],
					   t->block[t->c[i].b[0]] == 0 };
	}
	qsort(r, nr, sizeof(*r), cmp_ranked);
	f->nr_order = 0;
	if (f->bbs[0].drop || !f->bbs[0].count)	/* an entry that never ran still leads */
		f->order[f->nr_order++] = 0;
	for (uint32_t k = 0; k < nr; k++)
		for (uint32_t j = 0; j < t->c[r[k].chain].nr; j++)
			f->order[f->nr_order++] = t->block[t->c[r[k].chain].b[j]];
	for (uint32_t b = 1; b < f->nr_bbs; b++)
		if (!f->bbs[b].drop && !f->bbs[b].count)
			f->order[f->nr_order++] = b;
	free(r);
}

int ext_tsp_order(struct func *f)
{
	struct tsp t;
	int err = tsp_init(&t, f);

	if (!err) {
		tsp_start_chains(&t);
		merge_all(&t);
		write_order(f, &t);
	}
	tsp_free(&t);
	return err;
}

double ext_tsp_score(const struct func *f, const uint32_t *order, uint32_t nr)
{
	uint64_t *start = xcalloc(f->nr_bbs, sizeof(*start)), addr = 0;
	bool *placed = xcalloc(f->nr_bbs, sizeof(*placed));
	double s = 0;

	for (uint32_t k = 0; k < nr; k++) {
		start[order[k]] = addr;
		placed[order[k]] = true;
		addr += bb_size(f, order[k]);
	}
	for (uint32_t k = 0; k < nr; k++) {
		const struct bb *bb = &f->bbs[order[k]];
		uint64_t end = start[order[k]] + bb_size(f, order[k]);
		struct tsp_edge e;

		if (bb->taken >= 0 && bb->taken != bb->fall && placed[bb->taken]) {
			e = (struct tsp_edge){ .w = bb->w_taken, .saves_jmp = bb->term == TERM_JMP };
			s += edge_score(&e, end, start[bb->taken]);
		}
		if (bb->fall >= 0 && placed[bb->fall]) {
			e = (struct tsp_edge){ .w = bb->w_fall, .saves_jmp = bb->term == TERM_NONE };
			s += edge_score(&e, end, start[bb->fall]);
		}
	}
	free(start);
	free(placed);
	return s;
}
