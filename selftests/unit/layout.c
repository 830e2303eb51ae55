// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of layout_func() (kbolt/pass/layout.c) on the stages fixture
 * (selftests/fixtures/stages.S).  Random layouts, over many seeds: every new order
 * starts with the entry and holds each block of the body once, dropped padding never,
 * and is the one emit planned; the same seed gives the same order; a function whose
 * only other order does not fit is never given one.  Greedy layouts, with edge weights
 * set by hand as prof_map_apply() would: the hot taken edge of a jcc becomes the
 * fall-through (the jcc inverted), hot chains go before cold ones, and a function
 * without weight keeps its order; ext-TSP (the profile layout) agrees on the jcc.
 * TAP output.
 */
#include "../../kbolt/pass/emit.h"
#include "../../kbolt/pass/layout.h"
#include "fixture.h"
#include "tap.h"

#define NR_SEEDS 30

/* f->order starts with the entry and has each block that is not dropped once (said if not) */
static bool is_full_order(const struct func *f)
{
	unsigned char seen[64] = { 0 };
	uint32_t want = 0;

	for (uint32_t b = 0; b < f->nr_bbs; b++)
		want += !f->bbs[b].drop;
	if (f->nr_bbs > sizeof(seen) || f->nr_order != want || !f->nr_order || f->order[0]) {
		printf("# %s: %u blocks in the order, want %u, the entry's first\n", f->sym->name,
		       f->nr_order, want);
		return false;
	}
	for (uint32_t k = 0; k < f->nr_order; k++) {
		uint32_t b = f->order[k];

		if (b >= f->nr_bbs || f->bbs[b].drop || seen[b]++) {
			printf("# %s: bb%u at %u of the order: dropped, twice or none\n",
			       f->sym->name, b, k);
			return false;
		}
	}
	return true;
}

/* The plan emit left is of f->order: its blocks placed in that order, the entry at 0 */
static bool plan_follows_order(const struct func *f)
{
	for (uint32_t k = 0; k < f->nr_order; k++) {
		const struct bb *bb = &f->bbs[f->order[k]];

		if ((!k && bb->new_off) || (k && bb->new_off < f->bbs[f->order[k - 1]].new_off) ||
		    bb->new_off >= emit_plan_size(f)) {
			printf("# %s: bb%u at +0x%x out of the order's place\n", f->sym->name,
			       f->order[k], bb->new_off);
			return false;
		}
	}
	return true;
}

static bool is_order(const struct func *f, const uint32_t *order, uint32_t nr)
{
	bool same = f->nr_order == nr;

	for (uint32_t k = 0; same && k < nr; k++)
		same = f->order[k] == order[k];
	if (!same) {
		printf("# %s: order", f->sym->name);
		for (uint32_t k = 0; k < f->nr_order; k++)
			printf(" %u", f->order[k]);
		printf("\n");
	}
	return same;
}

/* A new layout by layout_func(): 0, -ENOENT (the old one) or -ENOSPC (none fits) */
static int relayout(struct fixture *fx, struct func *f)
{
	free(f->order);		/* layout_func() allocates it anew */
	f->order = NULL;
	f->nr_order = 0;
	return layout_func(&fx->opt, f);
}

static void test_random(struct fixture *fx, const char *name)
{
	struct func *f = fixture_func(fx, name);
	size_t nr_new = 0, nr_bad = 0, nr_plan_bad = 0, nr_other = 0;

	if (!f) {
		ok(0, "%s: found", name);
		return;
	}
	for (uint64_t seed = 1; seed <= NR_SEEDS; seed++) {
		int err;

		fx->o.seed = seed;
		err = relayout(fx, f);
		if (err) {
			nr_other += err != -ENOENT && err != -ENOSPC;
			continue;
		}
		nr_new++;
		nr_bad += !is_full_order(f);
		nr_plan_bad += !plan_follows_order(f);
	}
	ok(nr_new > 0 && !nr_bad && !nr_other,
	   "%s: %zu of %d random layouts new, each entry first and every body block once",
	   name, nr_new, NR_SEEDS);
	ok(!nr_plan_bad, "%s: ... each the order emit planned", name);
}

/* The same seed, the same order; some other seed, another */
static void test_random_seeds(struct fixture *fx)
{
	struct func *f = fixture_func(fx, "cfg_meta");
	uint32_t first[64];
	uint32_t nr;
	bool other = false;
	int err;

	if (!f) {
		ok(0, "cfg_meta: found");
		return;
	}
	fx->o.seed = 5;
	err = relayout(fx, f);
	nr = f->nr_order;
	memcpy(first, f->order, nr * sizeof(*first));
	ok(!err && nr <= ARRAY_SIZE(first), "cfg_meta: seed 5 gives a new layout (%d)", err);
	ok(!relayout(fx, f) && is_order(f, first, nr), "cfg_meta: seed 5 again, the same order");
	for (uint64_t seed = 1; seed <= NR_SEEDS && !other; seed++) {
		fx->o.seed = seed;
		other = !relayout(fx, f) && (f->nr_order != nr ||
					     memcmp(f->order, first, nr * sizeof(*first)));
	}
	ok(other, "cfg_meta: another seed gives another order");
}

