// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of cfg_build() (kbolt/pass/cfg.c) on the stages fixture
 * (selftests/fixtures/stages.S): the blocks of each function, where they start, their
 * taken and fall successors and terminators; the edges only the tables show (a jump
 * label's two successors, a WARN that falls through, a BUG that does not, exception
 * fixups as leaders or glued to their instruction); int3 after a jmp as the jmp's
 * speculation stopper; the claimed padding after a function as a dropped block.  Every
 * table site has a relocation in the fixture, as in vmlinux: each starts a block.  On
 * the padding fixture (selftests/fixtures/padding.S), GCC 14's alignment nops before a
 * loop: a block of their own, dropped, after a jmp; the end of the block that runs into
 * the loop otherwise.  TAP output.
 */
#include "../../kbolt/pass/cfg.h"
#include "fixture.h"
#include "tap.h"

static void test_branches(struct fixture *fx)
{
	static const uint32_t starts[] = { 0x0, 0x9, 0x10, 0x15, 0x1d };
	struct func *f = fixture_func(fx, "cfg_branches");
	long jz, jmp, tail;

	if (!f) {
		ok(0, "cfg_branches: found");
		return;
	}
	ok(f->decoded && is_rewritable(f) && f->nr_ops == 12,
	   "cfg_branches: decoded into 12 ops, rewritable (%u ops, skip %u)", f->nr_ops, f->skip);
	ok(kmeta_elf_size(f->sym) == 0x1d && f->sym->size == 0x20,
	   "cfg_branches: 0x1d bytes, the int3 up to 0x20 claimed as padding");
	ok(bb_starts_are(f, starts, 5) && cfg_nr_body_bbs(f) == 4,
	   "cfg_branches: 5 blocks at +0x0 +0x9 +0x10 +0x15 +0x1d, 4 of them its body");
	ok(bb_is(f, 0, 3, 2, 1, TERM_JCC),
	   "cfg_branches: bb0 ends in a jcc: taken bb2, falls into bb1");
	ok(bb_is(f, 1, 2, 3, -1, TERM_JMP), "cfg_branches: bb1 ends in a jmp to bb3, no fall");
	ok(bb_is(f, 2, 1, -1, 3, TERM_NONE), "cfg_branches: bb2 falls into bb3");
	ok(bb_is(f, 3, 3, -1, -1, TERM_NONE),
	   "cfg_branches: bb3 ends in the tail jmp out of the function: no successor");
	ok(f->nr_bbs == 5 && f->bbs[4].drop && !f->bbs[0].drop && !f->bbs[1].drop &&
	   !f->bbs[2].drop && !f->bbs[3].drop,
	   "cfg_branches: only the padding block (bb4) is dropped");
	ok(op_flags_are(f, 0x1c, OP_TRAIL, OP_LEADER),
	   "cfg_branches: the int3 after the tail jmp trails it, in its block");
	jz = op_at(f, 0x7);
	jmp = op_at(f, 0xe);
	tail = op_at(f, 0x17);
	ok(jz >= 0 && jmp >= 0 && (f->ops[jz].flags & OP_REENCODED) &&
	   (f->ops[jmp].flags & OP_REENCODED),
	   "cfg_branches: the jz and jmp inside the function are re-encoded");
	ok(tail >= 0 && f->ops[tail].kind == KI_JMP && !(f->ops[tail].flags & OP_REENCODED) &&
	   (f->ops[tail].flags & OP_FIXED) &&
	   f->ops[tail].target == kmeta_find_sym_by_name(fx->opt.img, "__x86_return_thunk")->addr,
	   "cfg_branches: the tail jmp to __x86_return_thunk is relocated: copied, not re-encoded");
	ok(op_flags_are(f, 0x10, OP_LEADER | OP_BRANCH_TARGET, OP_EXTREF) &&
	   op_flags_are(f, 0x15, OP_LEADER | OP_BRANCH_TARGET, OP_EXTREF),
	   "cfg_branches: the branch targets are leaders, referenced from inside only");
}

