// SPDX-License-Identifier: GPL-2.0
/*
 * What the two readers of .debug_info's DIEs share (info_walk.h): info.c, the code
 * addresses of scopes, call sites and labels, and loc.c, the location lists of
 * variables.  Where old code went: the new place of an instruction, of its end, of
 * the spans of a range or a list entry, each a function of emit's plan (DWARF 5
 * section 2.17: an address names an instruction, a range the instructions it holds);
 * for dwarf_info_check(), whether an address is a place kbolt can map at all; and the
 * new contributions to the list sections, with the relocations of their addresses.
 * Neither reader's DIEs or lists are read here, so that loc.c needs nothing of
 * info.c, which calls it.
 */
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "info_walk.h"

const struct addr_attr *info_die_attr(const struct die *d, uint16_t at)
{
	for (unsigned int k = 0; k < d->nr; k++)
		if (d->a[k].at == at)
			return &d->a[k];
	return NULL;
}

/* --- where old code went --- */

/* op index -> index of its item in f's plan, UINT32_MAX if it has none */
static const uint32_t *op_items(struct info_walk *w, struct func *f)
{
	if (w->op_item_func == f)
		return w->op_item;
	GROW(w->op_item, w->op_item_cap, f->nr_ops);
	memset(w->op_item, 0xff, f->nr_ops * sizeof(*w->op_item));
	for (uint32_t i = 0; i < f->nr_items; i++)
		if (!f->items[i].added)
			w->op_item[f->items[i].op] = i;
	w->op_item_func = f;
	return w->op_item;
}

/* The end of f's ops: what lies after (padding) stays where it is */
static uint64_t ops_end(const struct func *f)
{
	const struct op *last = f->nr_ops ? &f->ops[f->nr_ops - 1] : NULL;

	return f->sym->addr + (last ? last->off + last->len : 0);
}

/*
 * Is a the last byte of f's op, one that leaves f (a call, a tail call): GCC ends a
 * variable's location there, at the return address less one, where unwinders look up
 * a caller's frame.  It stays the last byte, whatever the op's new length.
 */
static bool is_last_byte(const struct func *f, const struct op *op, uint64_t a)
{
	uint64_t start = f->sym->addr + op->off;

	return a == start + op->len - 1 && a != start && op->kind != KI_JCC &&
	       (op->kind != KI_JMP || op->target < f->sym->addr ||
		op->target >= f->sym->addr + f->sym->size);
}

/*
 * Is a a place kbolt maps: an op's start, inside an alternative's unit, or past the
 * ops; the last byte of a call, if inner (a location list's boundary)
 */
static bool is_boundary(const struct func *f, uint64_t a, bool inner)
{
	long i = find_op_containing(f, a);

	return i < 0 ? a >= ops_end(f) || a == f->sym->addr :
	       a == f->sym->addr + f->ops[i].off || (f->ops[i].flags & OP_UNIT) ||
	       (inner && is_last_byte(f, &f->ops[i], a));
}

/* The new place of the instruction at a in moved f (a removed jmp: of its target) */
uint64_t info_new_point(const struct func *f, uint64_t a)
{
	for (int hop = 0; hop < 64; hop++) {
		long i = find_op_containing(f, a);
		const struct op *op = i < 0 ? NULL : &f->ops[i];

		if (!op)
			return a;	/* the padding after the ops stays */
		if (op->new_off != OP_NOT_PLACED)
			return f->sym->addr + op->new_off + (a - f->sym->addr - op->off);
		if (op->kind != KI_JMP || op->target < f->sym->addr ||
		    op->target >= f->sym->addr + f->sym->size)
			break;
		a = op->target;
	}
	return a;
}

uint64_t info_new_inner(struct info_walk *w, struct func *f, uint64_t a)
{
	long i = find_op_containing(f, a);
	uint32_t k = i < 0 ? UINT32_MAX : op_items(w, f)[i];
	uint64_t end = i < 0 ? 0 : f->sym->addr + f->ops[i].off + f->ops[i].len;

	if (k == UINT32_MAX || a == f->sym->addr + f->ops[i].off)
		return info_new_point(f, a);
	return f->sym->addr + f->items[k].new_off + f->items[k].size - (end - a);
}

bool info_emitted(struct info_walk *w, struct func *f, uint64_t a)
{
	long i = find_op_containing(f, a);

	return i < 0 || op_items(w, f)[i] != UINT32_MAX;
}

/* The new end of the instruction that ended at a in moved f */
uint64_t info_new_end(struct info_walk *w, struct func *f, uint64_t a)
{
	long i = find_op_containing(f, a - 1);
	uint32_t k = i < 0 ? UINT32_MAX : op_items(w, f)[i];

	if (k == UINT32_MAX)
		return a;
	return f->sym->addr + f->items[k].new_off + f->items[k].size;
}

void info_add_span(struct spans *s, uint64_t lo, uint64_t hi)
{
	if (s->nr && s->v[s->nr - 1].hi == lo && lo != hi) {
		s->v[s->nr - 1].hi = hi;
		return;
	}
	GROW(s->v, s->cap, s->nr + 1);
	s->v[s->nr++] = (struct span){ lo, hi };
}