/* emit_tight: 0 1 2 is the old order, and 0 2 1 does not fit */
static void test_random_no_fit(struct fixture *fx)
{
	struct func *f = fixture_func(fx, "emit_tight");
	size_t nr_new = 0;

	if (!f) {
		ok(0, "emit_tight: found");
		return;
	}
	for (uint64_t seed = 1; seed <= NR_SEEDS; seed++) {
		fx->o.seed = seed;
		nr_new += !relayout(fx, f);
	}
	ok(!nr_new, "emit_tight: none of %d random layouts is new (%zu)", NR_SEEDS, nr_new);
}

/* Profile weights as prof_map_apply() sets them: block counts and edge weights */
static void weigh(struct func *f, const uint64_t *count, const uint64_t *w_taken,
		  const uint64_t *w_fall)
{
	f->weight = 0;
	for (uint32_t b = 0; b < f->nr_bbs; b++) {
		f->bbs[b].count = count[b];
		f->bbs[b].w_taken = w_taken[b];
		f->bbs[b].w_fall = w_fall[b];
		f->weight += w_taken[b] + w_fall[b];
	}
}

static void test_greedy(struct fixture *fx)
{
	static const uint32_t hot_taken[] = { 0, 2, 3, 1 }, hot_fall[] = { 0, 1, 3, 2 };
	static const uint32_t hot_fixup[] = { 0, 1, 2, 3, 4, 7, 8, 5, 6 };
	static const uint64_t zero[10];
	struct func *br = fixture_func(fx, "cfg_branches");
	struct func *wide = fixture_func(fx, "emit_wide");
	struct func *meta = fixture_func(fx, "cfg_meta");
	int err;

	if (!br || !wide || !meta) {
		ok(0, "cfg_branches, emit_wide, cfg_meta: found");
		return;
	}
	fx->o.layout = LAYOUT_GREEDY;
	weigh(br, zero, zero, zero);
	err = relayout(fx, br);
	ok(err == -ENOENT, "greedy: cfg_branches without weight keeps its order (%d)", err);

	/* bb0 -> bb2 -> bb3 ran, bb1 did not */
	weigh(br, (const uint64_t[]){ 100, 0, 100, 100, 0 }, (const uint64_t[]){ 100, 0, 0, 0, 0 },
	      (const uint64_t[]){ 0, 0, 100, 0, 0 });
	err = relayout(fx, br);
	ok(!err && is_order(br, hot_taken, 4),
	   "greedy: cfg_branches, jz taken: 0 2 3 1, the taken block falls after the jcc (%d)",
	   err);
	ok(!err && br->bbs[0].new_off == 0 && br->bbs[2].new_off == 0x9,
	   "greedy: ... as emit planned it (bb2 at +0x9)");

	fx->o.layout = LAYOUT_PROFILE;
	err = relayout(fx, br);
	ok(!err && is_order(br, hot_taken, 4) && !br->greedy_fallback,
	   "ext-TSP: cfg_branches, jz taken: 0 2 3 1 too, its own order (%d)", err);
	fx->o.layout = LAYOUT_GREEDY;

	/* bb0 -> bb1 -> bb3 ran, bb2 did not */
	weigh(br, (const uint64_t[]){ 100, 100, 0, 100, 0 }, (const uint64_t[]){ 0, 100, 0, 0, 0 },
	      (const uint64_t[]){ 100, 0, 0, 0, 0 });
	err = relayout(fx, br);
	ok(!err && is_order(br, hot_fall, 4),
	   "greedy: cfg_branches, jz not taken: 0 1 3 2, bb1's jmp to bb3 made a fall (%d)", err);

	weigh(wide, (const uint64_t[]){ 100, 0, 100, 100, 0 },
	      (const uint64_t[]){ 100, 0, 0, 0, 0 }, (const uint64_t[]){ 0, 0, 100, 0, 0 });
	err = relayout(fx, wide);
	ok(!err && is_order(wide, hot_taken, 4) && emit_plan_size(wide) == 0x99,
	   "greedy: emit_wide, jz taken: 0 2 3 1, in rel32 branches that reach its padding (%d)",
	   err);

	/* the exception fixup ran: its chain goes before the BUG's, which did not */
	weigh(meta, (const uint64_t[]){ 50, 50, 50, 50, 50, 0, 0, 50, 50, 0 },
	      zero, (const uint64_t[]){ 50, 50, 50, 50, 0, 0, 0, 50, 0, 0 });
	err = relayout(fx, meta);
	ok(!err && is_order(meta, hot_fixup, 9),
	   "greedy: cfg_meta with its fixup hot: the fixup's chain 7 8 before the cold 5 6 (%d)",
	   err);
	fx->o.layout = LAYOUT_RANDOM;
}

int main(void)
{
	struct fixture fx;

	if (!fixture_open_or_fail(&fx, "stages", LAYOUT_RANDOM, 1))
		return tap_done();
	test_random(&fx, "cfg_branches");
	test_random(&fx, "cfg_meta");
	test_random(&fx, "emit_wide");
	test_random_seeds(&fx);
	test_random_no_fit(&fx);
	test_greedy(&fx);
	fixture_close(&fx);
	return tap_done();
}
