// SPDX-License-Identifier: GPL-2.0
/*
 * Basic blocks of one function and their successors.  Leaders are the entry, every
 * target of a branch or a reference (refs.c), and every op after one that ends the flow.
 * The edges that matter for moving blocks are the fall-through ones: a block that falls
 * into another must stay in front of it or get a jmp.  The metadata edges (jump-label
 * site -> target, exception insn -> fixup, WARN ud2 -> next) make their targets leaders
 * and, for jump labels and WARNs, successors.  The alignment padding after the
 * function's ELF end (kmeta_claim_padding()) is room, not code: its blocks are
 * dropped, nothing falls into them, and nothing may reach or refer to them.
 *
 * Must run after refs_collect().
 */
#include <stdlib.h>

#include "../../common/util.h"
#include "../model/opt.h"
#include "cfg.h"

static bool is_int3(const struct kmeta_image *img, const struct func *f, const struct op *op)
{
	const unsigned char *p = kmeta_bytes_at((struct kmeta_image *)img,
						f->sym->addr + op->off, 1);

	return op->len == 1 && p && p[0] == 0xcc;
}

/* Offset of the function's ELF end: the claimed padding starts there */
static uint32_t body_end(const struct func *f)
{
	return (uint32_t)kmeta_elf_size(f->sym);
}

static bool in_padding(const struct func *f, uint32_t b)
{
	return f->ops[f->bbs[b].first].off >= body_end(f);
}

uint32_t cfg_nr_body_bbs(const struct func *f)
{
	uint32_t n = f->nr_bbs;

	while (n && in_padding(f, n - 1))
		n--;
	return n;
}

/* The last op decides how the block ends: does anything fall through it? */
static bool op_ends_flow(const struct op *op)
{
	if (op->flags & (OP_UNIT | OP_JL))
		return false;
	if (op->kind == KI_TRAP)	/* an int3 in code (kgdb, a triple fault) returns */
		return !(op->flags & OP_WARN) && !((op->insn_flags & KIF_INT) &&
						   !(op->flags & OP_TRAIL));
	return op->kind == KI_JMP || op->kind == KI_RET || op->kind == KI_IJMP;
}

static bool op_ends_block(const struct op *op)
{
	return op_ends_flow(op) || (op->flags & OP_JL) ||
	       (op->kind == KI_JCC && !(op->flags & OP_UNIT));
}

/* int3s after a jmp or ret are speculation stoppers of that branch, not code */
static void mark_trailers(struct opt *opt, struct func *f)
{
	for (uint32_t i = 1; i < f->nr_ops; i++) {
		struct op *prev = &f->ops[i - 1], *op = &f->ops[i];
		bool after_branch = (prev->flags & OP_TRAIL) ||
				    (op_ends_flow(prev) && prev->kind != KI_TRAP);

		if (op->off >= body_end(f))
			break;	/* the padding stays padding, a block of its own */
		if (after_branch && !(op->flags & OP_LEADER) && is_int3(opt->img, f, op))
			op->flags |= OP_TRAIL;
	}
}

/*
 * A glued op starts no block (data references to it only need its address mapped),
 * unless a branch goes there too: then the function cannot keep it glued.
 */
static bool unglue_leaders(struct opt *opt, struct func *f)
{
	for (uint32_t i = 1; i < f->nr_ops; i++) {
		struct op *op = &f->ops[i];

		if (!(op->flags & OP_GLUED))
			continue;
		if ((op->flags & OP_BRANCH_TARGET) || op_ends_block(&f->ops[i - 1])) {
			skip_func(opt, f, SKIP_TABLE_ENTRY, f->sym->addr + op->off);
			return true;
		}
		op->flags &= ~OP_LEADER;
	}
	return false;
}

