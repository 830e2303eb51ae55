// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of flow inference (kbolt/pass/infer.c, through prof_map_apply() of
 * kbolt/pass/prof_map.c) on the infer fixture (selftests/fixtures/infer.S): samples
 * (S records) at the instructions of a diamond and a loop give block counts that
 * conserve flow and edge weights that name the hot path: the sampled arm of the
 * diamond, both arms in the samples' proportion, the fall-through arm when neither is
 * sampled; the loop's back edge and exit, also when only its body was sampled.  A
 * function a transfer record reaches keeps the records' counts.  Counts are in units
 * of 1/16 sample per instruction (infer.c's SCALE).  TAP output.
 */
#include <inttypes.h>

#include "../../kbolt/pass/cfg.h"
#include "../../kbolt/pass/prof_map.h"
#include "fixture.h"
#include "tap.h"

struct sample {
	uint32_t off;	/* in the function */
	uint64_t count;
};

/* f's counts cleared, then the profile of these samples (and transfers) applied */
static void apply(struct fixture *fx, struct func *f, const struct sample *s, size_t nr,
		  const struct prof_edge *transfers, size_t nr_transfers)
{
	struct prof *p = xcalloc(1, sizeof(*p));

	p->path = xstrdup("infer-test");
	for (size_t i = 0; i < nr_transfers; i++)
		prof_add_edge(p, transfers[i].from, transfers[i].to, transfers[i].count,
			      transfers[i].kind);
	for (size_t i = 0; i < nr; i++)
		prof_add_edge(p, f->sym->addr + s[i].off, f->sym->addr + s[i].off, s[i].count,
			      PK_SAMPLE);
	for (uint32_t b = 0; b < f->nr_bbs; b++)
		f->bbs[b].count = f->bbs[b].w_taken = f->bbs[b].w_fall = 0;
	f->weight = 1;
	fx->opt.prof = p;
	prof_map_apply(&fx->opt);
	fx->opt.prof = NULL;
	prof_free(p);
}

/* Block b's count and edge weights are these (said if not) */
static bool counts_are(const struct func *f, uint32_t b, uint64_t count, uint64_t taken,
		       uint64_t fall)
{
	const struct bb *bb = &f->bbs[b];

	if (bb->count == count && bb->w_taken == taken && bb->w_fall == fall)
		return true;
	printf("# %s bb%u: count %" PRIu64 " taken %" PRIu64 " fall %" PRIu64 ", want %" PRIu64
	       " %" PRIu64 " %" PRIu64 "\n", f->sym->name, b, bb->count, bb->w_taken,
	       bb->w_fall, count, taken, fall);
	return false;
}

/* What enters every block leaves it: the entry's count from outside, exits' to outside */
static bool conserves_flow(const struct func *f)
{
	uint32_t nr = cfg_nr_body_bbs(f);
	uint64_t *in = xcalloc(nr, sizeof(*in));
	bool ok = true;

	for (uint32_t b = 0; b < nr; b++) {
		const struct bb *bb = &f->bbs[b];

		if (bb->taken >= 0)
			in[bb->taken] += bb->w_taken;
		if (bb->fall >= 0)
			in[bb->fall] += bb->w_fall;
		if (bb->w_taken + bb->w_fall > bb->count)
			ok = false;
	}
	for (uint32_t b = 1; b < nr; b++)
		ok = ok && in[b] == f->bbs[b].count;
	free(in);
	return ok;
}

/* The diamond's instructions: bb0 +0 +5 +7, bb1 +9 +e +10 +12, bb2 +14 +19 +1b, bb3 +1d +1f */
static void test_diamond(struct fixture *fx)
{
	static const struct sample fall_arm[] = {
		{ 0x0, 10 }, { 0x5, 10 }, { 0x7, 10 }, { 0x9, 10 }, { 0xe, 10 }, { 0x10, 10 },
		{ 0x12, 10 }, { 0x1d, 10 }, { 0x1f, 10 },
	}, taken_arm[] = {
		{ 0x0, 10 }, { 0x5, 12 }, { 0x7, 8 }, { 0x14, 9 }, { 0x19, 11 }, { 0x1b, 10 },
		{ 0x1d, 10 }, { 0x1f, 10 },
	}, both[] = {	/* 3 and 7 a instruction: 48 and 112 units of bb0's 160 */
		{ 0x0, 10 }, { 0x5, 10 }, { 0x7, 10 }, { 0x9, 3 }, { 0xe, 3 }, { 0x10, 3 },
		{ 0x12, 3 }, { 0x14, 7 }, { 0x19, 7 }, { 0x1b, 7 }, { 0x1d, 10 }, { 0x1f, 10 },
	}, neither[] = {
		{ 0x0, 10 }, { 0x5, 10 }, { 0x7, 10 }, { 0x1d, 10 }, { 0x1f, 10 },
	}, inside[] = {	/* bb1's middle instruction sampled at +0xf, inside the add */
		{ 0x0, 10 }, { 0x5, 10 }, { 0x7, 10 }, { 0xf, 40 }, { 0x1d, 10 }, { 0x1f, 10 },
	};
	struct func *f = fixture_func(fx, "infer_diamond");

	if (!f || cfg_nr_body_bbs(f) != 4) {
		ok(0, "infer_diamond: found, 4 blocks");
		return;
	}
	apply(fx, f, fall_arm, ARRAY_SIZE(fall_arm), NULL, 0);
	ok(counts_are(f, 0, 160, 0, 160) && counts_are(f, 1, 160, 160, 0) &&
	   counts_are(f, 2, 0, 0, 0) && counts_are(f, 3, 160, 0, 0) && conserves_flow(f),
	   "diamond, the fall-through arm sampled: bb0 -> bb1 -> bb3 carries all 160");
	apply(fx, f, taken_arm, ARRAY_SIZE(taken_arm), NULL, 0);
	ok(counts_are(f, 0, 160, 160, 0) && counts_are(f, 1, 0, 0, 0) &&
	   counts_are(f, 2, 160, 0, 160) && counts_are(f, 3, 160, 0, 0) && conserves_flow(f),
	   "diamond, the taken arm sampled (unevenly): bb0 -> bb2 -> bb3 carries all 160");
	apply(fx, f, both, ARRAY_SIZE(both), NULL, 0);
	ok(counts_are(f, 0, 160, 112, 48) && counts_are(f, 1, 48, 48, 0) &&
	   counts_are(f, 2, 112, 0, 112) && counts_are(f, 3, 160, 0, 0) && conserves_flow(f),
	   "diamond, both arms sampled 3:7: the edges split 48:112");
	apply(fx, f, neither, ARRAY_SIZE(neither), NULL, 0);
	ok(counts_are(f, 0, 160, 0, 160) && counts_are(f, 1, 160, 160, 0) &&
	   counts_are(f, 2, 0, 0, 0) && conserves_flow(f),
	   "diamond, no arm sampled: the flow takes the fall-through arm (the likely path)");
	apply(fx, f, inside, ARRAY_SIZE(inside), NULL, 0);
	ok(f->bbs[1].count == 160 && f->bbs[2].count == 0 && conserves_flow(f),
	   "diamond: a sample inside an instruction counts for its block");
	apply(fx, f, NULL, 0, (struct prof_edge[]){
		{ f->sym->addr + 0x7, f->sym->addr + 0x14, 5, PK_JCC } }, 1);
	ok(f->bbs[0].w_taken == 5 && f->bbs[2].count == 5 && f->bbs[1].count == 0,
	   "diamond: without samples, a transfer record's counts are as prof_map_apply maps them");
	apply(fx, f, fall_arm, ARRAY_SIZE(fall_arm), (struct prof_edge[]){
		{ f->sym->addr + 0x7, f->sym->addr + 0x14, 5, PK_JCC } }, 1);
	ok(f->bbs[0].w_taken == 5 && f->bbs[2].count == 5 && f->bbs[1].count == 0,
	   "diamond: samples do not override a function a transfer record reaches");
}

/* The loop's instructions: bb0 +0 +5, bb1 +7 +9, bb2 +b +d +f, bb3 +11 */
static void test_loop(struct fixture *fx)
{
	static const struct sample exact[] = {	/* entered once per 99 turns */
		{ 0x0, 1 }, { 0x5, 1 }, { 0x7, 100 }, { 0x9, 100 }, { 0xb, 99 }, { 0xd, 99 },
		{ 0xf, 99 }, { 0x11, 1 },
	}, body_only[] = {
		{ 0xb, 50 }, { 0xd, 40 }, { 0xf, 60 },
	};
	struct func *f = fixture_func(fx, "infer_loop");

	if (!f || cfg_nr_body_bbs(f) != 4) {
		ok(0, "infer_loop: found, 4 blocks");
		return;
	}
	apply(fx, f, exact, ARRAY_SIZE(exact), NULL, 0);
	ok(counts_are(f, 0, 16, 0, 16) && counts_are(f, 1, 1600, 16, 1584) &&
	   counts_are(f, 2, 1584, 1584, 0) && counts_are(f, 3, 16, 0, 0) && conserves_flow(f),
	   "loop: 16 entries, the back edge 1584 times, the exit 16 (1/16 sample units)");
	apply(fx, f, body_only, ARRAY_SIZE(body_only), NULL, 0);
	ok(counts_are(f, 1, 800, 0, 800) && counts_are(f, 2, 800, 800, 0) && conserves_flow(f),
	   "loop, only the body sampled: the header is raised to the body's 800, the back "
	   "edge carries them");
	ok(f->bbs[0].count == 0 && f->bbs[3].count == 0,
	   "... entry and exit stay 0: raising them costs more than nothing");
}

int main(void)
{
	struct fixture fx;

	if (!fixture_open_or_fail(&fx, "infer", LAYOUT_PROFILE, 0))
		return tap_done();
	test_diamond(&fx);
	test_loop(&fx);
	fixture_close(&fx);
	return tap_done();
}
