// SPDX-License-Identifier: GPL-2.0
/*
 * Emitting a function in its new block order, in place.  emit_plan() turns the order
 * into items (old ops, and the jcc/jmp that end blocks), chooses the shortest branch
 * encodings that reach (starting short and widening until nothing changes, which ends
 * because sizes only grow), and checks that everything fits in the function's bytes.
 * emit_code() then writes the bytes, with every displacement re-targeted through the
 * address map of all rewritten functions, and fills what is left with int3.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../model/opt.h"
#include "emit.h"

static const unsigned char nop2[] = { 0x66, 0x90 };
static const unsigned char nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

static const unsigned char *op_bytes(struct opt *opt, const struct func *f, const struct op *op)
{
	return kmeta_bytes_at(opt->img, f->sym->addr + op->off, op->len);
}

static bool fits_rel8(int64_t d)
{
	return d >= -128 && d <= 127;
}

static void add_item(struct func *f, struct item it, uint32_t *pos)
{
	GROW(f->items, f->items_cap, f->nr_items + 1);
	it.new_off = *pos;
	*pos += it.size;
	f->items[f->nr_items++] = it;
}

static uint32_t bb_last_op(const struct func *f, const struct bb *bb)
{
	uint32_t i = bb->first + bb->nr - 1;

	while (i > bb->first && (f->ops[i].flags & OP_TRAIL))
		i--;
	return i;
}

static void add_ops(struct func *f, uint32_t b, uint32_t from, uint32_t to, uint32_t *pos)
{
	for (uint32_t i = from; i < to; i++) {
		const struct op *op = &f->ops[i];
		struct item it = { .op = i, .type = ITEM_OP, .size = op->len, .target_bb = -1,
				   .bb = b };

		if (op->flags & OP_JL) {
			it.type = ITEM_JL;
			if (op->len == 2 && f->bbs[b].jl_wide)
				it.size = 5;
		}
		f->ops[i].new_off = *pos;
		add_item(f, it, pos);
	}
}

static void add_branch(struct func *f, uint32_t b, enum item_type type, uint32_t op,
		       int32_t target, int cc, bool added, uint32_t *pos)
{
	struct item it = { .op = op, .type = type, .target_bb = target, .cc = cc, .added = added,
			   .bb = b };
	bool near = added ? f->bbs[b].near2 : f->bbs[b].near;

	if (type == ITEM_JCC)
		it.size = near ? 6 : 2;
	else
		it.size = near ? 5 : 2;
	add_item(f, it, pos);
}

/* Items of block b, followed in the layout by block next (-1: none) */
static void plan_block(struct opt *opt, struct func *f, uint32_t b, long next, uint32_t *pos)
{
	struct bb *bb = &f->bbs[b];
	uint32_t last = bb_last_op(f, bb), end = bb->first + bb->nr;
	struct op *l = &f->ops[last];

	bb->new_off = *pos;
	if (bb->term == TERM_NONE) {
		add_ops(f, b, bb->first, end, pos);
	} else if (bb->term == TERM_JMP) {
		add_ops(f, b, bb->first, last, pos);
		l->new_off = *pos;
		if (next != bb->taken) {
			add_branch(f, b, ITEM_JMP, last, bb->taken, 0, false, pos);
			add_ops(f, b, last + 1, end, pos);
		} else {
			for (uint32_t i = last + 1; i < end; i++)
				f->ops[i].new_off = *pos;
		}
		return;
	} else {
		int cc = kmeta_jcc_cond(op_bytes(opt, f, l), l->len);

		add_ops(f, b, bb->first, last, pos);
		l->new_off = *pos;
		if (next == bb->taken) {
			add_branch(f, b, ITEM_JCC, last, bb->fall, cc ^ 1, false, pos);
			return;
		}
		add_branch(f, b, ITEM_JCC, last, bb->taken, cc, false, pos);
	}
	if (bb->fall >= 0 && next != bb->fall)
		add_branch(f, b, ITEM_JMP, f->bbs[bb->fall].first, bb->fall, 0, true, pos);
}