static void test_meta(struct fixture *fx)
{
	static const uint32_t starts[] = {
		0x0, 0x7, 0x9, 0xe, 0x10, 0x18, 0x1d, 0x1f, 0x24, 0x2d,
	};
	struct func *f = fixture_func(fx, "cfg_meta");
	long jl;

	if (!f) {
		ok(0, "cfg_meta: found");
		return;
	}
	ok(f->decoded && is_rewritable(f), "cfg_meta: decoded, rewritable (skip %u)", f->skip);
	ok(bb_starts_are(f, starts, 10) && cfg_nr_body_bbs(f) == 9,
	   "cfg_meta: 10 blocks, every table site and fixup a leader, the padding last");
	jl = op_at(f, 0x7);
	ok(jl >= 0 && op_flags_are(f, 0x7, OP_JL | OP_FIXED | OP_LEADER, OP_REENCODED) &&
	   f->ops[jl].target == f->sym->addr + 0x18,
	   "cfg_meta: the jump-label nop is a fixed op whose target is the table's (+0x18)");
	ok(bb_is(f, 1, 1, 5, 2, TERM_NONE),
	   "cfg_meta: the jump label ends its block: taken bb5 (its target), falls into bb2");
	ok(op_flags_are(f, 0xe, OP_WARN | OP_FIXED, 0) && bb_is(f, 3, 1, -1, 4, TERM_NONE),
	   "cfg_meta: the WARN ud2 falls through into bb4");
	ok(op_flags_are(f, 0x1d, OP_FIXED, OP_WARN) && bb_is(f, 6, 1, -1, -1, TERM_NONE),
	   "cfg_meta: the BUG ud2 ends the flow: no successor");
	ok(bb_is(f, 5, 1, -1, 6, TERM_NONE),
	   "cfg_meta: the jump label's target bb5 falls into the BUG");
	ok(op_flags_are(f, 0x10, OP_FIXED | OP_LEADER, 0) &&
	   op_flags_are(f, 0x1f, OP_LEADER | OP_EXTREF, OP_GLUED) &&
	   bb_is(f, 7, 1, -1, 8, TERM_NONE),
	   "cfg_meta: the far exception fixup (+0x1f) starts bb7, referenced from outside");
	ok(op_flags_are(f, 0x26, OP_GLUED | OP_EXTREF, OP_LEADER) &&
	   bb_is(f, 8, 3, -1, -1, TERM_NONE),
	   "cfg_meta: the fixup at the next instruction (+0x26) is glued: bb8 keeps 3 ops");
	ok(f->bbs[9].drop && !f->bbs[7].drop,
	   "cfg_meta: the padding is dropped, the fixup block nothing branches to is not");
}

static void test_tight(struct fixture *fx)
{
	static const uint32_t starts[] = { 0x0, 0x9, 0xb };
	struct func *f = fixture_func(fx, "emit_tight");

	if (!f) {
		ok(0, "emit_tight: found");
		return;
	}
	ok(f->sym->size == 0x10 && kmeta_elf_size(f->sym) == 0x10 && bb_starts_are(f, starts, 3) &&
	   cfg_nr_body_bbs(f) == 3,
	   "emit_tight: no padding after it: 3 blocks, all its body");
	ok(bb_is(f, 0, 3, 2, 1, TERM_JCC) && bb_is(f, 1, 1, -1, 2, TERM_NONE) &&
	   bb_is(f, 2, 1, -1, -1, TERM_NONE),
	   "emit_tight: bb0 jz bb2 or into bb1, bb1 falls into bb2, bb2 leaves");
}

/* How many blocks of f's body are dropped */
static uint32_t nr_dropped(const struct func *f)
{
	uint32_t n = 0;

	for (uint32_t b = 0; b < cfg_nr_body_bbs(f); b++)
		n += f->bbs[b].drop;
	return n;
}

/* GCC 14's padding before a loop's head: after a jmp nothing runs it, else it runs */
static void test_padding(struct fixture *fx)
{
	static const uint32_t jmp_starts[] = { 0x0, 0xb, 0x12, 0x20, 0x25, 0x29, 0x2d, 0x32, 0x37 };
	struct func *f = fixture_func(fx, "pad_after_jmp"), *g = fixture_func(fx, "pad_reached");

	if (!f || !g) {
		ok(0, "pad_after_jmp, pad_reached: found");
		return;
	}
	ok(bb_starts_are(f, jmp_starts, 9) && cfg_nr_body_bbs(f) == 8,
	   "pad_after_jmp: 8 blocks in its body, the padding (+0x12) one of its own");
	ok(bb_is(f, 1, 2, 4, -1, TERM_JMP),
	   "pad_after_jmp: bb1 ends in the jmp to the loop's condition, nothing falls into bb2");
	ok(f->bbs[2].drop && f->bbs[2].nr == 2 && nr_dropped(f) == 1,
	   "pad_after_jmp: its padding, two nops nothing reaches, is dropped, and only it");
	ok(bb_is(f, 3, 2, -1, 4, TERM_NONE) && f->bbs[4].taken == 3,
	   "pad_after_jmp: the loop's head after it (+0x20) is kept, the jb's target");
	ok(g->nr_bbs == 9 && nr_dropped(g) == 0 && bb_is(g, 2, 3, -1, 3, TERM_NONE) &&
	   op_flags_are(g, 0x20, OP_LEADER | OP_BRANCH_TARGET, 0),
	   "pad_reached: the nops it runs end the block of mov $0x4321 (+0xf, 3 ops), which "
	   "falls into the loop's head; none of its body is dropped");
}

int main(void)
{
	struct fixture fx;

	if (!fixture_open_or_fail(&fx, "stages", LAYOUT_RANDOM, 1))
		return tap_done();
	test_branches(&fx);
	test_meta(&fx);
	test_tight(&fx);
	fixture_close(&fx);
	if (!fixture_open_or_fail(&fx, "padding", LAYOUT_RANDOM, 1))
		return tap_done();
	test_padding(&fx);
	fixture_close(&fx);
	return tap_done();
}
