// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt optimize --update-debug: the line table (.debug_line) of the new code.  The
 * line program of every compilation unit that has rows in a moved function is decoded
 * and encoded again, its header (directory and file tables) byte for byte as it was;
 * each moved function's rows are re-emitted in the new address order:
 *
 *   - the rows that started at an old instruction start at its new address, in their
 *     order (their view numbers, which count rows at one address, stay);
 *   - an instruction that no row started at, but whose new predecessor is not the row
 *     that covered it, gets a copy of that row (a block now elsewhere);
 *   - an instruction kbolt adds (a jmp) has no row of its own: it takes the row of the
 *     block it ends; rows of code kbolt drops (an elided jmp, padding) go.
 *
 * The programs are laid out again in their order, so DW_AT_stmt_list of every unit
 * after a rewritten one moves: .debug_info is patched in place (same form, same size)
 * with its relocations (dwarf_patches_apply(), with info.c's patches), and
 * .rela.debug_line (6.1 keeps the --emit-relocs of vmlinux) is rebuilt: relocations
 * in copied bytes move with them, the DW_LNE_set_address of a rewritten sequence
 * keeps the relocation of the old sequence's first one.
 *
 * Hand-written, after DWARF 5 section 6.2 (and 4, 3, 2: the same opcodes): libdw
 * decodes rows but neither writes them nor says where a program's bytes are.  The
 * proof reads the result through libdw (kbolt/verify/dwarf.c), not through this.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../lib/output.h"
#include "../model/opt.h"
#include "dwarf.h"
#include "io.h"

enum {
	LNS_COPY = 1, LNS_ADVANCE_PC, LNS_ADVANCE_LINE, LNS_SET_FILE, LNS_SET_COLUMN,
	LNS_NEGATE_STMT, LNS_SET_BASIC_BLOCK, LNS_CONST_ADD_PC, LNS_FIXED_ADVANCE_PC,
	LNS_SET_PROLOGUE_END, LNS_SET_EPILOGUE_BEGIN, LNS_SET_ISA,
	LNE_END_SEQUENCE = 1, LNE_SET_ADDRESS, LNE_DEFINE_FILE, LNE_SET_DISCRIMINATOR,
};

enum row_flags {
	ROW_STMT = 1, ROW_BB = 2, ROW_END = 4, ROW_PROLOGUE_END = 8, ROW_EPILOGUE_BEGIN = 16,
};

struct row {
	uint64_t addr;
	uint32_t file, line, column, discriminator, isa;
	uint8_t flags;
};

/* One unit's line program: where its parts are, and what its header says */
struct prog {
	uint64_t off, body, end;	/* header start, opcodes start, end (section offsets) */
	unsigned int offset_size;	/* 4 or 8: 32- or 64-bit DWARF */
	unsigned int version, min_inst, line_range, opcode_base;
	int line_base;
	bool default_stmt;
	const unsigned char *std_lens;
};

struct seq {
	size_t first, nr;		/* rows */
	uint64_t set_addr_place;	/* section offset of its first set_address operand, 0 */
};

/* The header of the program at off; NULL, or what kbolt cannot rewrite */
static const char *read_prog(const unsigned char *data, uint64_t size, uint64_t off,
			     struct prog *p)
{
	struct dwarf_reader r = { .p = data + off, .end = data + size };
	uint64_t len, header_len;

	memset(p, 0, sizeof(*p));
	p->off = off;
	len = dwarf_get_initial_length(&r, &p->offset_size);
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return "unit length past the section's end";
	p->end = (r.p - data) + len;
	r.end = data + p->end;
	p->version = dwarf_get_fixed(&r, 2);
	if (p->version < 2 || p->version > 5)
		return "line table version kbolt does not know";
	if (p->version >= 5 && (dwarf_get_fixed(&r, 1) != 8 || dwarf_get_fixed(&r, 1) != 0))
		return "address size other than 8, or segment selectors";
	header_len = dwarf_get_fixed(&r, p->offset_size);
	if (r.bad || header_len > (uint64_t)(r.end - r.p))
		return "header length past the unit's end";
	p->body = (r.p - data) + header_len;
	p->min_inst = dwarf_get_fixed(&r, 1);
	if (p->version >= 4 && dwarf_get_fixed(&r, 1) != 1)
		return "maximum_operations_per_instruction other than 1 (VLIW)";
	p->default_stmt = dwarf_get_fixed(&r, 1);
	p->line_base = (signed char)dwarf_get_fixed(&r, 1);
	p->line_range = dwarf_get_fixed(&r, 1);
	p->opcode_base = dwarf_get_fixed(&r, 1);
	p->std_lens = r.p;
	if (r.bad || !p->line_range || !p->min_inst || !p->opcode_base ||
	    p->opcode_base - 1 > (uint64_t)(r.end - r.p) || p->opcode_base < LNS_SET_ISA + 1 ||
	    p->line_base > 0 || p->line_base + (int)p->line_range <= 0)
		return "header kbolt cannot encode rows for";
	return NULL;
}

static void add_row(struct row **rows, size_t *nr, size_t *cap, const struct row *st)
{
	GROW(*rows, *cap, *nr + 1);
	(*rows)[(*nr)++] = *st;
}

static void reset_state(const struct prog *p, struct row *st)
{
	*st = (struct row){ .file = 1, .line = 1, .flags = p->default_stmt ? ROW_STMT : 0 };
}

/*
 * The rows of p, in program order, and its sequences; NULL, or what kbolt cannot
 * rewrite (an opcode it does not know, a file defined in the program)
 */
static const char *decode_prog(const unsigned char *data, const struct prog *p,
			       struct row **rows, size_t *nr, size_t *cap, struct seq **seqs,
			       size_t *nr_seqs, size_t *seqs_cap)
{
	struct dwarf_reader r = { .p = data + p->body, .end = data + p->end };
	struct row st;
	struct seq cur = { *nr, 0, 0 };

	reset_state(p, &st);
	while (r.p < r.end && !r.bad) {
		unsigned int op = *r.p++;
		uint64_t len;
		const unsigned char *next;

		if (op >= p->opcode_base) {
			unsigned int adj = op - p->opcode_base;

			st.addr += p->min_inst * (adj / p->line_range);
			st.line += p->line_base + (int)(adj % p->line_range);
			add_row(rows, nr, cap, &st);
			st.flags &= ~(ROW_BB | ROW_PROLOGUE_END | ROW_EPILOGUE_BEGIN);
			st.discriminator = 0;
			continue;
		}
		switch (op) {
		case 0:
			len = dwarf_get_uleb(&r);
			if (r.bad || !len || len > (uint64_t)(r.end - r.p))
				return "extended opcode past the unit's end";
			next = r.p + len;
			op = *r.p++;
			if (op == LNE_END_SEQUENCE) {
				st.flags |= ROW_END;
				add_row(rows, nr, cap, &st);
				cur.nr = *nr - cur.first;
				GROW(*seqs, *seqs_cap, *nr_seqs + 1);
				(*seqs)[(*nr_seqs)++] = cur;
				cur = (struct seq){ *nr, 0, 0 };
				reset_state(p, &st);
			} else if (op == LNE_SET_ADDRESS && len == 9) {
				if (!cur.set_addr_place)
					cur.set_addr_place = r.p - data;
				st.addr = dwarf_get_fixed(&r, 8);
			} else if (op == LNE_SET_DISCRIMINATOR) {
				st.discriminator = dwarf_get_uleb(&r);
			} else {
				return "extended opcode kbolt does not know (or a file defined in "
				       "the program)";
			}
			if (r.p != next)
				return "extended opcode of the wrong length";
			break;
		case LNS_COPY:
			add_row(rows, nr, cap, &st);
			st.flags &= ~(ROW_BB | ROW_PROLOGUE_END | ROW_EPILOGUE_BEGIN);
			st.discriminator = 0;
			break;
		case LNS_ADVANCE_PC: st.addr += p->min_inst * dwarf_get_uleb(&r); break;
		case LNS_ADVANCE_LINE: st.line += dwarf_get_sleb(&r); break;
		case LNS_SET_FILE: st.file = dwarf_get_uleb(&r); break;
		case LNS_SET_COLUMN: st.column = dwarf_get_uleb(&r); break;
		case LNS_NEGATE_STMT: st.flags ^= ROW_STMT; break;
		case LNS_SET_BASIC_BLOCK: st.flags |= ROW_BB; break;
		case LNS_CONST_ADD_PC:
			st.addr += p->min_inst * ((255 - p->opcode_base) / p->line_range);
			break;
		case LNS_FIXED_ADVANCE_PC: st.addr += dwarf_get_fixed(&r, 2); break;
		case LNS_SET_PROLOGUE_END: st.flags |= ROW_PROLOGUE_END; break;
		case LNS_SET_EPILOGUE_BEGIN: st.flags |= ROW_EPILOGUE_BEGIN; break;
		case LNS_SET_ISA: st.isa = dwarf_get_uleb(&r); break;
		default:	/* a standard opcode of a later version: its operands are ulebs */
			return "standard opcode kbolt does not know";
		}
	}
	if (r.bad)
		return "opcode past the unit's end";
	if (*nr != cur.first)
		return "rows after the last end_sequence";
	return NULL;
}

/* The encoder's state: the registers as the last emitted row left them */
struct encoder {
	const struct prog *p;
	struct dwarf_buf *b;
	struct row st;
};

static void encode_set(struct encoder *e, const struct row *r)
{
	struct dwarf_buf *b = e->b;

	if (r->file != e->st.file) {
		dwarf_put_byte(b, LNS_SET_FILE);
		dwarf_put_uleb(b, r->file);
	}
	if (r->column != e->st.column) {
		dwarf_put_byte(b, LNS_SET_COLUMN);
		dwarf_put_uleb(b, r->column);
	}
	if ((r->flags ^ e->st.flags) & ROW_STMT)
		dwarf_put_byte(b, LNS_NEGATE_STMT);
	if (r->isa != e->st.isa) {
		dwarf_put_byte(b, LNS_SET_ISA);
		dwarf_put_uleb(b, r->isa);
	}
	if (r->discriminator) {
		struct dwarf_buf d = { 0 };

		dwarf_put_uleb(&d, r->discriminator);
		dwarf_put_byte(b, 0);
		dwarf_put_uleb(b, d.nr + 1);
		dwarf_put_byte(b, LNE_SET_DISCRIMINATOR);
		dwarf_put_bytes(b, d.p, d.nr);
		free(d.p);
	}
	if (r->flags & ROW_BB)
		dwarf_put_byte(b, LNS_SET_BASIC_BLOCK);
	if (r->flags & ROW_PROLOGUE_END)
		dwarf_put_byte(b, LNS_SET_PROLOGUE_END);
	if (r->flags & ROW_EPILOGUE_BEGIN)
		dwarf_put_byte(b, LNS_SET_EPILOGUE_BEGIN);
}

/* A row of the sequence, at an address not below the last one's */
static void encode_row(struct encoder *e, const struct row *r)
{
	const struct prog *p = e->p;
	uint64_t ops = (r->addr - e->st.addr) / p->min_inst;
	int64_t dl = (int64_t)r->line - (int64_t)e->st.line;
	uint64_t special;

	encode_set(e, r);
	if (dl < p->line_base || dl >= p->line_base + (int)p->line_range) {
		dwarf_put_byte(e->b, LNS_ADVANCE_LINE);
		dwarf_put_sleb(e->b, dl);
		dl = 0;
	}
	special = (uint64_t)(dl - p->line_base) + p->line_range * ops + p->opcode_base;
	if (special > 255) {
		dwarf_put_byte(e->b, LNS_ADVANCE_PC);
		dwarf_put_uleb(e->b, ops);
		special = (uint64_t)(dl - p->line_base) + p->opcode_base;
	}
	dwarf_put_byte(e->b, special);
	e->st = *r;
	e->st.flags &= ~(ROW_BB | ROW_PROLOGUE_END | ROW_EPILOGUE_BEGIN);
	e->st.discriminator = 0;
}

/* A whole sequence: set_address, the rows, end_sequence; *place: set_address's operand */
static void encode_seq(const struct prog *p, struct dwarf_buf *b, const struct row *rows,
		       size_t nr, uint64_t *place)
{
	struct encoder e = { .p = p, .b = b };
	unsigned char addr[8];

	reset_state(p, &e.st);
	e.st.addr = rows[0].addr;
	dwarf_put_byte(b, 0);
	dwarf_put_uleb(b, 9);
	dwarf_put_byte(b, LNE_SET_ADDRESS);
	*place = b->nr;
	put_u64(addr, rows[0].addr);
	dwarf_put_bytes(b, addr, 8);
	for (size_t k = 0; k + 1 < nr; k++)
		encode_row(&e, &rows[k]);
	if (rows[nr - 1].addr != e.st.addr) {
		dwarf_put_byte(b, LNS_ADVANCE_PC);
		dwarf_put_uleb(b, (rows[nr - 1].addr - e.st.addr) / p->min_inst);
	}
	dwarf_put_byte(b, 0);
	dwarf_put_uleb(b, 1);
	dwarf_put_byte(b, LNE_END_SEQUENCE);
}

struct rowvec {
	struct row *v;
	size_t nr, cap;
};

/* The index of the first of rows[lo, hi) at or after addr */
static size_t first_row_from(const struct row *rows, size_t lo, size_t hi, uint64_t addr)
{
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rows[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void push_row(struct rowvec *out, const struct row *r, uint64_t addr)
{
	GROW(out->v, out->cap, out->nr + 1);
	out->v[out->nr] = *r;
	out->v[out->nr++].addr = addr;
}

/*
 * f's rows rows[k, j) of a sequence, in f's new order (file comment); *last: the index
 * of the row the output's last row is a copy of
 */
static void remap_func(const struct func *f, const struct row *rows, size_t nr, size_t k,
		       size_t j, struct rowvec *out, size_t *last)
{
	uint64_t start = f->sym->addr, end = func_elf_end(f);
	size_t before = k && !(rows[k - 1].flags & ROW_END) ? k - 1 : SIZE_MAX;

	for (uint32_t i = 0; i < f->nr_items; i++) {
		const struct item *it = &f->items[i];
		const struct op *op = &f->ops[it->op];
		uint64_t o = start + op->off, n = start + it->new_off;
		size_t a, c;

		if (it->added)
			continue;	/* the row of the block it ends */
		a = first_row_from(rows, k, j, o);
		if (a == j || rows[a].addr != o) {
			c = a > k ? a - 1 : before;
			if (c != SIZE_MAX && c != *last) {
				push_row(out, &rows[c], n);
				*last = c;
			}
		}
		for (; a < j && rows[a].addr < o + op->len; a++) {
			push_row(out, &rows[a], n + (rows[a].addr - o));
			*last = a;
		}
	}
	/* what follows f, up to the next row, was covered by f's last row */
	if (j < nr && rows[j].addr > end && *last != j - 1) {
		push_row(out, &rows[j - 1], end);
		*last = j - 1;
	}
}

/* Does the sequence hold a row of a moved function? */
static bool seq_moves(struct opt *opt, const struct row *rows, size_t nr)
{
	for (size_t k = 0; k < nr; k++)
		if (!(rows[k].flags & ROW_END) && moved_func_containing(opt, rows[k].addr))
			return true;
	return false;
}

/* The sequence's rows with those of moved functions remapped; NULL or what is wrong */
static const char *remap_seq(struct opt *opt, const struct row *rows, size_t nr,
			     struct rowvec *out)
{
	size_t k = 0, last = SIZE_MAX;

	out->nr = 0;
	for (size_t i = 1; i < nr; i++)
		if (rows[i].addr < rows[i - 1].addr)
			return "a sequence whose addresses go back";
	while (k < nr) {
		struct func *f = rows[k].flags & ROW_END ? NULL :
				 moved_func_containing(opt, rows[k].addr);
		size_t j = k;

		/*
		 * The padding after f keeps its rows (a sequence of .text.unlikely may
		 * start there): --update-debug never lets new code grow into it
		 */
		if (!f || rows[k].addr >= func_elf_end(f)) {
			push_row(out, &rows[k], rows[k].addr);
			last = k++;
			continue;
		}
		while (j < nr && !(rows[j].flags & ROW_END) && rows[j].addr < func_elf_end(f))
			j++;
		remap_func(f, rows, nr, k, j, out, &last);
		k = j;
	}
	return NULL;
}

/* A program in the new section */
struct prog_move {
	uint64_t old_off, old_body, old_end, new_off;
	bool rewritten;
	size_t first_place, nr_places;	/* its sequences' set_address places, rewritten */
};

/* The old and the new place of a set_address operand, and the value it changed by */
struct place_move {
	uint64_t old, new;
	int64_t delta;
};

struct line_rewrite {
	struct opt *opt;
	const unsigned char *data;	/* the old .debug_line */
	uint64_t size;
	struct dwarf_buf out;
	struct prog_move *progs;
	size_t nr_progs, progs_cap;
	struct place_move *places;
	size_t nr_places, places_cap;
	/* scratch: one program's rows and sequences, one sequence remapped */
	struct row *rows;
	size_t nr_rows, rows_cap;
	struct seq *seqs;
	size_t nr_seqs, seqs_cap;
	struct rowvec seq_out;
	size_t nr_rewritten;
};

/* p's sequences encoded again with moved rows remapped, after its header as it was */
static const char *rewrite_prog(struct line_rewrite *lr, const struct prog *p,
				struct prog_move *pm)
{
	uint64_t start = lr->out.nr, len_at = start + (p->offset_size == 8 ? 4 : 0);
	const char *why;

	dwarf_put_bytes(&lr->out, lr->data + p->off, p->body - p->off);
	pm->first_place = lr->nr_places;
	for (size_t s = 0; s < lr->nr_seqs; s++) {
		const struct seq *sq = &lr->seqs[s];
		struct place_move pl = { .old = sq->set_addr_place };
		uint64_t place;

		why = remap_seq(lr->opt, lr->rows + sq->first, sq->nr, &lr->seq_out);
		if (why)
			return why;
		encode_seq(p, &lr->out, lr->seq_out.v, lr->seq_out.nr, &place);
		pl.new = place;
		if (pl.old)
			pl.delta = (int64_t)(lr->seq_out.v[0].addr - get_u64(lr->data + pl.old));
		GROW(lr->places, lr->places_cap, lr->nr_places + 1);
		lr->places[lr->nr_places++] = pl;
	}
	pm->nr_places = lr->nr_places - pm->first_place;
	dwarf_put_offset(lr->out.p + len_at, p->offset_size,
		   lr->out.nr - start - (p->offset_size == 8 ? 12 : 4));
	return NULL;
}

/* Each program copied, or rewritten if it has rows in moved code; *why and *at if not */
static int rewrite_progs(struct line_rewrite *lr, const char **why_out, uint64_t *at)
{
	uint64_t off = 0;

	while (off < lr->size) {
		struct prog p;
		struct prog_move pm = { .old_off = off, .new_off = lr->out.nr };
		const char *why = read_prog(lr->data, lr->size, off, &p);
		bool moves = false;

		lr->nr_rows = lr->nr_seqs = 0;
		if (!why)
			why = decode_prog(lr->data, &p, &lr->rows, &lr->nr_rows, &lr->rows_cap,
					  &lr->seqs, &lr->nr_seqs, &lr->seqs_cap);
		for (size_t s = 0; !why && s < lr->nr_seqs && !moves; s++)
			moves = seq_moves(lr->opt, lr->rows + lr->seqs[s].first, lr->seqs[s].nr);
		if (!why && moves) {
			why = rewrite_prog(lr, &p, &pm);
			pm.rewritten = true;
			lr->nr_rewritten++;
		} else if (!why) {
			dwarf_put_bytes(&lr->out, lr->data + p.off, p.end - p.off);
		}
		if (why) {
			*why_out = why;
			*at = off;
			return -EINVAL;
		}
		pm.old_body = p.body;
		pm.old_end = p.end;
		GROW(lr->progs, lr->progs_cap, lr->nr_progs + 1);
		lr->progs[lr->nr_progs++] = pm;
		off = p.end;
	}
	return 0;
}

/* The program starting at old offset off, NULL if none does */
static const struct prog_move *prog_at(const struct line_rewrite *lr, uint64_t off)
{
	size_t lo = 0, hi = lr->nr_progs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (lr->progs[mid].old_end <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < lr->nr_progs && lr->progs[lo].old_off <= off ? &lr->progs[lo] : NULL;
}

/* Where the value of DW_AT_stmt_list of u's first DIE is, and its size; 0 none */
static const char *find_stmt_list(const unsigned char *info, struct dwarf_abbrevs *ab,
				  const unsigned char *abbrev, uint64_t abbrev_size,
				  const struct dwarf_unit *u, uint64_t *place, unsigned int *size)
{
	struct dwarf_reader r = { .p = info + u->die_off, .end = info + u->end };
	uint64_t code = dwarf_get_uleb(&r);
	const struct dwarf_abbrev *a;
	const char *why;

	*place = 0;
	if (!code)
		return NULL;
	why = dwarf_read_abbrevs(ab, abbrev, abbrev_size, u->abbrev_off);
	if (why)
		return why;
	a = dwarf_abbrev_of(ab, code);
	if (!a)
		return "no abbreviation for its first DIE";
	for (uint32_t k = 0; k < a->nr; k++) {
		const struct dwarf_abbrev_attr *at = &ab->attrs[a->first + k];

		if (at->at == 0x10) {	/* DW_AT_stmt_list */
			if (at->form != 0x17 && at->form != 0x06 && at->form != 0x07)
				return "DW_AT_stmt_list of a form kbolt does not know";
			*place = r.p - info;
			*size = at->form == 0x17 ? u->offset_size : at->form == 0x06 ? 4 : 8;
			return NULL;
		}
		if (!dwarf_skip_form(&r, at->form, u))
			return "attribute of a form kbolt does not know";
	}
	return NULL;
}

/* Every unit's DW_AT_stmt_list, moved with its program, added to ps; NULL or what is wrong */
static const char *patch_units(struct line_rewrite *lr, const unsigned char *info,
			       uint64_t size, const unsigned char *abbrev, uint64_t abbrev_size,
			       struct dwarf_patches *ps, uint64_t *at)
{
	struct dwarf_abbrevs ab = { .off = UINT64_MAX };
	const char *why = NULL;
	uint64_t off = 0;

	while (!why && off < size) {
		struct dwarf_unit u;
		const struct prog_move *pm;
		uint64_t place = 0, old;
		unsigned int psize;

		*at = off;
		why = dwarf_read_unit(info, size, off, &u);
		if (!why)
			why = find_stmt_list(info, &ab, abbrev, abbrev_size, &u, &place, &psize);
		off = u.end;
		if (why || !place)
			continue;
		old = dwarf_get_offset(info + place, psize);
		pm = prog_at(lr, old);
		if (!pm || pm->old_off != old)
			why = "DW_AT_stmt_list that is no line program's start";
		else if (psize == 4 && pm->new_off > UINT32_MAX)
			why = "a 32-bit DW_AT_stmt_list past 4 GiB";
		else if (pm->new_off != old)
			dwarf_patch_add(ps, place, psize, old, pm->new_off, PATCH_OFFSET);
	}
	dwarf_abbrevs_free(&ab);
	return why;
}

static int cmp_place(const void *x, const void *y)
{
	const struct place_move *p = x, *q = y;

	return p->old < q->old ? -1 : p->old > q->old;
}

/*
 * .rela.debug_line for the new section: relocations in copied bytes move with them,
 * those of a rewritten program's set_address operands go to the new ones (their
 * addends following the address), any other in a rewritten body is dropped
 */
static void rebuild_line_relocs(struct line_rewrite *lr, struct kmeta_image *img,
				struct kmeta_sec *line, struct output_secs *out)
{
	struct kmeta_sec *rs = dwarf_rela_of(img, line);
	uint64_t rsize = 0, nr = 0;
	unsigned char *r = rs ? dwarf_file_bytes(img, rs, &rsize) : NULL, *n;

	if (!r)
		return;
	qsort(lr->places, lr->nr_places, sizeof(*lr->places), cmp_place);
	n = xmalloc(rsize ? rsize : 1);
	for (uint64_t e = 0; e + 24 <= rsize; e += 24) {
		uint64_t place = get_u64(r + e);
		const struct prog_move *pm = prog_at(lr, place);
		const struct place_move *pl;
		struct place_move key = { .old = place };

		if (!pm)
			continue;
		memcpy(n + nr * 24, r + e, 24);
		if (!pm->rewritten || place < pm->old_body) {
			put_u64(n + nr * 24, place - pm->old_off + pm->new_off);
			nr++;
			continue;
		}
		pl = search_array(&key, lr->places, lr->nr_places, sizeof(key), cmp_place);
		if (!pl)
			continue;
		put_u64(n + nr * 24, pl->new);
		put_u64(n + nr * 24 + 16, get_u64(r + e + 16) + pl->delta);
		nr++;
	}
	output_secs_add(out, rs->idx, n, nr * 24);
}

static void line_rewrite_free(struct line_rewrite *lr)
{
	free(lr->out.p);
	free(lr->progs);
	free(lr->places);
	free(lr->rows);
	free(lr->seqs);
	free(lr->seq_out.v);
}

int dwarf_line_rewrite(struct opt *opt, struct output_secs *out, struct dwarf_patches *ps)
{
	struct kmeta_image *img = opt->img;
	struct kmeta_sec *line = kmeta_find_sec_by_name(img, ".debug_line");
	struct kmeta_sec *info = kmeta_find_sec_by_name(img, ".debug_info");
	struct kmeta_sec *abbrev = kmeta_find_sec_by_name(img, ".debug_abbrev");
	struct line_rewrite lr = { .opt = opt };
	uint64_t info_size = 0, abbrev_size = 0, at = 0;
	unsigned char *info_p, *abbrev_p;
	const char *why;
	int err;

	if (!line || !info || !abbrev || !opt->nr_moved_lines)
		return 0;	/* nothing to update, or dwarf_line_keep() kept every function */
	lr.data = dwarf_file_bytes(img, line, &lr.size);
	info_p = dwarf_file_bytes(img, info, &info_size);
	abbrev_p = dwarf_file_bytes(img, abbrev, &abbrev_size);
	if (!lr.data || !info_p || !abbrev_p)
		return -EINVAL;
	err = rewrite_progs(&lr, &why, &at);
	if (err)
		pr_err(img->path, ".debug_line: the line program at 0x%" PRIx64 ": %s", at, why);
	if (!err && lr.nr_rewritten) {
		why = patch_units(&lr, info_p, info_size, abbrev_p, abbrev_size, ps, &at);
		if (why) {
			pr_err(img->path, ".debug_info: the unit at 0x%" PRIx64 ": %s", at, why);
			err = -EINVAL;
		}
		if (!err) {
			rebuild_line_relocs(&lr, img, line, out);
			output_secs_add(out, line->idx, lr.out.p, lr.out.nr);
			lr.out.p = NULL;
		}
	}
	line_rewrite_free(&lr);
	return err;
}

/* Why kbolt cannot update img's line table, NULL if it can (or there is none) */
static const char *check_line_table(struct opt *opt, uint64_t *at, const char **sec)
{
	static const char *const names[] = { ".debug_line", ".debug_info", ".debug_abbrev" };
	struct kmeta_sec *s[ARRAY_SIZE(names)];
	struct line_rewrite lr = { .opt = opt };
	struct dwarf_patches ps = { 0 };
	uint64_t size[ARRAY_SIZE(names)] = { 0 };
	unsigned char *p[ARRAY_SIZE(names)];
	const char *why = NULL;

	*at = 0;
	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		*sec = names[k];
		s[k] = kmeta_find_sec_by_name(opt->img, names[k]);
		if (!s[k])
			return NULL;
		if (s[k]->flags & SHF_COMPRESSED)
			return "a compressed section";
		p[k] = dwarf_file_bytes(opt->img, s[k], &size[k]);
		if (!p[k])
			return "a section past the file's end";
	}
	lr.data = p[0];
	lr.size = size[0];
	*sec = names[0];
	if (!rewrite_progs(&lr, &why, at)) {
		*sec = names[1];
		why = patch_units(&lr, p[1], size[1], p[2], size[2], &ps, at);
	}
	dwarf_patches_free(&ps);
	line_rewrite_free(&lr);
	return why;
}

void dwarf_line_judge(struct opt *opt, struct line_verdict *v)
{
	v->at = 0;
	v->why = check_line_table(opt, &v->at, &v->sec);
}

void dwarf_line_keep(struct opt *opt, const struct line_verdict *v)
{
	if (!v->why)
		return;
	pr_warn(opt->img->path, "%s at 0x%" PRIx64 ": %s: kbolt cannot update the line table, "
		"no function is moved (--update-debug)", v->sec, v->at, v->why);
	for (size_t i = 0; i < opt->nr_funcs; i++)
		if (opt->funcs[i].skip == SKIP_NONE)
			skip_func(opt, &opt->funcs[i], SKIP_DEBUG_INFO, opt->funcs[i].sym->addr);
}