static void split_blocks(struct func *f)
{
	uint32_t nr = 0;

	f->ops[0].flags |= OP_LEADER;
	for (uint32_t i = 1; i < f->nr_ops; i++) {
		const struct op *prev = &f->ops[i - 1];

		if (f->ops[i].flags & OP_TRAIL)
			continue;
		if (op_ends_block(prev) || (prev->flags & OP_TRAIL) || f->ops[i].off == body_end(f))
			f->ops[i].flags |= OP_LEADER;
	}
	for (uint32_t i = 0; i < f->nr_ops; i++)
		nr += !!(f->ops[i].flags & OP_LEADER);
	f->bbs = xcalloc(nr, sizeof(*f->bbs));
	for (uint32_t i = 0; i < f->nr_ops; i++) {
		if (f->ops[i].flags & OP_LEADER)
			f->bbs[f->nr_bbs++] = (struct bb){ .first = i, .taken = -1, .fall = -1 };
		f->bbs[f->nr_bbs - 1].nr++;
	}
}

long cfg_find_bb_of_op(const struct func *f, uint32_t op)
{
	uint32_t lo = 0, hi = f->nr_bbs;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (f->bbs[mid].first <= op)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (long)lo - 1 : -1;
}

/* The block starting at addr, -1 if addr is outside f or not a block start */
static long bb_at(const struct func *f, uint64_t addr)
{
	long i = find_op_containing(f, addr), b;

	if (i < 0 || f->ops[i].off != addr - f->sym->addr)
		return -1;
	b = cfg_find_bb_of_op(f, i);
	return b >= 0 && f->bbs[b].first == (uint32_t)i ? b : -1;
}

/* The last op that is not trailing padding */
static const struct op *bb_last(const struct func *f, const struct bb *bb)
{
	uint32_t i = bb->first + bb->nr - 1;

	while (i > bb->first && (f->ops[i].flags & OP_TRAIL))
		i--;
	return &f->ops[i];
}

static bool link_block(struct opt *opt, struct func *f, uint32_t b)
{
	struct bb *bb = &f->bbs[b];
	const struct op *last = bb_last(f, bb);
	bool has_next = b + 1 < f->nr_bbs && !in_padding(f, b + 1);
	bool intra = false;

	if (in_padding(f, b))
		return false;	/* nothing runs there: dropped, or the function skipped */
	if (last->target && (last->kind == KI_JCC || last->kind == KI_JMP || (last->flags & OP_JL)) &&
	    !(last->flags & OP_UNIT)) {
		bb->taken = bb_at(f, last->target);
		intra = bb->taken >= 0;
	}
	if (intra && !(last->flags & (OP_FIXED | OP_JL))) {
		const unsigned char *p = kmeta_bytes_at(opt->img, f->sym->addr + last->off, last->len);

		if (last->kind == KI_JMP)
			bb->term = TERM_JMP;
		else if (p && kmeta_jcc_cond(p, last->len) >= 0)
			bb->term = TERM_JCC;
		if (bb->term != TERM_NONE)
			f->ops[last - f->ops].flags |= OP_REENCODED;
	}
	if (op_ends_flow(last))
		return false;
	if (has_next) {
		bb->fall = b + 1;
		return false;
	}
	if (last->kind == KI_CALL || last->kind == KI_ICALL)
		return false;	/* a noreturn call ends the function */
	if (last->insn_flags & KIF_INT)
		return false;	/* an int3 that ends the function is padding: nothing follows */
	skip_func(opt, f, SKIP_FALLS_OFF, f->sym->addr + last->off);
	return true;
}

static bool is_padding(struct opt *opt, const struct func *f, const struct bb *bb)
{
	for (uint32_t i = bb->first; i < bb->first + bb->nr; i++) {
		const struct op *op = &f->ops[i];

		if (op->flags & (OP_EXTREF | OP_UNIT | OP_FIXED))
			return false;
		if (!(op->insn_flags & KIF_NOP) && !is_int3(opt->img, f, op))
			return false;
	}
	return true;
}

