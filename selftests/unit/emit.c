// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of emit_plan() and emit_code() (kbolt/pass/emit.c) on the stages fixture
 * (selftests/fixtures/stages.S), with block orders given by hand: the old order gives
 * the old bytes back; a jcc whose taken block comes next is inverted; a jmp to the
 * next block goes away and one is added where a block no longer falls into its
 * successor; branches are widened to rel32 exactly when rel8 does not reach, and may
 * grow into the claimed padding; an order that does not fit is refused; every old op
 * of a block laid out is placed once (dropped padding never), at the offsets the
 * fixture's layout gives.  TAP output.
 */
#include "../../kbolt/pass/cfg.h"
#include "../../kbolt/pass/emit.h"
#include "fixture.h"
#include "tap.h"

/* The old bytes of f, its claimed padding included */
static const unsigned char *old_bytes(struct fixture *fx, const struct func *f)
{
	return kmeta_bytes_at(fx->opt.img, f->sym->addr, f->sym->size);
}

/* Is op i a jmp the plan left out, its target block coming next in the order? */
static bool is_elided(const struct func *f, uint32_t i)
{
	long b = cfg_find_bb_of_op(f, i);

	for (uint32_t k = 0; b >= 0 && k + 1 < f->nr_order; k++)
		if (f->order[k] == (uint32_t)b)
			return f->bbs[b].term == TERM_JMP && (f->ops[i].flags & OP_REENCODED) &&
			       f->bbs[b].taken == (int32_t)f->order[k + 1];
	return false;
}

/*
 * Every op of the blocks laid out comes from exactly one item that was in the old
 * code (a jmp the plan left out: none), at its op's new offset; ops of dropped
 * blocks from none
 */
static bool each_op_once(const struct func *f)
{
	for (uint32_t i = 0; i < f->nr_ops; i++) {
		long b = cfg_find_bb_of_op(f, i);
		uint32_t want = b < 0 || f->bbs[b].drop || is_elided(f, i) ? 0 : 1, n = 0;
		bool at_off = true;

		for (uint32_t k = 0; k < f->nr_items; k++) {
			if (f->items[k].op != i || f->items[k].added)
				continue;
			n++;
			at_off &= f->items[k].new_off == f->ops[i].new_off;
		}
		if (n != want || !at_off || (want && f->ops[i].new_off == OP_NOT_PLACED)) {
			printf("# %s+0x%x: %u items, want %u, new offset 0x%x\n", f->sym->name,
			       f->ops[i].off, n, want, f->ops[i].new_off);
			return false;
		}
	}
	return true;
}

/* The item placing op (not an added jmp), NULL if none */
static const struct item *item_of_op(const struct func *f, uint32_t op)
{
	for (uint32_t k = 0; k < f->nr_items; k++)
		if (f->items[k].op == op && !f->items[k].added)
			return &f->items[k];
	return NULL;
}

/* emit_code() anew, as rewrite.c's emit_all() does */
static void emit(struct fixture *fx, struct func *f)
{
	free(f->code);
	emit_code(&fx->opt, f);
}

static int32_t get_s32(const unsigned char *p)
{
	return (int32_t)get_u32(p);
}

/* In the old order each function's plan and bytes are its old ones */
static void test_identity(struct fixture *fx)
{
	static const char *const names[] = {
		"cfg_branches", "cfg_meta", "emit_wide", "emit_tight",
	};

	for (size_t n = 0; n < ARRAY_SIZE(names); n++) {
		struct func *f = fixture_func(fx, names[n]);
		uint32_t order[16], nr = 0;
		bool same_offs = true;
		int err;

		if (!f) {
			ok(0, "%s: found", names[n]);
			continue;
		}
		for (uint32_t b = 0; b < f->nr_bbs && nr < ARRAY_SIZE(order); b++)
			if (!f->bbs[b].drop)
				order[nr++] = b;
		set_order(f, order, nr);
		err = emit_plan(&fx->opt, f);
		for (uint32_t i = 0; !err && i < f->nr_ops; i++)
			same_offs &= f->bbs[cfg_find_bb_of_op(f, i)].drop ||
				     f->ops[i].new_off == f->ops[i].off;
		ok(!err && same_offs && emit_plan_size(f) == kmeta_elf_size(f->sym),
		   "%s: the old order is planned at the old offsets (%d, size 0x%x)", names[n],
		   err, emit_plan_size(f));
		if (err)
			continue;
		emit(fx, f);
		ok(!memcmp(f->code, old_bytes(fx, f), f->sym->size),
		   "%s: ... and emitted as the old bytes, padding and all", names[n]);
	}
}