static int cmp_span(const void *x, const void *y)
{
	const struct span *p = x, *q = y;

	return p->lo < q->lo ? -1 : p->lo > q->lo;
}

/* s sorted, and touching or overlapping spans merged; empty ones dropped */
static void merge_spans(struct spans *s)
{
	size_t n = 0;

	if (!s->nr)
		return;		/* and no array to sort */
	qsort(s->v, s->nr, sizeof(*s->v), cmp_span);
	for (size_t k = 0; k < s->nr; k++) {
		if (s->v[k].lo == s->v[k].hi)
			continue;
		if (n && s->v[k].lo <= s->v[n - 1].hi) {
			if (s->v[k].hi > s->v[n - 1].hi)
				s->v[n - 1].hi = s->v[k].hi;
			continue;
		}
		s->v[n++] = s->v[k];
	}
	s->nr = n;
}

/*
 * The new places of the code of [lo, hi), a part of moved f, added to out.  An end
 * inside an instruction (a location list's, at a call's last byte) cuts its bytes as
 * far from its new end as from its old one.
 */
static void map_part(struct info_walk *w, struct func *f, uint64_t lo, uint64_t hi,
		     struct spans *out)
{
	const uint32_t *oi = op_items(w, f);
	long i = find_op_containing(f, lo);

	for (; i >= 0 && (uint32_t)i < f->nr_ops && f->sym->addr + f->ops[i].off < hi; i++) {
		uint64_t start = f->sym->addr + f->ops[i].off, end = start + f->ops[i].len;
		uint32_t k = oi[i];
		uint64_t at;

		if (k == UINT32_MAX)
			continue;	/* not emitted */
		at = f->sym->addr + f->items[k].new_off + f->items[k].size;	/* its end */
		if (end > hi) {		/* cut: and no jmp added after it */
			info_add_span(out, at - (lo > start ? end - lo : f->items[k].size),
				      at - (end - hi));
			break;
		}
		info_add_span(out, at - (lo > start ? end - lo : f->items[k].size), at);
		for (k++; k < f->nr_items && f->items[k].added; k++)
			info_add_span(out, f->sym->addr + f->items[k].new_off,
				      f->sym->addr + f->items[k].new_off + f->items[k].size);
	}
	if (hi > ops_end(f))
		info_add_span(out, ops_end(f) > lo ? ops_end(f) : lo, hi);
}

/* Where the piece of [lo, hi) that starts at lo ends: at f's end, or the next function */
static uint64_t piece_end(struct opt *opt, const struct func *f, uint64_t lo, uint64_t hi)
{
	uint64_t end = hi;

	if (f) {
		end = f->sym->addr + f->sym->size;
	} else {
		long i = kmeta_func_at_or_before(opt->img, lo);

		for (size_t k = i < 0 ? 0 : (size_t)i + 1; k < opt->nr_funcs; k++)
			if (opt->funcs[k].sym->addr > lo) {
				end = opt->funcs[k].sym->addr;
				break;
			}
	}
	return end < hi ? end : hi;
}

/*
 * fn(w, f, lo, end, part, ctx) for each piece [lo, end) of the spans of sp, a piece
 * lying in one function f or in none (NULL); part: it is not the whole of f (a range
 * that holds a whole function, a subprogram's, stays as it is)
 */
typedef void piece_fn(struct info_walk *w, struct func *f, uint64_t lo, uint64_t end,
		      bool part, void *ctx);

static void for_each_piece(struct info_walk *w, const struct spans *sp, piece_fn *fn,
			   void *ctx)
{
	for (size_t k = 0; k < sp->nr; k++) {
		uint64_t lo = sp->v[k].lo, hi = sp->v[k].hi;

		while (lo < hi) {
			struct func *f = find_func_containing(w->opt, lo);
			uint64_t end = piece_end(w->opt, f, lo, hi);

			fn(w, f, lo, end, f && (lo != f->sym->addr || end < func_elf_end(f)),
			   ctx);
			lo = end;
		}
	}
}

struct mapped {
	struct spans *new;
	bool moved;
};

static void map_piece(struct info_walk *w, struct func *f, uint64_t lo, uint64_t end,
		      bool part, void *ctx)
{
	struct mapped *m = ctx;

	if (part && f->moved) {
		map_part(w, f, lo, end, m->new);
		m->moved = true;
	} else {
		info_add_span(m->new, lo, end);
	}
}

/*
 * The spans of old, each part in a moved function mapped, into new, sorted and merged;
 * false if nothing moved
 */
bool info_map_spans(struct info_walk *w, const struct spans *old, struct spans *new)
{
	struct mapped m = { .new = new };

	new->nr = 0;
	for_each_piece(w, old, map_piece, &m);
	merge_spans(new);
	return m.moved;
}

/* --- dwarf_info_check(): the places kbolt can map --- */

/* Can f move: not skipped, and decoded (lite mode decodes only some) */
bool info_may_move(const struct func *f)
{
	return f && f->skip == SKIP_NONE && f->nr_ops;
}