/* Alignment nops that nothing reaches are not emitted */
static void drop_padding(struct opt *opt, struct func *f)
{
	unsigned char *has_pred = xcalloc(f->nr_bbs, 1);

	has_pred[0] = 1;
	for (uint32_t b = 0; b < f->nr_bbs; b++) {
		if (f->bbs[b].taken >= 0)
			has_pred[f->bbs[b].taken] = 1;
		if (f->bbs[b].fall >= 0)
			has_pred[f->bbs[b].fall] = 1;
	}
	for (uint32_t i = 0; i < f->nr_ops; i++)	/* e.g. jcc into a unit's neighbour */
		if (f->ops[i].target && (f->ops[i].kind == KI_JCC || f->ops[i].kind == KI_JMP)) {
			long b = bb_at(f, f->ops[i].target);

			if (b >= 0)
				has_pred[b] = 1;
		}
	for (uint32_t b = 1; b < f->nr_bbs; b++)
		if (!has_pred[b] && is_padding(opt, f, &f->bbs[b]))
			f->bbs[b].drop = true;
	free(has_pred);
}

/*
 * The padding after the function must start on an instruction of its own (else the
 * last one ran into it) and be dropped whole: nothing reaches or names it
 */
static bool check_tail_padding(struct opt *opt, struct func *f)
{
	uint32_t last = f->nr_bbs - 1;

	if (f->sym->padding && !in_padding(f, last)) {
		skip_func(opt, f, SKIP_UNDECODABLE, f->sym->addr + body_end(f));
		return true;
	}
	for (uint32_t b = f->nr_bbs; b-- > 0 && in_padding(f, b);) {
		if (!f->bbs[b].drop) {
			skip_func(opt, f, SKIP_TAIL_REF, f->sym->addr + f->ops[f->bbs[b].first].off);
			return true;
		}
	}
	return false;
}

static bool is_plain_ud2(struct opt *opt, const struct func *f, const struct op *op)
{
	const unsigned char *p = kmeta_bytes_at(opt->img, f->sym->addr + op->off, 2);

	return op->len == 2 && p && p[0] == 0x0f && p[1] == 0x0b;
}

/*
 * A ud2 no table describes is no BUG() or WARN(): handle_bug() finds no entry and
 * do_error_trap() kills the task (or an exception fixup, a root of its own, takes
 * over), so it ends the flow like a jmp, and what follows may move (GCC's
 * __builtin_trap() for a division by zero in mpihelp_divrem()).  A ud1 or ud0 no table
 * describes, followed by code, is left alone: a UBSAN trap, which resumes with
 * CONFIG_UBSAN_TRAP on 6.12.  (The emulation prefixes, "ud2; .ascii "xen"" before an
 * instruction, are decoded as one instruction with it, as the kernel's decoder does.)
 */
static bool check_traps(struct opt *opt, struct func *f)
{
	for (uint32_t i = 0; i + 1 < f->nr_ops; i++) {
		const struct op *op = &f->ops[i];

		if ((op->insn_flags & KIF_UD) && !(op->flags & OP_FIXED) &&
		    !is_plain_ud2(opt, f, op) && !(f->ops[i + 1].insn_flags & KIF_NOP) &&
		    !is_int3(opt->img, f, &f->ops[i + 1])) {
			skip_func(opt, f, SKIP_ODD_TRAP, f->sym->addr + op->off);
			return true;
		}
	}
	return false;
}

/*
 * Each check returns true when it skips f (skip_func(): a reason, not an error); the
 * steps after it are then not taken
 */
void cfg_build(struct opt *opt, struct func *f)
{
	if (check_traps(opt, f) || unglue_leaders(opt, f))
		return;
	mark_trailers(opt, f);
	split_blocks(f);
	for (uint32_t b = 0; b < f->nr_bbs; b++)
		if (link_block(opt, f, b))
			return;
	drop_padding(opt, f);
	check_tail_padding(opt, f);
}