/* cfg_branches laid out 0 2 3 1: bb0's jz (to bb2, next) inverted, bb1 last with its jmp */
static void test_inverted(struct fixture *fx)
{
	static const uint32_t order[] = { 0, 2, 3, 1 };
	static const uint32_t new_off[] = { 0x0, 0x16, 0x9, 0xe };
	struct func *f = fixture_func(fx, "cfg_branches");
	const struct item *jcc, *jmp;
	const unsigned char *old;
	bool offs = true, added = false;
	int err;

	if (!f) {
		ok(0, "cfg_branches: found");
		return;
	}
	set_order(f, order, 4);
	err = emit_plan(&fx->opt, f);
	ok(!err && emit_plan_size(f) == 0x1d,
	   "cfg_branches 0 2 3 1: planned in 0x1d bytes, the old size (%d, 0x%x)", err,
	   emit_plan_size(f));
	for (uint32_t b = 0; b < 4; b++)
		offs &= f->bbs[b].new_off == new_off[b];
	ok(offs, "cfg_branches 0 2 3 1: blocks at +0x0 +0x16 +0x9 +0xe (bb0 bb1 bb2 bb3)");
	ok(each_op_once(f), "cfg_branches 0 2 3 1: every op of its body placed once");
	jcc = item_of_op(f, op_at(f, 0x7));
	jmp = item_of_op(f, op_at(f, 0xe));
	ok(jcc && jcc->type == ITEM_JCC && jcc->cc == 5 && jcc->target_bb == 1 && jcc->size == 2 &&
	   jcc->new_off == 0x7,
	   "cfg_branches 0 2 3 1: the jz to bb2, next, becomes a rel8 jnz to bb1 at +0x7");
	ok(jmp && jmp->type == ITEM_JMP && jmp->target_bb == 3 && jmp->size == 2 &&
	   jmp->new_off == 0x1b,
	   "cfg_branches 0 2 3 1: bb1's jmp to bb3 stays, rel8, at +0x1b");
	for (uint32_t k = 0; k < f->nr_items; k++)
		added |= f->items[k].added;
	ok(!added && f->nr_items == 9,
	   "cfg_branches 0 2 3 1: 9 items, no jmp added (bb2 falls into bb3, next)");
	emit(fx, f);
	old = old_bytes(fx, f);
	ok(f->code[0x7] == 0x75 && f->code[0x8] == 0x0d,
	   "cfg_branches 0 2 3 1: emitted jnz +0xd at +0x7 (%02x %02x)", f->code[0x7],
	   f->code[0x8]);
	ok(f->code[0x1b] == 0xeb && f->code[0x1c] == 0xf1,
	   "cfg_branches 0 2 3 1: emitted jmp -0xf (to bb3 at +0xe) at +0x1b");
	ok(f->code[0x10] == 0xe9 && get_s32(f->code + 0x11) == get_s32(old + 0x18) + 7,
	   "cfg_branches 0 2 3 1: the tail jmp, 7 bytes earlier, still reaches the thunk");
	ok(!memcmp(f->code, old, 7) && !memcmp(f->code + 0x9, old + 0x10, 5) &&
	   !memcmp(f->code + 0x16, old + 0x9, 5) && f->code[0x15] == 0xcc,
	   "cfg_branches 0 2 3 1: the other ops copied as they were");
	ok(f->code[0x1d] == 0xcc && f->code[0x1e] == 0xcc && f->code[0x1f] == 0xcc,
	   "cfg_branches 0 2 3 1: int3 after the code");
}

