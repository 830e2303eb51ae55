// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt optimize --update-debug: the code addresses that .debug_info gives inside
 * moved functions.  Every DIE of every unit is read (a reader of abbreviations and
 * forms of its own, DWARF 5 section 7.5, as line.c's), and each address inside a
 * moved function goes where its code went:
 *
 *   a point   DW_AT_entry_pc, DW_AT_call_pc, and DW_AT_low_pc of a DIE without a
 *             range (DW_TAG_label): the new place of the instruction it names (of
 *             the jmp's target for a jmp the layout removed);
 *   an end    DW_AT_call_return_pc, and DW_AT_low_pc of DWARF 4's
 *             DW_TAG_GNU_call_site (GCC's return address): the new end of the
 *             instruction that ended there (a call, or a tail call's jmp);
 *   a range   DW_AT_low_pc with DW_AT_high_pc, or DW_AT_ranges: the new places of
 *             the instructions it held, with a jmp kbolt added after one of them
 *             (it ends that block, and has its line row too).
 *
 * A unit's own DIE is left alone (its DW_AT_low_pc is the base of its lists; its
 * ranges hold whole functions, which keep their address and size).  A point or a
 * range that stays one range is patched in place, same form and size, with the addend
 * of its relocation (dwarf_patches_apply()); a range list that changes is written
 * again in a new contribution at the end of .debug_rnglists (DWARF 5) or
 * .debug_ranges (DWARF 4), with relocations for its addresses, and DW_AT_ranges
 * patched to it.  A low/high pair that the layout splits becomes a DW_AT_ranges of a
 * new list in the same bytes, through a twin of its abbreviation (split_pair()).
 * The location lists of the DIEs' variables are loc.c's, on the same walk; where old
 * code went, which both need, is info_walk.c's.
 *
 * dwarf_info_check(), before the layouts, reads the same and keeps every function
 * where an address is not an instruction boundary kbolt can map; an attribute of a
 * form it does not know keeps every function (a warning).  Hand-written for the same
 * reason as line.c: libdw reads DIEs, but neither says where an attribute's bytes
 * are nor writes any; the proof reads the result through libdw (kbolt/verify/dwarf.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../lib/output.h"
#include "addr.h"
#include "dwarf.h"
#include "info_walk.h"
#include "loc.h"

/* --- reading a DIE's addresses --- */

static bool is_addr_attr(uint64_t at)
{
	return at == AT_LOW_PC || at == AT_HIGH_PC || at == AT_ENTRY_PC || at == AT_RANGES ||
	       at == AT_CALL_RETURN_PC || at == AT_CALL_PC;
}

/* The bases of a unit's indexed forms, in its own DIE (DWARF 5 section 7.5.5) */
static bool is_base_attr(uint64_t at)
{
	return at == AT_ADDR_BASE || at == AT_RNGLISTS_BASE || at == AT_LOCLISTS_BASE;
}

static bool is_unit_tag(uint64_t tag)
{
	return tag == TAG_COMPILE_UNIT || tag == TAG_PARTIAL_UNIT || tag == TAG_SKELETON_UNIT;
}

/* The value of an address attribute at r; NULL or why kbolt cannot take its form */
static const char *read_addr_attr(struct info_walk *w, struct dwarf_reader *r,
				  struct addr_attr *a)
{
	const unsigned char *p = r->p;

	a->place = p - w->info;
	a->indexed = false;
	switch (a->form) {
	case FORM_ADDRX1: case FORM_ADDRX2: case FORM_ADDRX3: case FORM_ADDRX4:
		a->size = a->form - FORM_ADDRX1 + 1;
		a->index = dwarf_get_fixed(r, a->size);
		a->indexed = true;
		break;
	case FORM_ADDRX:
	case FORM_RNGLISTX:
		a->index = dwarf_get_uleb(r);
		a->size = r->p - p;
		a->indexed = true;
		break;
	case FORM_ADDR:
		a->size = w->u.addr_size;
		break;
	case FORM_DATA1: a->size = 1; break;
	case FORM_DATA2: a->size = 2; break;
	case FORM_DATA4: a->size = 4; break;
	case FORM_DATA8: a->size = 8; break;
	case FORM_SEC_OFFSET:
		a->size = w->u.offset_size;
		break;
	case FORM_UDATA:
		a->value = dwarf_get_uleb(r);
		a->size = r->p - p;
		return r->bad ? "a DIE past its unit's end" : NULL;
	default:
		return "a code address of a form kbolt does not take";
	}
	if (a->indexed)		/* its value: addr_resolve_die(), when the bases are known */
		return r->bad ? "a DIE past its unit's end" :
		       (a->at == AT_RANGES) != (a->form == FORM_RNGLISTX) || a->at == AT_HIGH_PC ?
		       "a code address of a form kbolt does not take" : NULL;
	if (a->at == AT_HIGH_PC ? a->form == FORM_SEC_OFFSET :
	    a->at == AT_RANGES ? a->form == FORM_ADDR :
	    a->form != FORM_ADDR)
		return "a code address of a form kbolt does not take";
	a->value = dwarf_get_fixed(r, a->size);
	return r->bad ? "a DIE past its unit's end" : NULL;
}

/* --- range lists --- */

/* The spans of the list at off of src, of a unit of version with base; NULL or why not */
static const char *read_list(struct info_walk *w, struct list_src *src, uint64_t off,
			     struct spans *out)
{
	struct dwarf_reader r = { .p = src->data + off, .end = src->data + src->size };
	unsigned int as = w->u.addr_size;
	uint64_t base = w->base, max = as == 8 ? UINT64_MAX : UINT32_MAX;

	out->nr = 0;
	addr_list_begin(w);
	if (!src->data || off >= src->size)
		return "a range list past its section's end";
	for (;;) {
		uint64_t lo, hi, kind;
		const char *why = NULL;

		if (w->u.version < 5) {		/* .debug_ranges: pairs, a base selection */
			lo = dwarf_get_fixed(&r, as);
			hi = dwarf_get_fixed(&r, as);
			if (r.bad)
				return "a range list past its section's end";
			if (!lo && !hi)
				return NULL;
			if (lo == max)
				base = hi;
			else
				info_add_span(out, base + lo, base + hi);
			continue;
		}
		kind = dwarf_get_fixed(&r, 1);
		switch (kind) {
		case RLE_END:
			return r.bad ? "a range list past its section's end" : NULL;
		case RLE_OFFSET_PAIR:
			lo = dwarf_get_uleb(&r);
			hi = dwarf_get_uleb(&r);
			info_add_span(out, base + lo, base + hi);
			break;
		case RLE_BASE:
			base = dwarf_get_fixed(&r, as);
			break;
		case RLE_START_END:
			lo = dwarf_get_fixed(&r, as);
			info_add_span(out, lo, dwarf_get_fixed(&r, as));
			break;
		case RLE_START_LENGTH:
			lo = dwarf_get_fixed(&r, as);
			info_add_span(out, lo, lo + dwarf_get_uleb(&r));
			break;
		case RLE_BASE_ADDRESSX:
			why = addr_list_slot(w, dwarf_get_uleb(&r), &base);
			break;
		case RLE_STARTX_ENDX:
			why = addr_list_slot(w, dwarf_get_uleb(&r), &lo);
			if (!why)
				why = addr_list_slot(w, dwarf_get_uleb(&r), &hi);
			if (!why)
				info_add_span(out, lo, hi);
			break;
		case RLE_STARTX_LENGTH:
			why = addr_list_slot(w, dwarf_get_uleb(&r), &lo);
			if (!why)
				info_add_span(out, lo, lo + dwarf_get_uleb(&r));
			break;
		default:
			return "a range list entry kind kbolt does not take";
		}
		if (why)
			return why;
		if (r.bad)
			return "a range list past its section's end";
	}
}

/* spans written as a new list of src; its offset in *off; NULL or what is wrong */
static const char *write_list(struct info_walk *w, struct list_src *src,
			      const struct spans *sp, uint64_t *off)
{
	const char *why = NULL;

	*off = info_new_lists_base(src) + src->out.nr;
	info_list_start(src, *off);
	if (!src->v5) {		/* a base selection entry of 0, then absolute pairs */
		dwarf_put_fixed(&src->out, w->u.addr_size == 8 ? UINT64_MAX : UINT32_MAX,
				w->u.addr_size);
		dwarf_put_fixed(&src->out, 0, w->u.addr_size);
	}
	for (size_t k = 0; k < sp->nr && !why; k++) {
		uint64_t pos = info_new_lists_base(src) + src->out.nr + (src->v5 ? 1 : 0);

		if (src->v5)
			dwarf_put_byte(&src->out, RLE_START_LENGTH);
		why = info_put_list_addr(w, src, pos, sp->v[k].lo);
		if (why)
			break;
		if (src->v5)
			dwarf_put_uleb(&src->out, sp->v[k].hi - sp->v[k].lo);
		else
			why = info_put_list_addr(w, src, pos + w->u.addr_size, sp->v[k].hi);
	}
	if (src->v5)
		dwarf_put_byte(&src->out, RLE_END);
	else
		for (int k = 0; k < 2; k++)	/* the end: a pair of zeros */
			dwarf_put_fixed(&src->out, 0, w->u.addr_size);
	return why;
}

/* --- the DIEs --- */

/* The new value of point a (end: the end of an instruction) */
static uint64_t point_new(struct info_walk *w, const struct addr_attr *a, bool end)
{
	struct func *f = a->value ? moved_func_containing(w->opt, a->value - end) : NULL;

	if (!f)
		return a->value;
	return end ? info_new_end(w, f, a->value) : info_new_point(f, a->value);
}

/* A point (end: the end of an instruction); NULL or what is wrong */
static const char *do_point(struct info_walk *w, const struct addr_attr *a, bool end)
{
	uint64_t new;

	if (!a || (!a->value && !a->indexed))
		return NULL;
	if (!w->rewrite) {
		info_check_place(w, find_func_containing(w->opt, a->value - end), a->value,
				 end ? PLACE_END : PLACE_START);
		addr_check_point(w, a, end);
		return NULL;
	}
	new = point_new(w, a, end);
	if (a->indexed)
		return addr_use(w, a, new);
	if (new != a->value)
		dwarf_patch_add(w->patches, a->place, a->size, a->value, new, PATCH_ADDR);
	return NULL;
}

/* --- a pair that the layout splits --- */

static unsigned int uleb_size(uint64_t v)
{
	unsigned int n = 1;

	while (v >>= 7)
		n++;
	return n;
}

/* size bytes of filler: a DW_FORM_block1 of size - 1 zero bytes; nothing if size is 0 */
static void put_filler(unsigned char *p, unsigned int size)
{
	if (!size)
		return;
	p[0] = size - 1;
	memset(p + 1, 0, size - 1);
}

/* How a pair's DIE is laid out again with code of new_len bytes in place of old_len */
struct pair_slots {
	unsigned int by;		/* what the bytes before the first slot move up */
	uint64_t low_at, high_at;	/* the slots' new starts */
	unsigned int low_fill, high_fill;	/* filler bytes after the offset, in high */
};

static const char *pair_slots(const struct info_walk *w, unsigned int old_len,
			      unsigned int new_len,
			      const struct addr_attr *low, const struct addr_attr *high,
			      struct pair_slots *ps)
{
	bool low_first = low->place < high->place;
	unsigned int low_size = low->size - (low_first ? new_len - old_len : 0);
	unsigned int high_size = high->size - (low_first ? 0 : new_len - old_len);

	ps->by = new_len - old_len;
	if (new_len - old_len > (low_first ? low->size : high->size))
		return "no room for DW_AT_ranges where DW_AT_low_pc was";
	ps->low_at = low->place + (low_first ? ps->by : 0);
	ps->high_at = high->place + (low_first ? 0 : ps->by);
	if (low_size >= w->u.offset_size) {
		ps->low_fill = low_size - w->u.offset_size;
		ps->high_fill = high_size;
	} else if (low_first && low->place + low->size == high->place &&
		   low_size + high_size >= w->u.offset_size) {
		/* an index (DW_FORM_addrx): the offset takes DW_AT_high_pc's bytes too */
		ps->low_fill = low_size + high_size - w->u.offset_size;
		ps->high_fill = 0;
	} else {
		return "no room for DW_AT_ranges where DW_AT_low_pc was";
	}
	return NULL;
}

/* The abbreviation of the pair's twin: DW_AT_ranges and fillers for the pair */
static void put_twin(struct info_walk *w, const struct dwarf_abbrev *a, uint64_t code,
		     const struct pair_slots *ps)
{
	struct dwarf_buf *b = &w->twin_bytes;

	dwarf_put_uleb(b, code);
	dwarf_put_uleb(b, a->tag);
	dwarf_put_byte(b, a->children);
	for (uint32_t k = 0; k < a->nr; k++) {
		const struct dwarf_abbrev_attr *at = &w->ab.attrs[a->first + k];

		if (at->at == AT_LOW_PC) {
			dwarf_put_uleb(b, AT_RANGES);
			dwarf_put_uleb(b, FORM_SEC_OFFSET);
		}
		if ((at->at == AT_LOW_PC && ps->low_fill) ||
		    (at->at == AT_HIGH_PC && ps->high_fill)) {
			dwarf_put_uleb(b, AT_KBOLT_FILLER);
			dwarf_put_uleb(b, FORM_BLOCK1);
		}
		if (at->at == AT_LOW_PC || at->at == AT_HIGH_PC)
			continue;
		dwarf_put_uleb(b, at->at);
		dwarf_put_uleb(b, at->form);
		if (at->form == FORM_IMPLICIT_CONST)
			dwarf_put_sleb(b, at->implicit);
	}
	dwarf_put_uleb(b, 0);
	dwarf_put_uleb(b, 0);
}

/* The bytes of a twin's code: ULEB128, never fewer than the old code's */
static unsigned int twin_len(uint64_t code, unsigned int old_len)
{
	return uleb_size(code) < old_len ? old_len : uleb_size(code);
}

/*
 * The code of the twin of old_code in the current table for the layout of this pair
 * (its fillers), made if new
 */
static uint64_t twin_code(struct info_walk *w, uint64_t old_code, unsigned int old_len,
			  const struct addr_attr *low, const struct addr_attr *high,
			  struct pair_slots *ps, const char **why)
{
	uint64_t code = w->ab.nr_codes;	/* after the table's highest */
	struct twin *t;

	for (size_t k = w->nr_twins; k-- > 0 && w->twins[k].table == w->ab.off;) {
		t = &w->twins[k];
		if (t->old_code == old_code &&
		    !pair_slots(w, old_len, twin_len(t->new_code, old_len), low, high, ps) &&
		    ps->low_fill == t->low_fill && ps->high_fill == t->high_fill) {
			*why = NULL;
			return t->new_code;
		}
		if (t->new_code >= code)
			code = t->new_code + 1;
	}
	*why = pair_slots(w, old_len, twin_len(code, old_len), low, high, ps);
	if (*why)
		return code;
	GROW(w->twins, w->twins_cap, w->nr_twins + 1);
	t = &w->twins[w->nr_twins++];
	*t = (struct twin){ .table = w->ab.off, .old_code = old_code, .new_code = code,
			    .at = w->twin_bytes.nr, .low_fill = ps->low_fill,
			    .high_fill = ps->high_fill };
	put_twin(w, &w->ab.by_code[old_code], code, ps);
	t->len = w->twin_bytes.nr - t->at;
	return code;
}

/*
 * The pair of d, whose code the layout split, made a DW_AT_ranges of a new list, in
 * place: d's abbreviation becomes its twin, whose DW_AT_ranges (DW_FORM_sec_offset)
 * takes DW_AT_low_pc's place and a filler the rest of the pair's bytes, so that no DIE
 * moves.  A twin's code may need one more ULEB byte than the old one: the bytes
 * between the code and the first of the pair then move up by one (their relocations
 * with them), and that slot is a byte shorter.
 */
static const char *split_pair(struct info_walk *w, const struct die *d,
			      const struct addr_attr *low, const struct addr_attr *high)
{
	struct list_src *src = w->u.version >= 5 ? &w->rnglists : &w->ranges;
	unsigned char *die = (unsigned char *)w->info + d->off;
	struct dwarf_reader r = { .p = die, .end = w->info + w->u.end };
	uint64_t old_code = dwarf_get_uleb(&r), code, off, first;
	unsigned int old_len = r.p - die;
	struct pair_slots ps;
	struct dwarf_patch *p;
	const char *why;

	if (!src->sec)
		return "a range the layout splits, and no range list section for it";
	code = twin_code(w, old_code, old_len, low, high, &ps, &why);
	if (why)
		return why;
	why = write_list(w, src, &w->new, &off);
	if (why)
		return why;
	if (!info_fits(off, w->u.offset_size))
		return "a new range list past 4 GiB";
	first = low->place < high->place ? low->place : high->place;
	memmove(die + old_len + ps.by, die + old_len, first - (d->off + old_len));
	dwarf_shift_add(w->patches, d->off + old_len, first, ps.by);
	dwarf_put_uleb_sized(die, code, old_len + ps.by);
	put_filler((unsigned char *)w->info + ps.low_at + w->u.offset_size, ps.low_fill);
	put_filler((unsigned char *)w->info + ps.high_at, ps.high_fill);
	p = dwarf_patch_add(w->patches, low->place, w->u.offset_size, low->value, off,
			    PATCH_RETYPE);
	info_list_ref(w, src, p);
	p->new_place = ps.low_at;
	p->info = ELF64_R_INFO(src->sym, w->u.offset_size == 8 ? R_X86_64_64 : R_X86_64_32);
	if (high->form == FORM_ADDR)
		dwarf_patch_add(w->patches, high->place, high->size, high->value, 0,
				PATCH_DROP);
	return NULL;
}

/* What becomes of a pair's range in the layout */
enum pair_fate {
	PAIR_SAME,	/* nothing of it moved (or it is empty) */
	PAIR_ONE,	/* it is one range, *n, in the place of the old one */
	PAIR_SPLIT,	/* it becomes a list (w->new) */
};

static enum pair_fate pair_map(struct info_walk *w, const struct addr_attr *low,
			       const struct addr_attr *high, struct span *n)
{
	uint64_t lo = low->value, hi = high->form == FORM_ADDR ? high->value : lo + high->value;

	w->old.nr = 0;
	*n = (struct span){ lo, hi };
	if (hi <= lo)
		return PAIR_SAME;		/* empty: nothing to map */
	info_add_span(&w->old, lo, hi);
	if (!info_map_spans(w, &w->old, &w->new))
		return PAIR_SAME;
	/* a ULEB128 high_pc might not fit where it was: a list of one range */
	if (w->new.nr > 1 || high->form == FORM_UDATA ||
	    (w->new.nr && !info_fits(w->new.v[0].hi - w->new.v[0].lo, high->size)))
		return PAIR_SPLIT;
	if (w->new.nr) {
		*n = w->new.v[0];
	} else {	/* all of it went (a removed jmp): empty, where it was */
		struct func *f = moved_func_containing(w->opt, lo);

		n->lo = n->hi = f ? info_new_point(f, lo) : lo;
	}
	return PAIR_ONE;
}

/*
 * dwarf_info_check(): keep the function of [lo, hi), a pair that cannot become a list,
 * unless the pair holds all of it (a subprogram's, which never changes)
 */
static void keep_part(struct info_walk *w, uint64_t lo, uint64_t hi)
{
	struct func *f = find_func_containing(w->opt, lo);

	if (info_may_move(f) && (lo != f->sym->addr || hi < func_elf_end(f)))
		skip_func(w->opt, f, SKIP_DEBUG_INFO, lo);
}

/* A DW_AT_low_pc/DW_AT_high_pc pair; NULL or what is wrong */
static const char *do_pair(struct info_walk *w, const struct die *d, const struct addr_attr *low,
		    const struct addr_attr *high)
{
	uint64_t lo = low->value, hi = high->form == FORM_ADDR ? high->value : lo + high->value;
	enum pair_fate fate;
	struct span n;

	if (!w->rewrite) {
		w->old.nr = 0;
		if (hi <= lo)
			return NULL;
		info_add_span(&w->old, lo, hi);
		info_check_spans(w, &w->old, PLACE_START);
		if (low->indexed && !addr_pair_can_split(w, low, high))
			keep_part(w, lo, hi);
		return NULL;
	}
	fate = pair_map(w, low, high, &n);
	/* an index whose slot another user's value holds: a list of its own */
	if (fate == PAIR_SPLIT || (!addr_holds(w, low, n.lo) && hi > lo))
		return split_pair(w, d, low, high);	/* PAIR_SAME: w->new is w->old */
	if (fate == PAIR_SAME)
		return NULL;
	if (low->indexed)
		;	/* its slot holds n.lo */
	else if (n.lo != lo)
		dwarf_patch_add(w->patches, low->place, low->size, lo, n.lo, PATCH_ADDR);
	if (high->form == FORM_ADDR && n.hi != hi)
		dwarf_patch_add(w->patches, high->place, high->size, hi, n.hi, PATCH_ADDR);
	else if (high->form != FORM_ADDR && n.hi - n.lo != hi - lo)
		dwarf_patch_add(w->patches, high->place, high->size, hi - lo, n.hi - n.lo,
				PATCH_ADDR);
	return NULL;
}

/* A DW_AT_ranges */
static const char *do_list(struct info_walk *w, const struct addr_attr *ranges)
{
	struct list_src *src = w->u.version >= 5 ? &w->rnglists : &w->ranges;
	const char *why = read_list(w, src, ranges->value, &w->old);
	struct list_move *m;
	uint64_t off;

	if (why || !w->old.nr)
		return why;
	if (!w->rewrite) {
		info_check_spans(w, &w->old, PLACE_START);
		return NULL;
	}
	/* a slot of .debug_addr it names taking another value: written again too */
	if (!info_map_spans(w, &w->old, &w->new) && !addr_list_changed(w))
		return NULL;
	m = info_find_move(src, ranges->value);
	if (!m) {
		why = write_list(w, src, &w->new, &off);
		if (why)
			return why;
		m = info_add_move(src, ranges->value, off, 0);
	}
	if (ranges->indexed) {
		addr_table_entry(src, ranges, w->rnglists_base, m->new, w->u.offset_size);
		return NULL;
	}
	if (!info_fits(m->new, ranges->size))
		return "a new range list past 4 GiB";
	info_list_ref(w, src, dwarf_patch_add(w->patches, ranges->place, ranges->size,
					      m->old, m->new, PATCH_OFFSET));
	return NULL;
}

/* The points of a DIE besides its DW_AT_low_pc; end: an instruction's end */
static const struct {
	uint16_t at;
	bool end;
} points[] = {
	{ AT_ENTRY_PC, false }, { AT_CALL_PC, false }, { AT_CALL_RETURN_PC, true },
};

static const char *do_die(struct info_walk *w, const struct die *d)
{
	const struct addr_attr *low = info_die_attr(d, AT_LOW_PC);
	const struct addr_attr *high = info_die_attr(d, AT_HIGH_PC);
	const struct addr_attr *ranges = info_die_attr(d, AT_RANGES);
	const char *why;

	if (low && high)
		why = do_pair(w, d, low, high);
	else
		why = do_point(w, low, d->tag == TAG_GNU_CALL_SITE);
	for (size_t k = 0; k < ARRAY_SIZE(points) && !why; k++)
		why = do_point(w, info_die_attr(d, points[k].at), points[k].end);
	if (!why && ranges)
		why = do_list(w, ranges);
	return why ? why : dwarf_loc_do(w, d);
}

/*
 * The rewrite's look ahead at a DIE whose code addresses are indexed: what each needs
 * of its slot of .debug_addr (addr.c), before any is patched
 */
static void want_die(struct info_walk *w, const struct die *d)
{
	const struct addr_attr *low = info_die_attr(d, AT_LOW_PC);
	const struct addr_attr *high = info_die_attr(d, AT_HIGH_PC);
	struct span n;

	if (low && high) {
		if (low->indexed && pair_map(w, low, high, &n) != PAIR_SPLIT)
			addr_want(w, low, n.lo, false);
	} else if (low) {
		addr_want(w, low, point_new(w, low, d->tag == TAG_GNU_CALL_SITE), true);
	}
	for (size_t k = 0; k < ARRAY_SIZE(points); k++) {
		const struct addr_attr *a = info_die_attr(d, points[k].at);

		if (a)
			addr_want(w, a, point_new(w, a, points[k].end), true);
	}
}

/* One DIE at r read into d; NULL or what is wrong */
static const char *read_die(struct info_walk *w, struct dwarf_reader *r, struct die *d,
			    bool *null)
{
	uint64_t code;
	const struct dwarf_abbrev *a;
	const char *why;

	d->off = r->p - w->info;
	d->nr = 0;
	code = dwarf_get_uleb(r);
	*null = !code;
	if (r->bad)
		return "a DIE past its unit's end";
	if (!code)
		return NULL;
	a = dwarf_abbrev_of(&w->ab, code);
	if (!a)
		return "a DIE whose abbreviation code is not in its table";
	d->tag = a->tag;
	for (uint32_t k = 0; k < a->nr; k++) {
		const struct dwarf_abbrev_attr *at = &w->ab.attrs[a->first + k];

		bool list = dwarf_loc_is_list(at->at, at->form, &w->u);
		bool base = is_unit_tag(a->tag) && is_base_attr(at->at) &&
			    at->form == FORM_SEC_OFFSET;

		if ((list || base || is_addr_attr(at->at)) && d->nr == ARRAY_SIZE(d->a))
			return "a DIE with more code addresses and lists than kbolt takes";
		if (list || base) {
			struct addr_attr *x = &d->a[d->nr++];

			*x = (struct addr_attr){ .at = at->at, .form = at->form,
						 .place = r->p - w->info,
						 .size = w->u.offset_size };
			if (at->form == FORM_LOCLISTX) {	/* resolved by addr.c */
				x->index = dwarf_get_uleb(r);
				x->size = r->p - w->info - x->place;
				x->indexed = true;
				continue;
			}
			if (at->form != FORM_SEC_OFFSET)	/* DWARF 2 and 3 */
				x->size = at->form == FORM_DATA8 ? 8 : 4;
			x->value = dwarf_get_fixed(r, x->size);
		} else if (at->form == FORM_LOCLISTX) {
			return "a location list of a form kbolt does not take";
		} else if (is_addr_attr(at->at)) {
			struct addr_attr *x = &d->a[d->nr++];

			x->at = at->at;
			x->form = at->form;
			why = read_addr_attr(w, r, x);
			if (why)
				return why;
		} else if (!dwarf_skip_form(r, at->form, &w->u)) {
			return "an attribute of a form kbolt does not know";
		}
	}
	return r->bad ? "a DIE past its unit's end" : NULL;
}

/* Every DIE of the unit w->u; NULL or what is wrong, at w->why_at */
/*
 * Does the unit whose own DIE is d hold code of a function that may move (the check)
 * or moved?  The rest are not read: a profile layout moves code of a few units.  A
 * unit without ranges is read whole.
 */
static bool unit_matters(struct info_walk *w, const struct die *d)
{
	const struct addr_attr *low = info_die_attr(d, AT_LOW_PC);
	const struct addr_attr *high = info_die_attr(d, AT_HIGH_PC);
	const struct addr_attr *ranges = info_die_attr(d, AT_RANGES);
	struct list_src *src = w->u.version >= 5 ? &w->rnglists : &w->ranges;

	w->old.nr = 0;
	if (ranges && read_list(w, src, ranges->value, &w->old))
		return true;	/* unreadable here: the walk will say so if it matters */
	if (!ranges && low && high)
		info_add_span(&w->old, low->value, high->form == FORM_ADDR ? high->value :
			 low->value + high->value);
	if (!w->old.nr)
		return true;
	for (size_t k = 0; k < w->old.nr; k++) {
		long i = kmeta_func_at_or_before(w->opt->img, w->old.v[k].lo);

		for (size_t j = i < 0 ? 0 : (size_t)i; j < w->opt->nr_funcs &&
		     w->opt->funcs[j].sym->addr < w->old.v[k].hi; j++) {
			/* an alias (the symbol found last at an address): its owner's */
			const struct func *f = &w->opt->funcs[w->opt->func_span[j].owner];

			if (w->rewrite ? f->moved : info_may_move(f))
				return true;
		}
	}
	return false;
}

/*
 * The rewrite's look ahead at the DIEs after the unit's own, at r: what each needs of
 * its slots of .debug_addr, before any is patched (addr.c)
 */
static const char *plan_unit(struct info_walk *w, struct dwarf_reader r)
{
	const char *why = NULL;
	bool null;
	struct die d;

	while (!why && r.p < r.end) {
		why = read_die(w, &r, &d, &null);
		w->why_at = d.off;
		if (!why && !null)
			why = addr_resolve_die(w, &d);
		if (!why && !null)
			want_die(w, &d);
	}
	addr_plan(w);
	return why;
}

static const char *walk_unit(struct info_walk *w)
{
	struct dwarf_reader r = { .p = w->info + w->u.die_off, .end = w->info + w->u.end };
	const char *why = dwarf_read_abbrevs(&w->ab, w->abbrev, w->abbrev_size,
					     w->u.abbrev_off);
	bool first = true, null;
	struct die d;

	w->base = 0;
	addr_unit_begin(w, NULL);
	while (!why && r.p < r.end) {
		why = read_die(w, &r, &d, &null);
		w->why_at = d.off;
		if (why || null)
			continue;
		if (first && is_unit_tag(d.tag)) {	/* its low_pc: the base of lists */
			const struct addr_attr *low = info_die_attr(&d, AT_LOW_PC);

			why = addr_unit_begin(w, &d);
			if (!why)
				why = addr_resolve_die(w, &d);
			if (why)
				continue;
			w->base = low ? low->value : 0;
			if (!unit_matters(w, &d))
				break;
			if (w->rewrite && w->addr_base != UINT64_MAX)
				why = plan_unit(w, r);
		} else {
			why = addr_resolve_die(w, &d);
			if (!why)
				why = do_die(w, &d);
		}
		first = false;
	}
	if (why)
		return why;
	if (!w->rewrite) {
		addr_check_unit_end(w);
		return NULL;
	}
	return addr_unit_end(w);
}

/*
 * The pages of .debug_info read since released, given back every 16 MB (those
 * split_pair() wrote stay): a walk would otherwise keep all 163 MB of 6.1's
 */
static void release_read(struct info_walk *w, uint64_t *released, uint64_t to, bool all)
{
	if (!all && to - *released < (16 << 20))
		return;
	kmeta_release_bytes(w->opt->img, w->info + *released, to - *released);
	*released = to;
}

static const char *walk_units(struct info_walk *w)
{
	const char *why = NULL;
	uint64_t released = 0;

	for (uint64_t off = 0; !why && off < w->info_size; off = w->u.end) {
		release_read(w, &released, off, false);
		w->why_at = off;
		why = dwarf_read_unit(w->info, w->info_size, off, &w->u);
		if (!why && w->rewrite) {
			GROW(w->units, w->units_cap, w->nr_units + 1);
			w->units[w->nr_units++] = (struct unit_ref){
				w->u.abbrev_place, w->u.abbrev_off, w->u.offset_size };
		}
		if (!why && w->u.type != 1 && w->u.type != 3)
			continue;	/* type units, split units: no code addresses */
		if (!why)
			why = walk_unit(w);
	}
	release_read(w, &released, w->info_size, true);
	return why;
}

static void list_src_init(struct info_walk *w, struct list_src *src, const char *name,
			  bool v5)
{
	src->sec = kmeta_find_sec_by_name(w->opt->img, name);
	src->v5 = v5;
	if (!src->sec)
		return;
	src->data = dwarf_file_bytes(w->opt->img, src->sec, &src->size);
	/* 32-bit DWARF, offset_entry_count (DWARF 5 section 7.28, 7.29) */
	src->indexed = v5 && src->size >= 12 && get_u32(src->data) != 0xffffffff &&
		       get_u32(src->data + 8);
	src->rs = dwarf_rela_of(w->opt->img, src->sec);
	src->sym = dwarf_section_symbol(w->opt->img, src->sec);
}

/* Set w up on img's sections; NULL, or why it cannot be read, in *sec */
static const char *walk_init(struct info_walk *w, struct opt *opt, const char **sec)
{
	static const char *const names[] = {
		".debug_info", ".debug_abbrev", ".debug_rnglists", ".debug_ranges",
		".debug_loclists", ".debug_loc", ".debug_addr",
	};
	struct kmeta_sec *s[ARRAY_SIZE(names)];
	uint64_t size;

	w->opt = opt;
	w->ab.off = UINT64_MAX;
	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		*sec = names[k];
		s[k] = kmeta_find_sec_by_name(opt->img, names[k]);
		if (!s[k])
			continue;
		if (s[k]->flags & SHF_COMPRESSED)
			return "a compressed section";
		if (!dwarf_file_bytes(opt->img, s[k], &size))
			return "a section past the file's end";
	}
	*sec = names[0];
	if (!s[0] || !s[1])
		return NULL;
	w->info = dwarf_file_bytes(opt->img, s[0], &w->info_size);
	w->abbrev = dwarf_file_bytes(opt->img, s[1], &w->abbrev_size);
	list_src_init(w, &w->rnglists, names[2], true);
	list_src_init(w, &w->ranges, names[3], false);
	list_src_init(w, &w->loclists, names[4], true);
	list_src_init(w, &w->loc, names[5], false);
	list_src_init(w, &w->addr, names[6], false);	/* its headers: addr.c's */
	return NULL;
}

static void walk_free(struct info_walk *w)
{
	struct list_src *src[] = { &w->rnglists, &w->ranges, &w->loclists, &w->loc, &w->addr };

	free(w->twins);
	free(w->twin_bytes.p);
	free(w->units);
	dwarf_abbrevs_free(&w->ab);
	free(w->op_item);
	free(w->old.v);
	free(w->new.v);
	free(w->locs.v);
	free(w->new_locs.v);
	for (size_t k = 0; k < ARRAY_SIZE(src); k++) {
		free(src[k]->out.p);
		free(src[k]->rela.p);
		free(src[k]->moves);
		free(src[k]->tpatches);
		free(src[k]->starts);
		free(src[k]->refs);
	}
	addr_free(w);
}

void dwarf_info_check(struct opt *opt)
{
	struct info_walk w = { 0 };
	const char *sec, *why = walk_init(&w, opt, &sec);

	if (!why && w.info)
		why = walk_units(&w);
	if (why) {
		pr_warn(opt->img->path, "%s at 0x%" PRIx64 ": %s: kbolt cannot update the code "
			"addresses of the debug information, no function is moved "
			"(--update-debug)", sec, w.why_at, why);
		for (size_t i = 0; i < opt->nr_funcs; i++)
			if (opt->funcs[i].skip == SKIP_NONE)
				skip_func(opt, &opt->funcs[i], SKIP_DEBUG_INFO,
					  opt->funcs[i].sym->addr);
	}
	walk_free(&w);
}

/* Past the abbreviation table at r (its 0 code included); false if it does not end */
static bool skip_table(struct dwarf_reader *r)
{
	for (;;) {
		uint64_t at, form;

		if (!dwarf_get_uleb(r))		/* code */
			return !r->bad;
		dwarf_get_uleb(r);		/* tag */
		dwarf_get_fixed(r, 1);		/* children */
		do {
			at = dwarf_get_uleb(r);
			form = dwarf_get_uleb(r);
			if (form == FORM_IMPLICIT_CONST)
				dwarf_get_sleb(r);
		} while ((at || form) && !r->bad);
		if (r->bad)
			return false;
	}
}

static int cmp_twin(const void *x, const void *y)
{
	const struct twin *p = x, *q = y;

	if (p->table != q->table)
		return p->table < q->table ? -1 : 1;
	return p->new_code < q->new_code ? -1 : p->new_code > q->new_code;
}

static int cmp_move_old(const void *key, const void *x)
{
	uint64_t old = *(const uint64_t *)key;
	const struct list_move *m = x;

	return old < m->old ? -1 : old > m->old;
}

/*
 * .debug_abbrev with each table's twins before its end, and every unit's
 * debug_abbrev_offset patched to its table's new place; NULL or what is wrong
 */
static const char *rebuild_abbrevs(struct info_walk *w, struct output_secs *out)
{
	struct kmeta_sec *sec = kmeta_find_sec_by_name(w->opt->img, ".debug_abbrev");
	struct dwarf_buf b = { 0 };
	struct list_move *starts = NULL;
	size_t nr = 0, cap = 0, t = 0;
	const char *why = NULL;

	if (dwarf_rela_of(w->opt->img, sec))
		return "relocations of .debug_abbrev, which kbolt does not move";
	qsort(w->twins, w->nr_twins, sizeof(*w->twins), cmp_twin);
	for (uint64_t off = 0; off < w->abbrev_size;) {
		struct dwarf_reader r = { .p = w->abbrev + off, .end = w->abbrev + w->abbrev_size };
		uint64_t end;

		if (!skip_table(&r)) {
			free(starts);
			free(b.p);
			w->why_at = off;
			return "an abbreviation table past the section's end";
		}
		end = r.p - w->abbrev;
		GROW(starts, cap, nr + 1);
		starts[nr++] = (struct list_move){ .old = off, .new = b.nr };
		dwarf_put_bytes(&b, w->abbrev + off, end - 1 - off);	/* all but its 0 */
		for (; t < w->nr_twins && w->twins[t].table <= off; t++)
			if (w->twins[t].table == off)
				dwarf_put_bytes(&b, w->twin_bytes.p + w->twins[t].at,
						w->twins[t].len);
		dwarf_put_byte(&b, 0);
		off = end;
	}
	for (size_t k = 0; k < w->nr_units && !why; k++) {
		const struct unit_ref *u = &w->units[k];
		const struct list_move *m = search_array(&u->table, starts, nr, sizeof(*starts),
							 cmp_move_old);

		if (!m)
			why = "a unit whose abbreviations are no table's start";
		else if (m->new != m->old)
			dwarf_patch_add(w->patches, u->place, u->size, m->old, m->new,
					PATCH_OFFSET);
	}
	free(starts);
	if (why) {
		free(b.p);
		return why;
	}
	output_secs_add(out, sec->idx, b.p, b.nr);
	return NULL;
}

/*
 * src's new lists after its old bytes, its tables' entries set anew, and its
 * relocations after the old ones
 */
static void add_lists(struct kmeta_image *img, struct list_src *src, struct output_secs *out)
{
	struct dwarf_buf b = { 0 }, rb = { 0 };
	uint64_t rsize = 0;

	if (!src->out.nr && !src->nr_tpatches)
		return;
	dwarf_put_bytes(&b, src->data, src->size);
	if (src->v5 && src->out.nr) {	/* a header: length, version 5, sizes, offsets */
		dwarf_put_fixed(&b, src->out.nr + 8 + 4 * src->nr_starts, 4);
		dwarf_put_fixed(&b, 5, 2);
		dwarf_put_byte(&b, 8);
		dwarf_put_byte(&b, 0);
		dwarf_put_fixed(&b, src->nr_starts, 4);
		for (size_t k = 0; k < src->nr_starts; k++)	/* from after the header */
			dwarf_put_fixed(&b, src->starts[k] - info_new_lists_base(src) +
					4 * src->nr_starts, 4);
	}
	dwarf_put_bytes(&b, src->out.p, src->out.nr);
	if (src->rs)
		dwarf_put_bytes(&rb, dwarf_file_bytes(img, src->rs, &rsize), rsize);
	addr_patch_tables(src, b.p, rb.p, rb.nr);
	output_secs_add(out, src->sec->idx, b.p, b.nr);
	if (!src->rs)
		return;
	dwarf_put_bytes(&rb, src->rela.p, src->rela.nr);
	output_secs_add(out, src->rs->idx, rb.p, rb.nr);
}

int dwarf_info_rewrite(struct opt *opt, struct output_secs *out, struct dwarf_patches *ps)
{
	struct info_walk w = { .rewrite = true, .patches = ps };
	const char *sec, *why;

	if (!opt->nr_moved_lines)
		return 0;	/* nothing moved */
	why = walk_init(&w, opt, &sec);
	if (!why && w.info)
		why = walk_units(&w);
	if (why) {
		pr_err(opt->img->path, "%s at 0x%" PRIx64 ": %s", sec, w.why_at, why);
		walk_free(&w);
		return -EINVAL;
	}
	if (w.nr_twins)
		why = rebuild_abbrevs(&w, out);
	if (why) {
		pr_err(opt->img->path, ".debug_abbrev at 0x%" PRIx64 ": %s", w.why_at, why);
		walk_free(&w);
		return -EINVAL;
	}
	info_index_new_lists(&w, &w.rnglists);
	info_index_new_lists(&w, &w.loclists);
	add_lists(opt->img, &w.rnglists, out);
	add_lists(opt->img, &w.ranges, out);
	add_lists(opt->img, &w.loclists, out);
	add_lists(opt->img, &w.loc, out);
	why = addr_write(&w, out);
	if (why)
		pr_err(opt->img->path, ".debug_addr: %s", why);
	walk_free(&w);
	if (why)
		return -EINVAL;
	return 0;
}