static uint32_t plan_items(struct opt *opt, struct func *f)
{
	uint32_t pos = 0;

	f->nr_items = 0;
	for (uint32_t i = 0; i < f->nr_ops; i++)
		f->ops[i].new_off = OP_NOT_PLACED;
	for (uint32_t k = 0; k < f->nr_order; k++)
		plan_block(opt, f, f->order[k], k + 1 < f->nr_order ? (long)f->order[k + 1] : -1,
			   &pos);
	return pos;
}

/* New address of old addr within f, as planned; addr outside f stays */
static bool plan_addr(const struct func *f, uint64_t addr, uint64_t *out)
{
	long i = find_op_containing(f, addr);

	*out = addr;
	if (i < 0)
		return addr < f->sym->addr || addr >= f->sym->addr + f->sym->size;
	if (f->ops[i].new_off == OP_NOT_PLACED ||
	    (addr != f->sym->addr + f->ops[i].off && !(f->ops[i].flags & OP_UNIT)))
		return false;
	*out = f->sym->addr + f->ops[i].new_off + (addr - f->sym->addr - f->ops[i].off);
	return true;
}

/* Widen every branch that does not reach; true if any was */
static bool widen(struct func *f)
{
	bool changed = false;

	for (uint32_t k = 0; k < f->nr_items; k++) {
		const struct item *it = &f->items[k];
		struct bb *bb;
		int64_t d;

		if (it->type == ITEM_JL) {
			const struct op *op = &f->ops[it->op];
			uint64_t to;

			bb = &f->bbs[it->bb];
			if (it->size != 2 || !plan_addr(f, op->target, &to))
				continue;
			d = (int64_t)(to - (f->sym->addr + it->new_off + 2));
			if (!fits_rel8(d)) {
				bb->jl_wide = true;
				changed = true;
			}
			continue;
		}
		if (it->type == ITEM_OP || it->size != 2)
			continue;
		d = (int64_t)f->bbs[it->target_bb].new_off - (int64_t)(it->new_off + 2);
		if (fits_rel8(d))
			continue;
		bb = &f->bbs[it->bb];
		if (it->added)
			bb->near2 = true;
		else
			bb->near = true;
		changed = true;
	}
	return changed;
}

/* Can a field of size bytes, counting from next, reach target? */
static bool reaches(const struct func *f, uint64_t target, uint64_t next, unsigned int size)
{
	uint64_t to;

	if (!plan_addr(f, target, &to))
		return false;
	return size != 1 || fits_rel8((int64_t)(to - next));
}

/* Fixed-size displacements (rel8 kept as rel8, unit branches) must still reach */
static bool fixed_fields_reach(const struct func *f)
{
	uint64_t base = f->sym->addr;

	for (uint32_t i = 0; i < f->nr_ops; i++) {
		const struct op *op = &f->ops[i];

		if (op->new_off == OP_NOT_PLACED || !op->rel_size || (op->flags & (OP_JL | OP_REENCODED)))
			continue;
		if (!reaches(f, op->target, base + op->new_off + op->len, op->rel_size))
			return false;
	}
	for (size_t k = 0; k < f->nr_fixes; k++) {
		const struct fix *x = &f->fixes[k];
		const struct op *op = &f->ops[x->op];

		if (op->new_off != OP_NOT_PLACED && x->pcrel &&
		    !reaches(f, x->target, base + op->new_off + x->next_off, x->size))
			return false;
	}
	return true;
}

int emit_plan(struct opt *opt, struct func *f)
{
	uint32_t size;

	for (uint32_t b = 0; b < f->nr_bbs; b++)
		f->bbs[b].near = f->bbs[b].near2 = f->bbs[b].jl_wide = false;
	do {
		size = plan_items(opt, f);
	} while (widen(f));
	/*
	 * --update-debug: the DWARF's subprogram and unit ranges end at the ELF end, and
	 * kbolt does not rewrite them (yet): no growing into the padding
	 */
	if (size > (opt->o->update_debug ? kmeta_elf_size(f->sym) : f->sym->size) ||
	    !fixed_fields_reach(f))
		return -ENOSPC;
	return 0;
}