/* dwarf_info_check(): keep a function where a is no place kbolt can map */
void info_check_place(struct info_walk *w, struct func *f, uint64_t a, enum place_kind kind)
{
	long i;

	if (!info_may_move(f))
		return;
	if (kind != PLACE_END) {
		if (!is_boundary(f, a, kind == PLACE_LIST))
			skip_func(w->opt, f, SKIP_DEBUG_INFO, a);
		return;
	}
	i = find_op_containing(f, a - 1);
	if (i >= 0 && f->sym->addr + f->ops[i].off + f->ops[i].len != a)
		skip_func(w->opt, f, SKIP_DEBUG_INFO, a);
}

static void check_piece(struct info_walk *w, struct func *f, uint64_t lo, uint64_t end,
			bool part, void *ctx)
{
	enum place_kind kind = *(const enum place_kind *)ctx;

	if (!part || !info_may_move(f))
		return;
	info_check_place(w, f, lo, kind);
	if (end < f->sym->addr + f->sym->size)
		info_check_place(w, f, end, kind);
}

/*
 * dwarf_info_check(): the ends of every part of a span inside a function that may move
 * must be places kbolt can map (a part that holds the whole function stays)
 */
void info_check_spans(struct info_walk *w, const struct spans *sp, enum place_kind kind)
{
	for_each_piece(w, sp, check_piece, &kind);
}

/* Does v fit in a field of size bytes? */
bool info_fits(uint64_t v, unsigned int size)
{
	return size >= 8 || v < (uint64_t)1 << (8 * size);
}

/* --- new lists --- */

/*
 * The symbol a new address of a list is relocated against: the section symbol of the
 * loaded section that holds it (.text, .init.text), as the linker's relocations of
 * the lists have it; 0 if none.  The last one found is kept.
 */
size_t info_code_symbol(struct info_walk *w, uint64_t addr, uint64_t *value)
{
	struct kmeta_sec *sec = kmeta_find_sec_containing(w->opt->img, addr);

	if (!sec)
		return 0;
	if (sec != w->code_sec) {
		w->code_sec = sec;
		w->code_sym = dwarf_section_symbol(w->opt->img, sec);
	}
	*value = sec->addr;
	return w->code_sym;
}

/* An address of a new list at pos of src's new contribution, with its relocation */
const char *info_put_list_addr(struct info_walk *w, struct list_src *src, uint64_t pos,
			       uint64_t addr)
{
	uint64_t value = 0;
	size_t sym;

	dwarf_put_fixed(&src->out, addr, w->u.addr_size);
	if (!src->rs)
		return NULL;	/* a kernel without .rela.debug_* */
	sym = info_code_symbol(w, addr, &value);
	if (!sym)
		return "no section symbol for the code a new range or location list holds";
	dwarf_put_fixed(&src->rela, pos, 8);
	dwarf_put_fixed(&src->rela, ELF64_R_INFO(sym, R_X86_64_64), 8);
	dwarf_put_fixed(&src->rela, addr - value, 8);
	return NULL;
}

/* Where src's new lists begin: after the old section, and a header for DWARF 5's */
uint64_t info_new_lists_base(const struct list_src *src)
{
	return src->size + (src->v5 ? 12 : 0);
}

void info_list_start(struct list_src *src, uint64_t off)
{
	if (!src->indexed)
		return;
	GROW(src->starts, src->starts_cap, src->nr_starts + 1);
	src->starts[src->nr_starts++] = off;
}

void info_list_ref(struct info_walk *w, struct list_src *src, const struct dwarf_patch *p)
{
	if (!src->indexed)
		return;
	GROW(src->refs, src->refs_cap, src->nr_refs + 1);
	src->refs[src->nr_refs++] = p - w->patches->v;
}

void info_index_new_lists(struct info_walk *w, struct list_src *src)
{
	uint64_t by = 4 * (uint64_t)src->nr_starts;	/* 32-bit DWARF: list_src_init() */

	if (!src->indexed || !src->nr_starts)
		return;
	for (size_t k = 0; k < src->nr_tpatches; k++)
		src->tpatches[k].new += by;
	for (size_t k = 0; k < src->nr_refs; k++)
		w->patches->v[src->refs[k]].new += by;
	for (size_t k = 0; k + 24 <= src->rela.nr; k += 24)	/* r_offset */
		put_u64(src->rela.p + k, get_u64(src->rela.p + k) + by);
}

/*
 * The list at old written again already, among the last few: GCC shares a list only
 * between neighbouring DIEs, and one written twice is only bytes more
 */
struct list_move *info_find_move(struct list_src *src, uint64_t old)
{
	for (size_t k = src->nr_moves; k-- > 0 && k + 64 >= src->nr_moves;)
		if (src->moves[k].old == old)
			return &src->moves[k];
	return NULL;
}

struct list_move *info_add_move(struct list_src *src, uint64_t old, uint64_t new,
				uint64_t views)
{
	GROW(src->moves, src->moves_cap, src->nr_moves + 1);
	src->moves[src->nr_moves] = (struct list_move){ old, new, views };
	return &src->moves[src->nr_moves++];
}