/* emit_wide laid out 0 2 3 1: bb3's 125 bytes between the branches and their targets */
static void test_widened(struct fixture *fx)
{
	static const uint32_t order[] = { 0, 2, 3, 1 };
	struct func *f = fixture_func(fx, "emit_wide");
	const struct item *jcc, *jmp;

	if (!f) {
		ok(0, "emit_wide: found");
		return;
	}
	set_order(f, order, 4);
	ok(!emit_plan(&fx->opt, f), "emit_wide 0 2 3 1: planned");
	jcc = item_of_op(f, op_at(f, 0x7));
	jmp = item_of_op(f, op_at(f, 0xe));
	ok(jcc && jcc->type == ITEM_JCC && jcc->size == 6 && jcc->cc == 5 && jcc->target_bb == 1,
	   "emit_wide 0 2 3 1: the jnz to bb1 is widened to rel32 (size %u)", jcc ? jcc->size : 0);
	ok(jmp && jmp->type == ITEM_JMP && jmp->size == 5 && jmp->new_off == 0x94,
	   "emit_wide 0 2 3 1: bb1's jmp back to bb3 is widened to rel32, at +0x94");
	ok(f->bbs[0].new_off == 0 && f->bbs[2].new_off == 0xd && f->bbs[3].new_off == 0x12 &&
	   f->bbs[1].new_off == 0x8f,
	   "emit_wide 0 2 3 1: blocks at +0x0 +0xd +0x12 +0x8f (bb0 bb2 bb3 bb1)");
	ok(emit_plan_size(f) == 0x99 && kmeta_elf_size(f->sym) == 0x92 && f->sym->size == 0xa0,
	   "emit_wide 0 2 3 1: 0x99 bytes: grows 7 bytes into its padding (to 0xa0)");
	ok(each_op_once(f), "emit_wide 0 2 3 1: every op of its body placed once");
	emit(fx, f);
	ok(f->code[0x7] == 0x0f && f->code[0x8] == 0x85 && get_s32(f->code + 0x9) == 0x82,
	   "emit_wide 0 2 3 1: emitted jnz rel32 +0x82 at +0x7");
	ok(f->code[0x94] == 0xe9 && get_s32(f->code + 0x95) == -0x87,
	   "emit_wide 0 2 3 1: emitted jmp rel32 -0x87 at +0x94");
}

/* emit_tight laid out 0 2 1: bb1 no longer falls into bb2, and the jmp has no room */
static void test_no_room(struct fixture *fx)
{
	static const uint32_t order[] = { 0, 2, 1 };
	struct func *f = fixture_func(fx, "emit_tight");
	int err;

	if (!f) {
		ok(0, "emit_tight: found");
		return;
	}
	set_order(f, order, 3);
	err = emit_plan(&fx->opt, f);
	ok(err == -ENOSPC, "emit_tight 0 2 1: does not fit its 16 bytes (%d)", err);
}

/* cfg_meta laid out 0 1 7 8 5 6 2 3 4: a jump label whose fall block moved away */
static void test_jump_label(struct fixture *fx)
{
	static const uint32_t order[] = { 0, 1, 7, 8, 5, 6, 2, 3, 4 };
	static const uint32_t new_off[] = { 0x0, 0x7, 0x20, 0x25, 0x27, 0x19, 0x1e, 0xb, 0x10 };
	struct func *f = fixture_func(fx, "cfg_meta");
	const struct item *jl, *added = NULL;
	bool offs = true;
	int err;

	if (!f) {
		ok(0, "cfg_meta: found");
		return;
	}
	set_order(f, order, 9);
	err = emit_plan(&fx->opt, f);
	ok(!err && emit_plan_size(f) == 0x2f,
	   "cfg_meta 0 1 7 8 5 6 2 3 4: planned in 0x2f bytes (%d, 0x%x)", err, emit_plan_size(f));
	for (uint32_t b = 0; b < 9; b++)
		offs &= f->bbs[b].new_off == new_off[b];
	ok(offs, "cfg_meta 0 1 7 8 5 6 2 3 4: each block at the offset its order gives");
	ok(each_op_once(f), "cfg_meta 0 1 7 8 5 6 2 3 4: every op of its body placed once");
	jl = item_of_op(f, op_at(f, 0x7));
	for (uint32_t k = 0; k < f->nr_items; k++)
		if (f->items[k].added)
			added = added ? NULL : &f->items[k];
	ok(jl && jl->type == ITEM_JL && jl->size == 2 && jl->new_off == 0x7,
	   "cfg_meta 0 1 7 8 5 6 2 3 4: the jump label stays a 2-byte site at +0x7");
	ok(added && added->type == ITEM_JMP && added->bb == 1 && added->target_bb == 2 &&
	   added->size == 2 && added->new_off == 0x9,
	   "cfg_meta 0 1 7 8 5 6 2 3 4: one jmp added, after it, to its fall block bb2");
	emit(fx, f);
	ok(f->code[0x7] == 0x66 && f->code[0x8] == 0x90 && f->code[0x9] == 0xeb &&
	   f->code[0xa] == 0x15,
	   "cfg_meta 0 1 7 8 5 6 2 3 4: emitted the nop, then jmp +0x15 to bb2 at +0x20");
}

int main(void)
{
	struct fixture fx;

	if (!fixture_open_or_fail(&fx, "stages", LAYOUT_RANDOM, 1))
		return tap_done();
	test_identity(&fx);
	test_inverted(&fx);
	test_widened(&fx);
	test_no_room(&fx);
	test_jump_label(&fx);
	fixture_close(&fx);
	return tap_done();
}