bool emit_map_addr(struct opt *opt, uint64_t addr, uint64_t *out)
{
	struct func *f = moved_func_containing(opt, addr);

	*out = addr;
	if (!f)
		return true;
	return plan_addr(f, addr, out);
}

bool emit_map_field(struct opt *opt, uint64_t addr, uint64_t *out)
{
	struct func *f = moved_func_containing(opt, addr);
	long i;

	*out = addr;
	if (!f)
		return true;
	i = find_op_containing(f, addr);
	if (i < 0 || f->ops[i].new_off == OP_NOT_PLACED)
		return false;
	*out = addr - f->ops[i].off + f->ops[i].new_off;
	return true;
}

static void put_disp(unsigned char *p, unsigned int size, int64_t d)
{
	if (size == 1)
		p[0] = (unsigned char)d;
	else
		put_u32(p, (uint32_t)d);
}

static void emit_jl(struct opt *opt, struct func *f, const struct item *it, unsigned char *p)
{
	const struct op *op = &f->ops[it->op];
	const unsigned char *old = op_bytes(opt, f, op);
	uint64_t to, next = f->sym->addr + it->new_off + it->size;

	if (old[0] != 0xeb && old[0] != 0xe9) {	/* a nop stays the kernel's nop */
		memcpy(p, it->size == 2 ? nop2 : nop5, it->size);
		return;
	}
	emit_map_addr(opt, op->target, &to);
	p[0] = it->size == 2 ? 0xeb : 0xe9;
	put_disp(p + 1, it->size - 1, (int64_t)(to - next));
}

static void emit_op(struct opt *opt, struct func *f, const struct item *it, unsigned char *p)
{
	const struct op *op = &f->ops[it->op];
	uint64_t to, at = f->sym->addr + it->new_off;

	memcpy(p, op_bytes(opt, f, op), op->len);
	if (op->rel_size) {
		emit_map_addr(opt, op->target, &to);
		put_disp(p + op->rel_off, op->rel_size, (int64_t)(to - (at + op->len)));
	}
}

static void emit_fixes(struct opt *opt, struct func *f)
{
	for (size_t k = 0; k < f->nr_fixes; k++) {
		const struct fix *x = &f->fixes[k];
		const struct op *op = &f->ops[x->op];
		unsigned char *p;
		uint64_t to;

		if (op->new_off == OP_NOT_PLACED)
			continue;
		p = f->code + op->new_off + x->field_off;
		emit_map_addr(opt, x->target, &to);
		if (x->pcrel)
			put_disp(p, x->size, (int64_t)(to - (f->sym->addr + op->new_off + x->next_off)));
		else if (x->size == 8)
			put_u64(p, to);
		else
			put_u32(p, (uint32_t)to);
	}
}

uint32_t emit_plan_size(const struct func *f)
{
	uint32_t end = 0;

	for (uint32_t k = 0; k < f->nr_items; k++)
		if (f->items[k].new_off + f->items[k].size > end)
			end = f->items[k].new_off + f->items[k].size;
	return end;
}

void emit_code(struct opt *opt, struct func *f)
{
	f->code = xmalloc(f->sym->size);
	memset(f->code, 0xcc, f->sym->size);
	for (uint32_t k = 0; k < f->nr_items; k++) {
		const struct item *it = &f->items[k];
		unsigned char *p = f->code + it->new_off;
		int64_t d;

		switch (it->type) {
		case ITEM_OP:
			emit_op(opt, f, it, p);
			break;
		case ITEM_JL:
			emit_jl(opt, f, it, p);
			break;
		case ITEM_JCC:
		case ITEM_JMP:
			d = (int64_t)f->bbs[it->target_bb].new_off - (int64_t)(it->new_off + it->size);
			if (it->type == ITEM_JCC && it->size == 2) {
				p[0] = 0x70 | it->cc;
			} else if (it->type == ITEM_JCC) {
				p[0] = 0x0f;
				p[1] = 0x80 | it->cc;
			} else {
				p[0] = it->size == 2 ? 0xeb : 0xe9;
			}
			put_disp(p + it->size - (it->size == 2 ? 1 : 4), it->size == 2 ? 1 : 4, d);
			break;
		}
	}
	emit_fixes(opt, f);
}
