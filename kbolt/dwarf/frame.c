// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt optimize --update-debug: the call frame information (.debug_frame) of the new
 * code.  ORC gives the kernel's unwinder the CFA and the frame pointer only; debuggers
 * and profilers (gdb, crash, drgn, perf's DWARF unwinding) read .debug_frame, and the
 * callee-saved register rules with it.  Every FDE that covers a moved function has its
 * program executed into rows (the whole rule set from each address on) and encoded
 * again for the new order:
 *
 *   - an instruction kbolt moved has the rules its old address had; rows that started
 *     inside a patch-site unit keep their offsets in it;
 *   - an instruction kbolt adds (a jmp) has the rules where it jumps to, which is where
 *     its block used to fall through (as for ORC, pass/orc_gen.c);
 *   - a row is written where the rules change: DW_CFA_advance_loc*, then what takes the
 *     previous rules to the new ones (DW_CFA_restore back to the CIE's rule); the
 *     remember_state/restore_state pairs of the old program become plain rules.
 *
 * The entries keep their order and the section is laid out again (an FDE's length
 * changes): each FDE's CIE pointer is patched, and .rela.debug_frame (6.1) follows the
 * bytes it relocates, the CIE pointer's addend becoming the CIE's new offset.  A
 * function whose FDE kbolt cannot execute (DW_CFA_set_loc, an unknown instruction, a
 * register it does not track), or that no single FDE covers whole, does not move
 * (debug_info).  Hand-written after DWARF 5 section 6.4: libdw executes CFI but neither
 * says where an FDE's bytes are nor writes any.  The proof reads the result through
 * libdw (kbolt/verify/dwarf.c).
 */
#include <dwarf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../lib/output.h"
#include "../model/opt.h"
#include "dwarf.h"
#include "io.h"

/* The registers tracked: x86-64's DWARF numbers 0-16, the general ones and the RA */
#define CFI_REGS 17
/* remember_state nesting kbolt follows; GCC nests one deep */
#define CFI_STACK 8

enum rule_kind {
	RULE_UNSPEC,	/* no rule given: the CIE's, or the ABI's default */
	RULE_UNDEF, RULE_SAME, RULE_OFFSET, RULE_VAL_OFFSET, RULE_REG, RULE_EXPR, RULE_VAL_EXPR,
};

struct rule {
	const unsigned char *expr;	/* RULE_EXPR, RULE_VAL_EXPR: the block */
	int64_t val;			/* bytes from the CFA, a register, the block's size */
	uint8_t kind;
};

/* The CFA: reg + off, or (expr not NULL) an expression of len bytes */
struct cfa {
	const unsigned char *expr;
	uint64_t reg, len;
	int64_t off;
};

struct cfi_state {
	struct cfa cfa;
	struct rule r[CFI_REGS];
};

/* The rules from addr on, to the next row */
struct cfi_row {
	uint64_t addr;
	struct cfi_state s;
};

/* A CIE's factors and initial rules */
struct cie {
	uint64_t code_align;
	int64_t data_align;
	struct cfi_state init;
};

enum entry_kind { ENTRY_CIE, ENTRY_FDE, ENTRY_ZERO };

/* One CIE or FDE (or a zero length word) of the section, in its order */
struct frame_entry {
	uint64_t off, end;	/* section offsets: the entry, and past it */
	uint64_t body;		/* its instructions */
	uint64_t id_place;	/* the CIE id or pointer */
	uint64_t lo, hi;	/* an FDE's range */
	uint64_t new_off;
	size_t cie;		/* index in frame.cies; an FDE's is its CIE's (until
				 * read_fde(), the CIE pointer's value) */
	unsigned int offset_size, addr_size;
	uint8_t kind;
	bool bad;		/* an FDE kbolt cannot execute */
	bool rewritten;
};

struct frame {
	struct opt *opt;
	const unsigned char *data;
	uint64_t size;
	struct frame_entry *e;
	size_t nr, cap;
	struct cie *cies;
	size_t nr_cies, cies_cap;
	/* one program's execution */
	struct cfi_state cur, stack[CFI_STACK];
	unsigned int depth;
	struct cfi_row *rows;
	size_t nr_rows, rows_cap;
};

static void push_row(struct frame *fr, uint64_t addr)
{
	if (fr->nr_rows && fr->rows[fr->nr_rows - 1].addr == addr) {
		fr->rows[fr->nr_rows - 1].s = fr->cur;	/* no byte had the earlier rules */
		return;
	}
	GROW(fr->rows, fr->rows_cap, fr->nr_rows + 1);
	fr->rows[fr->nr_rows].addr = addr;
	fr->rows[fr->nr_rows++].s = fr->cur;
}

static const char *set_rule(struct frame *fr, uint64_t reg, uint8_t kind, int64_t val,
			    const unsigned char *expr)
{
	if (reg >= CFI_REGS)
		return "a rule for a register kbolt does not track";
	fr->cur.r[reg] = (struct rule){ .expr = expr, .val = val, .kind = kind };
	return NULL;
}

/* reg's rule back to the CIE's (DW_CFA_restore) */
static const char *restore_rule(struct frame *fr, const struct cie *c, uint64_t reg)
{
	if (reg >= CFI_REGS)
		return "a rule for a register kbolt does not track";
	fr->cur.r[reg] = c->init.r[reg];
	return NULL;
}

/* An expression block: its size, then its bytes */
static const unsigned char *get_block(struct dwarf_reader *r, uint64_t *len)
{
	const unsigned char *p;

	*len = dwarf_get_uleb(r);
	p = r->p;
	if (r->bad || *len > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return NULL;
	}
	r->p += *len;
	return p;
}

static const char *exec_cfa(struct frame *fr, unsigned int op, struct dwarf_reader *r,
			    const struct cie *c)
{
	struct cfa *cfa = &fr->cur.cfa;
	uint64_t reg;

	switch (op) {
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
		reg = dwarf_get_uleb(r);
		*cfa = (struct cfa){ .reg = reg, .off = op == DW_CFA_def_cfa ?
			(int64_t)dwarf_get_uleb(r) : dwarf_get_sleb(r) * c->data_align };
		return NULL;
	case DW_CFA_def_cfa_register:
		cfa->reg = dwarf_get_uleb(r);
		return cfa->expr ? "DW_CFA_def_cfa_register after an expression" : NULL;
	case DW_CFA_def_cfa_offset:
		cfa->off = (int64_t)dwarf_get_uleb(r);
		return cfa->expr ? "DW_CFA_def_cfa_offset after an expression" : NULL;
	case DW_CFA_def_cfa_offset_sf:
		cfa->off = dwarf_get_sleb(r) * c->data_align;
		return cfa->expr ? "DW_CFA_def_cfa_offset_sf after an expression" : NULL;
	case DW_CFA_def_cfa_expression:
		*cfa = (struct cfa){ 0 };
		cfa->expr = get_block(r, &cfa->len);
		return NULL;
	}
	return "an unknown instruction";
}

static const char *exec_reg(struct frame *fr, unsigned int op, struct dwarf_reader *r,
			    const struct cie *c)
{
	uint64_t reg = dwarf_get_uleb(r), len;
	const unsigned char *expr;

	switch (op) {
	case DW_CFA_offset_extended:
		return set_rule(fr, reg, RULE_OFFSET, dwarf_get_uleb(r) * c->data_align, NULL);
	case DW_CFA_offset_extended_sf:
		return set_rule(fr, reg, RULE_OFFSET, dwarf_get_sleb(r) * c->data_align, NULL);
	case DW_CFA_GNU_negative_offset_extended:
		return set_rule(fr, reg, RULE_OFFSET, -(int64_t)dwarf_get_uleb(r) * c->data_align,
				NULL);
	case DW_CFA_val_offset:
		return set_rule(fr, reg, RULE_VAL_OFFSET, dwarf_get_uleb(r) * c->data_align, NULL);
	case DW_CFA_val_offset_sf:
		return set_rule(fr, reg, RULE_VAL_OFFSET, dwarf_get_sleb(r) * c->data_align, NULL);
	case DW_CFA_restore_extended:
		return restore_rule(fr, c, reg);
	case DW_CFA_undefined:
		return set_rule(fr, reg, RULE_UNDEF, 0, NULL);
	case DW_CFA_same_value:
		return set_rule(fr, reg, RULE_SAME, 0, NULL);
	case DW_CFA_register:
		return set_rule(fr, reg, RULE_REG, (int64_t)dwarf_get_uleb(r), NULL);
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		expr = get_block(r, &len);
		return set_rule(fr, reg, op == DW_CFA_expression ? RULE_EXPR : RULE_VAL_EXPR,
				(int64_t)len, expr);
	}
	return "an unknown instruction";
}

static const char *exec_state(struct frame *fr, unsigned int op)
{
	if (op == DW_CFA_remember_state) {
		if (fr->depth == CFI_STACK)
			return "DW_CFA_remember_state nested too deep";
		fr->stack[fr->depth++] = fr->cur;
		return NULL;
	}
	if (!fr->depth)
		return "DW_CFA_restore_state with no state remembered";
	/* the CFA too, as GCC means it and libdw reads it */
	fr->cur = fr->stack[--fr->depth];
	return NULL;
}

/*
 * One instruction at r; *advance: by how many bytes it moves the location (0 if it
 * does not).  c is NULL for a CIE's own instructions.
 */
static const char *exec_one(struct frame *fr, struct dwarf_reader *r, const struct cie *c,
			    const struct cie *factors, uint64_t *advance)
{
	unsigned int op = *r->p++, low = op & 0x3f;

	*advance = 0;
	switch (op & 0xc0) {
	case DW_CFA_advance_loc:
		*advance = low * factors->code_align;
		return NULL;
	case DW_CFA_offset:
		return set_rule(fr, low, RULE_OFFSET, dwarf_get_uleb(r) * factors->data_align,
				NULL);
	case DW_CFA_restore:
		if (!c)
			return "DW_CFA_restore in a CIE";
		return restore_rule(fr, c, low);
	}
	switch (op) {
	case DW_CFA_nop:
		return NULL;
	case DW_CFA_advance_loc1:
	case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4:
		*advance = dwarf_get_fixed(r, op == DW_CFA_advance_loc1 ? 1 : op ==
					   DW_CFA_advance_loc2 ? 2 : 4) * factors->code_align;
		return NULL;
	case DW_CFA_set_loc:
		return "DW_CFA_set_loc";
	case DW_CFA_remember_state:
	case DW_CFA_restore_state:
		return exec_state(fr, op);
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
	case DW_CFA_def_cfa_register:
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
	case DW_CFA_def_cfa_expression:
		return exec_cfa(fr, op, r, factors);
	case DW_CFA_restore_extended:
		if (!c)
			return "DW_CFA_restore_extended in a CIE";
		return exec_reg(fr, op, r, c);
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
	case DW_CFA_GNU_negative_offset_extended:
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_register:
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		return exec_reg(fr, op, r, factors);
	}
	return "an instruction kbolt does not know";
}

/*
 * The program [p, end) from the CIE's initial rules (c), or, for a CIE (c NULL), from
 * none: fr->rows, from lo on.  NULL, or what kbolt cannot execute.
 */
static const char *exec_prog(struct frame *fr, const unsigned char *p, const unsigned char *end,
			     const struct cie *c, const struct cie *factors, uint64_t lo)
{
	struct dwarf_reader r = { p, end, false };
	uint64_t loc = lo, advance;
	const char *why = NULL;

	memset(&fr->cur, 0, sizeof(fr->cur));
	if (c)
		fr->cur = c->init;
	fr->depth = 0;
	fr->nr_rows = 0;
	while (!why && r.p < r.end) {
		why = exec_one(fr, &r, c, factors, &advance);
		if (r.bad)
			why = "an instruction past the entry's end";
		if (!why && advance && !c)
			why = "a location advance in a CIE";
		if (!why && advance) {
			push_row(fr, loc);
			loc += advance;
		}
	}
	if (!why)
		push_row(fr, loc);
	return why;
}

/* The entry at off; NULL, or what kbolt cannot read */
static const char *read_entry(struct frame *fr, uint64_t off, struct frame_entry *e)
{
	struct dwarf_reader r = { fr->data + off, fr->data + fr->size, false };
	uint64_t len = dwarf_get_fixed(&r, 4), id;

	memset(e, 0, sizeof(*e));
	e->off = off;
	e->offset_size = 4;
	if (len == 0xffffffff) {
		len = dwarf_get_fixed(&r, 8);
		e->offset_size = 8;
	} else if (len >= 0xfffffff0) {
		return "a reserved length";
	}
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return "an entry past the section's end";
	e->end = (uint64_t)(r.p - fr->data) + len;
	if (!len) {
		e->kind = ENTRY_ZERO;
		return NULL;
	}
	r.end = fr->data + e->end;
	e->id_place = (uint64_t)(r.p - fr->data);
	id = dwarf_get_fixed(&r, e->offset_size);
	e->kind = id == (e->offset_size == 4 ? 0xffffffffu : UINT64_MAX) ? ENTRY_CIE : ENTRY_FDE;
	e->body = (uint64_t)(r.p - fr->data);
	e->cie = id;	/* an FDE's CIE offset, linked later */
	return r.bad ? "an entry past the section's end" : NULL;
}

/* The CIE e: its factors and initial rules into fr->cies */
static const char *read_cie(struct frame *fr, struct frame_entry *e)
{
	struct dwarf_reader r = { fr->data + e->body, fr->data + e->end, false };
	unsigned int version = (unsigned int)dwarf_get_fixed(&r, 1);
	struct cie c = { 0 };
	const char *why;

	if (version != 1 && version != 3 && version != 4)
		return "a CIE version kbolt does not know";
	if (r.p >= r.end)
		return "a CIE past its end";
	if (*r.p++)
		return "a CIE augmentation (.debug_frame has none)";
	e->addr_size = 8;
	if (version == 4) {
		e->addr_size = (unsigned int)dwarf_get_fixed(&r, 1);
		if (e->addr_size != 8 || dwarf_get_fixed(&r, 1))
			return "a CIE with another address or segment size than 8 and 0";
	}
	c.code_align = dwarf_get_uleb(&r);
	c.data_align = dwarf_get_sleb(&r);
	/* x86's: the rows kbolt writes advance by bytes, and factor offsets by it */
	if (c.code_align != 1 || !c.data_align)
		return "a CIE with a code alignment factor other than 1, or no data factor";
	if (version == 1)
		dwarf_get_fixed(&r, 1);	/* the return address column */
	else
		dwarf_get_uleb(&r);
	if (r.bad || r.p > r.end)
		return "a CIE past its end";
	why = exec_prog(fr, r.p, r.end, NULL, &c, 0);
	if (why)
		return why;
	c.init = fr->cur;
	e->cie = fr->nr_cies;
	GROW(fr->cies, fr->cies_cap, fr->nr_cies + 1);
	fr->cies[fr->nr_cies++] = c;
	return NULL;
}

static int cmp_entry_off(const void *key, const void *x)
{
	uint64_t off = *(const uint64_t *)key;
	const struct frame_entry *e = x;

	return off < e->off ? -1 : off >= e->end;
}

static struct frame_entry *entry_at(struct frame *fr, uint64_t off)
{
	return search_array(&off, fr->e, fr->nr, sizeof(*fr->e), cmp_entry_off);
}

/* An FDE's CIE, range and program: bad (with why) if kbolt cannot execute it */
static const char *read_fde(struct frame *fr, struct frame_entry *e,
			    const struct frame_entry *ce)
{
	struct dwarf_reader r = { fr->data + e->body, fr->data + e->end, false };

	e->addr_size = ce->addr_size ? ce->addr_size : 8;
	e->lo = dwarf_get_fixed(&r, e->addr_size);
	e->hi = e->lo + dwarf_get_fixed(&r, e->addr_size);
	e->body = (uint64_t)(r.p - fr->data);
	if (r.bad)
		return "an FDE past its end";
	if (ce->bad)
		return "an FDE of a CIE kbolt cannot read";
	e->cie = ce->cie;
	return exec_prog(fr, r.p, r.end, &fr->cies[e->cie], &fr->cies[e->cie], e->lo);
}

/*
 * Every entry of the section; *at and the return value: where and what makes the
 * whole section unreadable.  An entry kbolt cannot execute is only marked bad.
 */
static const char *read_frame(struct frame *fr, uint64_t *at)
{
	const char *why;

	for (uint64_t off = 0; off < fr->size;) {
		struct frame_entry e;

		*at = off;
		why = read_entry(fr, off, &e);
		if (why)
			return why;
		if (e.kind == ENTRY_CIE && read_cie(fr, &e))
			e.bad = true;
		GROW(fr->e, fr->cap, fr->nr + 1);
		fr->e[fr->nr++] = e;
		off = e.end;
	}
	for (size_t k = 0; k < fr->nr; k++) {
		struct frame_entry *e = &fr->e[k];
		const struct frame_entry *ce;

		if (e->kind != ENTRY_FDE)
			continue;
		*at = e->off;
		ce = entry_at(fr, e->cie);
		if (!ce || ce->off != e->cie || ce->kind != ENTRY_CIE)
			return "an FDE whose CIE pointer is not a CIE";
		if (read_fde(fr, e, ce))
			e->bad = true;
	}
	return NULL;
}

static void frame_free(struct frame *fr)
{
	free(fr->e);
	free(fr->cies);
	free(fr->rows);
}

struct fde_range {
	uint64_t lo, hi;
	uint64_t reach;		/* the highest hi of this range and those before */
	size_t entry;
};

static int cmp_range(const void *x, const void *y)
{
	const struct fde_range *p = x, *q = y;

	return p->lo < q->lo ? -1 : p->lo > q->lo;
}

/* fr's FDEs by start address */
static struct fde_range *sorted_fdes(const struct frame *fr, size_t *nr)
{
	struct fde_range *v = xmalloc((fr->nr + 1) * sizeof(*v));

	*nr = 0;
	for (size_t k = 0; k < fr->nr; k++)
		if (fr->e[k].kind == ENTRY_FDE && fr->e[k].hi > fr->e[k].lo)
			v[(*nr)++] = (struct fde_range){ .lo = fr->e[k].lo, .hi = fr->e[k].hi,
						       .entry = k };
	qsort(v, *nr, sizeof(*v), cmp_range);
	for (size_t k = 0; k < *nr; k++)
		v[k].reach = k && v[k - 1].reach > v[k].hi ? v[k - 1].reach : v[k].hi;
	return v;
}

/*
 * The one FDE that covers [lo, hi) whole, and kbolt can execute: its entry; SIZE_MAX if
 * none meets it, SIZE_MAX - 1 if those that meet it do not do that
 */
enum { NO_FDE = SIZE_MAX, BAD_FDE = SIZE_MAX - 1 };

static size_t fde_covering(const struct frame *fr, const struct fde_range *v, size_t nr,
			   uint64_t lo, uint64_t hi)
{
	size_t k = upper_bound_u64(v, nr, sizeof(*v), offsetof(struct fde_range, lo), lo);
	size_t found = NO_FDE, met = 0;

	while (k && v[k - 1].reach > lo)	/* back to the first that may reach lo */
		k--;
	for (; k < nr && v[k].lo < hi; k++) {
		if (v[k].hi <= lo)
			continue;
		met++;
		found = v[k].entry;
		if (v[k].lo > lo || v[k].hi < hi || fr->e[found].bad)
			return BAD_FDE;
	}
	return met > 1 ? BAD_FDE : found;
}

/*
 * fr read from opt's image: 1, 0 if it has no .debug_frame, or -EINVAL (with a warning
 * unless quiet) if kbolt cannot update it
 */
static int frame_open(struct frame *fr, struct opt *opt, struct kmeta_sec **sec, bool quiet)
{
	uint64_t at = 0;
	const char *why;

	memset(fr, 0, sizeof(*fr));
	fr->opt = opt;
	*sec = kmeta_find_sec_by_name(opt->img, ".debug_frame");
	if (!*sec)
		return 0;
	if ((*sec)->flags & SHF_COMPRESSED)
		why = "a compressed section";
	else if (!(fr->data = dwarf_file_bytes(opt->img, *sec, &fr->size)))
		why = "a section past the file's end";
	else
		why = read_frame(fr, &at);
	if (!why)
		return 1;
	if (!quiet)
		pr_warn(opt->img->path, ".debug_frame at 0x%" PRIx64 ": %s: kbolt cannot "
			"update the call frame information, no function is moved "
			"(--update-debug)", at, why);
	return -EINVAL;
}

void dwarf_frame_check(struct opt *opt)
{
	struct kmeta_sec *sec;
	struct frame fr;
	struct fde_range *v = NULL;
	size_t nr = 0;
	int ok = frame_open(&fr, opt, &sec, false);

	if (ok > 0)
		v = sorted_fdes(&fr, &nr);
	for (size_t i = 0; ok && i < opt->nr_funcs; i++) {
		struct func *f = &opt->funcs[i];

		if (!is_rewritable(f) || !kmeta_elf_size(f->sym))
			continue;
		if (ok < 0 || fde_covering(&fr, v, nr, f->sym->addr, func_elf_end(f)) == BAD_FDE)
			skip_func(opt, f, SKIP_DEBUG_INFO, f->sym->addr);
	}
	free(v);
	frame_free(&fr);
}

/* The row of fr->rows in effect at addr: the last that starts at or before it */
static const struct cfi_row *row_at(const struct frame *fr, uint64_t addr)
{
	size_t after = upper_bound_u64(fr->rows, fr->nr_rows, sizeof(*fr->rows),
				       offsetof(struct cfi_row, addr), addr);

	return &fr->rows[after ? after - 1 : 0];
}

/* A row of the new program: from addr on, the rules of old row `row` */
struct new_row {
	uint64_t addr;
	size_t row;
	size_t seq;	/* rows at one address keep their order: the last wins */
};

struct new_rows {
	struct new_row *v;
	size_t nr, cap;
};

static void add_new_row(struct new_rows *nr, uint64_t addr, const struct frame *fr,
			const struct cfi_row *row)
{
	GROW(nr->v, nr->cap, nr->nr + 1);
	nr->v[nr->nr] = (struct new_row){ addr, (size_t)(row - fr->rows), nr->nr };
	nr->nr++;
}

/* f's rows in its new order (file comment) */
static void remap_func(const struct frame *fr, const struct func *f, struct new_rows *out)
{
	uint64_t start = f->sym->addr;

	for (uint32_t i = 0; i < f->nr_items; i++) {
		const struct item *it = &f->items[i];
		const struct op *op = &f->ops[it->op];
		uint64_t o = start + op->off, n = start + it->new_off;
		const struct cfi_row *row = row_at(fr, o);

		add_new_row(out, n, fr, row);
		if (it->added)
			continue;
		for (row++; row < fr->rows + fr->nr_rows && row->addr < o + op->len; row++)
			add_new_row(out, n + (row->addr - o), fr, row);
	}
	/* whatever the FDE covers after f keeps its rules */
	add_new_row(out, func_elf_end(f), fr, row_at(fr, func_elf_end(f)));
}

static int cmp_new_row(const void *x, const void *y)
{
	const struct new_row *p = x, *q = y;

	if (p->addr != q->addr)
		return p->addr < q->addr ? -1 : 1;
	return p->seq < q->seq ? -1 : p->seq > q->seq;
}

static bool same_block(const unsigned char *x, const unsigned char *y, uint64_t len)
{
	return x == y || (x && y && !memcmp(x, y, len));
}

static bool same_rule(const struct rule *x, const struct rule *y)
{
	if (x->kind != y->kind || x->val != y->val)
		return false;
	return (x->kind != RULE_EXPR && x->kind != RULE_VAL_EXPR) ||
	       same_block(x->expr, y->expr, (uint64_t)x->val);
}

static bool same_cfa(const struct cfa *x, const struct cfa *y)
{
	if (!x->expr != !y->expr)
		return false;
	if (x->expr)
		return x->len == y->len && same_block(x->expr, y->expr, x->len);
	return x->reg == y->reg && x->off == y->off;
}

static void put_advance(struct dwarf_buf *b, uint64_t delta)
{
	if (delta < 0x40) {
		dwarf_put_byte(b, DW_CFA_advance_loc | (unsigned char)delta);
	} else if (delta <= UINT8_MAX) {
		dwarf_put_byte(b, DW_CFA_advance_loc1);
		dwarf_put_fixed(b, delta, 1);
	} else if (delta <= UINT16_MAX) {
		dwarf_put_byte(b, DW_CFA_advance_loc2);
		dwarf_put_fixed(b, delta, 2);
	} else {
		dwarf_put_byte(b, DW_CFA_advance_loc4);
		dwarf_put_fixed(b, delta, 4);
	}
}

static void put_block(struct dwarf_buf *b, const unsigned char *p, uint64_t len)
{
	dwarf_put_uleb(b, len);
	dwarf_put_bytes(b, p, len);
}

static void put_cfa(struct dwarf_buf *b, const struct cfa *from, const struct cfa *to,
		    const struct cie *c)
{
	if (to->expr) {
		dwarf_put_byte(b, DW_CFA_def_cfa_expression);
		put_block(b, to->expr, to->len);
	} else if (!from->expr && from->reg == to->reg && to->off >= 0) {
		dwarf_put_byte(b, DW_CFA_def_cfa_offset);
		dwarf_put_uleb(b, (uint64_t)to->off);
	} else if (!from->expr && from->off == to->off) {
		dwarf_put_byte(b, DW_CFA_def_cfa_register);
		dwarf_put_uleb(b, to->reg);
	} else if (to->off >= 0) {
		dwarf_put_byte(b, DW_CFA_def_cfa);
		dwarf_put_uleb(b, to->reg);
		dwarf_put_uleb(b, (uint64_t)to->off);
	} else {
		dwarf_put_byte(b, DW_CFA_def_cfa_sf);
		dwarf_put_uleb(b, to->reg);
		dwarf_put_sleb(b, to->off / c->data_align);
	}
}

/* reg's rule x (not the CIE's: that is DW_CFA_restore) */
static void put_rule(struct dwarf_buf *b, unsigned int reg, const struct rule *x,
		     const struct cie *c)
{
	int64_t factored = x->val / c->data_align;

	switch (x->kind) {
	case RULE_OFFSET:
		if (factored >= 0) {
			dwarf_put_byte(b, DW_CFA_offset | reg);
			dwarf_put_uleb(b, (uint64_t)factored);
			return;
		}
		dwarf_put_byte(b, DW_CFA_offset_extended_sf);
		break;
	case RULE_VAL_OFFSET:
		dwarf_put_byte(b, DW_CFA_val_offset_sf);
		break;
	case RULE_UNDEF:
		dwarf_put_byte(b, DW_CFA_undefined);
		dwarf_put_uleb(b, reg);
		return;
	case RULE_SAME:
		dwarf_put_byte(b, DW_CFA_same_value);
		dwarf_put_uleb(b, reg);
		return;
	case RULE_REG:
		dwarf_put_byte(b, DW_CFA_register);
		dwarf_put_uleb(b, reg);
		dwarf_put_uleb(b, (uint64_t)x->val);
		return;
	default:	/* RULE_EXPR, RULE_VAL_EXPR */
		dwarf_put_byte(b, x->kind == RULE_EXPR ? DW_CFA_expression : DW_CFA_val_expression);
		dwarf_put_uleb(b, reg);
		put_block(b, x->expr, (uint64_t)x->val);
		return;
	}
	dwarf_put_uleb(b, reg);
	dwarf_put_sleb(b, factored);
}

/* What takes the rules from to to */
static void put_diff(struct dwarf_buf *b, const struct cfi_state *from,
		     const struct cfi_state *to, const struct cie *c)
{
	if (!same_cfa(&from->cfa, &to->cfa))
		put_cfa(b, &from->cfa, &to->cfa, c);
	for (unsigned int reg = 0; reg < CFI_REGS; reg++) {
		if (same_rule(&from->r[reg], &to->r[reg]))
			continue;
		if (same_rule(&c->init.r[reg], &to->r[reg]))
			dwarf_put_byte(b, DW_CFA_restore | reg);
		else
			put_rule(b, reg, &to->r[reg], c);
	}
}

/*
 * The first function that starts at or after addr, or before it (which the caller
 * skips): an alias repeats the address of the function before it, and may be the one
 * kmeta_func_at_or_before() finds
 */
static size_t first_func_from(struct opt *opt, uint64_t addr)
{
	long i = kmeta_func_at_or_before(opt->img, addr);

	if (i < 0)
		return 0;
	while (i > 0 && opt->funcs[i - 1].sym->addr >= addr)
		i--;
	return (size_t)i;
}

static bool same_state(const struct cfi_state *x, const struct cfi_state *y)
{
	if (!same_cfa(&x->cfa, &y->cfa))
		return false;
	for (unsigned int reg = 0; reg < CFI_REGS; reg++)
		if (!same_rule(&x->r[reg], &y->r[reg]))
			return false;
	return true;
}

/*
 * The rows of e's new program, by address: the old rows outside moved functions, and
 * each moved function's remapped (fr->rows holds e's old rows)
 */
static void new_rows_of(struct frame *fr, const struct frame_entry *e, struct new_rows *nr)
{
	size_t k = 0;

	nr->nr = 0;
	for (size_t i = first_func_from(fr->opt, e->lo); i < fr->opt->nr_funcs; i++) {
		const struct func *f = &fr->opt->funcs[i];

		if (f->sym->addr >= e->hi)
			break;
		if (!f->moved || f->sym->addr < e->lo)
			continue;
		for (; k < fr->nr_rows && fr->rows[k].addr < f->sym->addr; k++)
			add_new_row(nr, fr->rows[k].addr, fr, &fr->rows[k]);
		add_new_row(nr, f->sym->addr, fr, row_at(fr, f->sym->addr));
		remap_func(fr, f, nr);
		while (k < fr->nr_rows && fr->rows[k].addr < func_elf_end(f))
			k++;
	}
	for (; k < fr->nr_rows; k++)
		add_new_row(nr, fr->rows[k].addr, fr, &fr->rows[k]);
	qsort(nr->v, nr->nr, sizeof(*nr->v), cmp_new_row);
}

/* The FDE e (executed into fr->rows) again, with the rows of its moved functions remapped */
static void rewrite_fde(struct frame *fr, const struct frame_entry *e, struct dwarf_buf *out,
			struct new_rows *nr)
{
	const struct cie *c = &fr->cies[e->cie];
	const struct cfi_state *cur = &c->init;
	uint64_t start = out->nr, loc = e->lo, len_size = e->offset_size == 8 ? 12 : 4;

	new_rows_of(fr, e, nr);
	dwarf_put_bytes(out, fr->data + e->off, e->body - e->off);	/* the header */
	for (size_t k = 0; k < nr->nr; k++) {
		const struct new_row *r = &nr->v[k];
		const struct cfi_state *s = &fr->rows[r->row].s;

		if (k + 1 < nr->nr && nr->v[k + 1].addr == r->addr)
			continue;	/* the last row at an address is the one in effect */
		if (r->addr >= e->hi)
			break;
		if (same_state(cur, s))
			continue;
		if (r->addr > loc)
			put_advance(out, r->addr - loc);
		loc = r->addr;
		put_diff(out, cur, s, c);
		cur = s;
	}
	while ((out->nr - start) % e->addr_size)
		dwarf_put_byte(out, DW_CFA_nop);
	if (e->offset_size == 8)
		put_u64(out->p + start + 4, out->nr - start - len_size);
	else
		put_u32(out->p + start, (uint32_t)(out->nr - start - len_size));
}

/* Does a moved function lie in e's range? */
static bool fde_moves(struct frame *fr, const struct frame_entry *e)
{
	for (size_t i = first_func_from(fr->opt, e->lo); i < fr->opt->nr_funcs; i++) {
		const struct func *f = &fr->opt->funcs[i];

		if (f->sym->addr >= e->hi)
			break;
		if (f->moved && f->sym->addr >= e->lo)
			return true;
	}
	return false;
}

/* The new section: entries in their order, those of moved functions encoded again */
static const char *layout_frame(struct frame *fr, struct dwarf_buf *out, uint64_t *at)
{
	struct new_rows nr = { 0 };
	const char *why = NULL;

	for (size_t k = 0; k < fr->nr && !why; k++) {
		struct frame_entry *e = &fr->e[k];

		e->new_off = out->nr;
		if (e->kind == ENTRY_FDE && fde_moves(fr, e)) {
			const struct cie *c = &fr->cies[e->cie];

			*at = e->off;
			why = e->bad ? "an FDE kbolt cannot execute covers a moved function" :
			      exec_prog(fr, fr->data + e->body, fr->data + e->end, c, c, e->lo);
			if (!why)
				rewrite_fde(fr, e, out, &nr);
			e->rewritten = true;
			continue;
		}
		dwarf_put_bytes(out, fr->data + e->off, e->end - e->off);
	}
	for (size_t k = 0; k < fr->nr && !why; k++) {	/* the CIE pointers */
		const struct frame_entry *e = &fr->e[k], *ce;

		if (e->kind != ENTRY_FDE)
			continue;
		ce = entry_at(fr, dwarf_get_offset(fr->data + e->id_place, e->offset_size));
		dwarf_put_offset(out->p + e->new_off + (e->id_place - e->off), e->offset_size,
			   ce->new_off);
	}
	free(nr.v);
	return why;
}

/*
 * .rela.debug_frame for the new section: every relocation moves with the bytes it
 * relocates, and a CIE pointer's addend (the CIE's offset) follows the CIE
 */
static int rebuild_frame_relocs(struct frame *fr, struct kmeta_sec *sec, struct output_secs *out)
{
	struct kmeta_image *img = fr->opt->img;
	struct kmeta_sec *rs = dwarf_rela_of(img, sec);
	uint64_t rsize = 0, nr = 0;
	unsigned char *r = rs ? dwarf_file_bytes(img, rs, &rsize) : NULL, *n;

	if (!r)
		return 0;
	n = xmalloc(rsize ? rsize : 1);
	for (uint64_t at = 0; at + 24 <= rsize; at += 24) {
		uint64_t place = get_u64(r + at), addend = get_u64(r + at + 16);
		const struct frame_entry *e = entry_at(fr, place), *ce;

		if (!e || (e->rewritten && place >= e->body)) {
			pr_err(img->path, ".rela.debug_frame: the relocation at 0x%" PRIx64 " is "
			       "not in an entry's header", place);
			free(n);
			return -EINVAL;
		}
		memcpy(n + nr * 24, r + at, 24);
		put_u64(n + nr * 24, place - e->off + e->new_off);
		if (e->kind == ENTRY_FDE && place == e->id_place) {
			ce = entry_at(fr, addend);
			if (!ce || ce->off != addend) {
				pr_err(img->path, ".rela.debug_frame: the CIE pointer of the FDE "
				       "at 0x%" PRIx64 " is relocated to no CIE", e->off);
				free(n);
				return -EINVAL;
			}
			put_u64(n + nr * 24 + 16, ce->new_off);
		}
		nr++;
	}
	output_secs_add(out, rs->idx, n, nr * 24);
	return 0;
}

int dwarf_frame_rewrite(struct opt *opt, struct output_secs *out)
{
	struct kmeta_sec *sec;
	struct frame fr;
	struct dwarf_buf b = { 0 };
	uint64_t at = 0;
	const char *why;
	int err;

	if (!opt->nr_moved_lines)
		return 0;	/* nothing moved: the section stays as it is */
	err = frame_open(&fr, opt, &sec, true);
	if (err <= 0) {		/* none, or dwarf_frame_check() moved no function */
		frame_free(&fr);
		return 0;
	}
	why = layout_frame(&fr, &b, &at);
	if (why) {
		pr_err(opt->img->path, ".debug_frame: the FDE at 0x%" PRIx64 ": %s", at, why);
		err = -EINVAL;
	} else {
		err = rebuild_frame_relocs(&fr, sec, out);
	}
	if (!err) {
		output_secs_add(out, sec->idx, b.p, b.nr);
		b.p = NULL;
	}
	free(b.p);
	frame_free(&fr);
	return err;
}
