// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt optimize --update-debug: the location lists of variables in moved code
 * (DWARF 5 section 2.6.2 and 7.7.3: .debug_loclists; DWARF 4's .debug_loc), read on
 * info.c's walk of the DIEs.  A list with an entry in a moved function is written
 * again at the end of its section, each entry's range mapped as a DW_AT_ranges is
 * (the new places of the instructions it held, with the jmps kbolt added after them),
 * and the DIE's offset patched to it.
 *
 * GCC's location views (-gvariable-location-views, DW_AT_GNU_locviews): the list's
 * bounded entries each have a pair of view numbers, ULEB128s just before the list,
 * that name rows of .debug_line at the entry's start and end address: the location
 * holds from the vb-th row at lo to before the ve-th row at hi.  The rows that start at
 * an instruction keep their order at its new place, so a view names the same row
 * there, and the pieces of an entry keep them where they start at the new place of lo
 * (a piece is cut there) or end at the new place of the instruction at hi.  Where no
 * piece ends there, an empty entry at that place, from view 0 to ve, keeps what the
 * views before ve said.  Every other piece starts and ends at view 0: the location
 * holds at every row of the instructions it covers, as it did.
 *
 * Hand-written for the reason info.c is: libdw reads location lists (the proof
 * does, kbolt/verify/dwarf.c) but neither their views nor where their bytes are, and
 * writes none.
 */
#include <stdlib.h>

#include "../../common/util.h"
#include "addr.h"
#include "info_walk.h"
#include "loc.h"

/* The attributes of class loclist (DWARF 5 section 7.5.5) */
static const uint16_t list_attrs[] = {
	AT_LOCATION, 0x19 /* string_length */, 0x22 /* segment */, 0x2a /* return_addr */,
	0x38 /* data_member_location */, 0x40 /* frame_base */, 0x48 /* static_link */,
	0x4a /* use_location */, 0x4d /* vtable_elem_location */,
};

bool dwarf_loc_is_list(uint64_t at, uint64_t form, const struct dwarf_unit *u)
{
	if (form != FORM_SEC_OFFSET && (form != FORM_LOCLISTX || u->version < 5) &&
	    (u->version >= 4 || (form != FORM_DATA4 && form != FORM_DATA8)))
		return false;	/* most attributes: asked first */
	if (at == AT_GNU_LOCVIEWS)
		return true;
	for (size_t k = 0; k < ARRAY_SIZE(list_attrs); k++)
		if (list_attrs[k] == at)
			return true;
	return false;
}

static struct list_src *loc_src(struct info_walk *w)
{
	return w->u.version >= 5 ? &w->loclists : &w->loc;
}

static void add_entry(struct loc_entries *l, const struct loc_entry *e)
{
	GROW(l->v, l->cap, l->nr + 1);
	l->v[l->nr++] = *e;
}

/*
 * One entry of a list at r (base: the base address, changed by a base entry): its
 * range and expression in *e; *bounded false for an entry without; NULL or why not
 */
static const char *read_entry(struct info_walk *w, struct list_src *src,
			      struct dwarf_reader *r, uint64_t *base, struct loc_entry *e,
			      bool *bounded, bool *end)
{
	unsigned int as = w->u.addr_size;
	uint64_t max = as == 8 ? UINT64_MAX : UINT32_MAX;

	*bounded = *end = false;
	if (!src->v5) {		/* .debug_loc: pairs, a base selection, a 2-byte length */
		e->lo = dwarf_get_fixed(r, as);
		e->hi = dwarf_get_fixed(r, as);
		*end = !e->lo && !e->hi;
		if (*end || e->lo == max) {
			if (!*end)
				*base = e->hi;
			return r->bad ? "a location list past its section's end" : NULL;
		}
		e->lo += *base;
		e->hi += *base;
		e->len = dwarf_get_fixed(r, 2);
	} else {
		const char *why = NULL;

		switch (dwarf_get_fixed(r, 1)) {
		case LLE_END:
			*end = true;
			return r->bad ? "a location list past its section's end" : NULL;
		case LLE_BASE:
			*base = dwarf_get_fixed(r, as);
			return r->bad ? "a location list past its section's end" : NULL;
		case LLE_OFFSET_PAIR:
			e->lo = *base + dwarf_get_uleb(r);
			e->hi = *base + dwarf_get_uleb(r);
			break;
		case LLE_START_END:
			e->lo = dwarf_get_fixed(r, as);
			e->hi = dwarf_get_fixed(r, as);
			break;
		case LLE_START_LENGTH:
			e->lo = dwarf_get_fixed(r, as);
			e->hi = e->lo + dwarf_get_uleb(r);
			break;
		case LLE_BASE_ADDRESSX:		/* addr.c's slots of .debug_addr */
			why = addr_list_slot(w, dwarf_get_uleb(r), base);
			return why ? why : r->bad ? "a location list past its section's end" : NULL;
		case LLE_STARTX_ENDX:
			why = addr_list_slot(w, dwarf_get_uleb(r), &e->lo);
			if (!why)
				why = addr_list_slot(w, dwarf_get_uleb(r), &e->hi);
			break;
		case LLE_STARTX_LENGTH:
			why = addr_list_slot(w, dwarf_get_uleb(r), &e->lo);
			e->hi = e->lo + dwarf_get_uleb(r);
			break;
		default:	/* default_location, GNU's view_pair */
			return "a location list entry kind kbolt does not take";
		}
		if (why)
			return why;
		e->len = dwarf_get_uleb(r);
	}
	e->expr = r->p;
	if (e->len > (uint64_t)(r->end - r->p) || r->bad)
		return "a location list past its section's end";
	r->p += e->len;
	*bounded = true;
	return NULL;
}

/*
 * The entries of the list at off of src into w->locs, with their views from views
 * (NULL: none); NULL or why not
 */
static const char *read_loclist(struct info_walk *w, struct list_src *src, uint64_t off,
				const struct addr_attr *views)
{
	struct dwarf_reader r = { .p = src->data + off, .end = src->data + src->size };
	struct dwarf_reader vr = { .p = src->data, .end = src->data + src->size };
	uint64_t base = w->base;

	w->locs.nr = 0;
	addr_list_begin(w);
	if (!src->data || off >= src->size || (views && views->value >= src->size))
		return "a location list past its section's end";
	if (views)
		vr.p += views->value;
	for (;;) {
		struct loc_entry e = { 0 };
		bool bounded, end;
		const char *why = read_entry(w, src, &r, &base, &e, &bounded, &end);

		if (why || end)
			return why;
		if (!bounded)
			continue;
		if (views) {
			e.vb = dwarf_get_uleb(&vr);
			e.ve = dwarf_get_uleb(&vr);
			if (vr.bad)
				return "location views past their section's end";
		}
		add_entry(&w->locs, &e);
	}
}

/*
 * dwarf_info_check(): every entry's ends are places kbolt can map, the last byte of a
 * call among them (GCC's return address less one)
 */
static void check_loclist(struct info_walk *w)
{
	for (size_t k = 0; k < w->locs.nr; k++) {
		const struct loc_entry *e = &w->locs.v[k];

		if (e->lo == e->hi) {
			info_check_place(w, find_func_containing(w->opt, e->lo), e->lo,
					 PLACE_LIST);
			continue;
		}
		w->old.nr = 0;
		info_add_span(&w->old, e->lo, e->hi);
		info_check_spans(w, &w->old, PLACE_LIST);
	}
}

/*
 * The new place of the instruction at a, if f (moved, or NULL) holds it; *placed false
 * if the layout removed it (a jmp): its rows, and the views that name them, are gone
 */
static uint64_t new_place(struct info_walk *w, struct func *f, uint64_t a, bool *placed)
{
	*placed = !f || info_emitted(w, f, a);
	return f ? info_new_inner(w, f, a) : a;
}

static void add_piece(struct info_walk *w, const struct loc_entry *e, uint64_t lo,
		      uint64_t hi, uint64_t vb, uint64_t ve)
{
	add_entry(&w->new_locs, &(struct loc_entry){ lo, hi, vb, ve, e->expr, e->len });
}

/*
 * e's pieces at their new places into w->new_locs, views kept where they name rows of
 * the same instructions (see the top of the file); false if nothing moved
 */
static bool map_entry(struct info_walk *w, const struct loc_entry *e)
{
	struct func *f = moved_func_containing(w->opt, e->lo);
	bool lo_placed, hi_placed, ended = false;
	uint64_t nlo = new_place(w, f, e->lo, &lo_placed);
	/* the instruction at hi, in the function of lo: past its ops, hi stays */
	uint64_t nhi = new_place(w, f, e->hi, &hi_placed);
	uint64_t vb = lo_placed ? e->vb : 0, ve = hi_placed ? e->ve : 0;

	if (e->lo == e->hi) {
		if (lo_placed)		/* else the rows it names are gone */
			add_piece(w, e, nlo, nlo, e->vb, e->ve);
		return nlo != e->lo || !lo_placed;
	}
	w->old.nr = 0;
	info_add_span(&w->old, e->lo, e->hi);
	if (!info_map_spans(w, &w->old, &w->new)) {
		add_entry(&w->new_locs, e);
		return false;
	}
	for (size_t k = 0; k < w->new.nr; k++) {
		struct span p = w->new.v[k];

		if (vb && nlo > p.lo && nlo < p.hi) {
			add_piece(w, e, p.lo, nlo, 0, 0);
			p.lo = nlo;
		}
		add_piece(w, e, p.lo, p.hi, p.lo == nlo ? vb : 0, p.hi == nhi ? ve : 0);
		ended |= p.hi == nhi;
	}
	if (ve && !ended)
		add_piece(w, e, nhi, nhi, 0, ve);
	return true;
}

/*
 * w->new_locs written as a new list of src, after its view pairs if views; their
 * offsets in *off and *voff; NULL or what is wrong.  DWARF 5's: a base address, the
 * lowest, then offset pairs, as GCC writes them: one relocation a list.  DWARF 4's: a
 * base selection of 0, then absolute pairs (an offset pair of zeros would end it).
 */
static const char *write_loclist(struct info_walk *w, struct list_src *src, bool views,
				 uint64_t *off, uint64_t *voff)
{
	uint64_t at = info_new_lists_base(src), base = UINT64_MAX;
	unsigned int as = w->u.addr_size;
	const char *why = NULL;

	*voff = at + src->out.nr;
	for (size_t k = 0; k < w->new_locs.nr; k++) {
		if (views) {
			dwarf_put_uleb(&src->out, w->new_locs.v[k].vb);
			dwarf_put_uleb(&src->out, w->new_locs.v[k].ve);
		}
		if (w->new_locs.v[k].lo < base)
			base = w->new_locs.v[k].lo;
	}
	*off = at + src->out.nr;
	info_list_start(src, *off);
	if (src->v5 && w->new_locs.nr) {	/* (every entry may have gone) */
		dwarf_put_byte(&src->out, LLE_BASE);
		why = info_put_list_addr(w, src, at + src->out.nr, base);
	} else if (!src->v5) {
		dwarf_put_fixed(&src->out, as == 8 ? UINT64_MAX : UINT32_MAX, as);
		dwarf_put_fixed(&src->out, 0, as);
	}
	for (size_t k = 0; k < w->new_locs.nr && !why; k++) {
		const struct loc_entry *e = &w->new_locs.v[k];

		if (src->v5) {
			dwarf_put_byte(&src->out, LLE_OFFSET_PAIR);
			dwarf_put_uleb(&src->out, e->lo - base);
			dwarf_put_uleb(&src->out, e->hi - base);
			dwarf_put_uleb(&src->out, e->len);
		} else {
			why = info_put_list_addr(w, src, at + src->out.nr, e->lo);
			if (!why)
				why = info_put_list_addr(w, src, at + src->out.nr, e->hi);
			dwarf_put_fixed(&src->out, e->len, 2);
		}
		dwarf_put_bytes(&src->out, e->expr, e->len);
	}
	if (src->v5)
		dwarf_put_byte(&src->out, LLE_END);
	else
		for (int k = 0; k < 2; k++)	/* the end: a pair of zeros */
			dwarf_put_fixed(&src->out, 0, as);
	return why;
}

/* The list of a, whose views are at views (NULL: none); NULL or why not */
static const char *do_loclist(struct info_walk *w, const struct addr_attr *a,
			      const struct addr_attr *views)
{
	struct list_src *src = loc_src(w);
	struct list_move *m = w->rewrite ? info_find_move(src, a->value) : NULL;
	bool moved = false;
	uint64_t off, voff;
	const char *why;

	if (!m) {
		why = read_loclist(w, src, a->value, views);
		if (why || !w->rewrite) {
			if (!why)
				check_loclist(w);
			return why;
		}
		w->new_locs.nr = 0;
		for (size_t k = 0; k < w->locs.nr; k++)
			moved |= map_entry(w, &w->locs.v[k]);
		/* a slot of .debug_addr it names taking another value: written again too */
		if (!moved && !addr_list_changed(w))
			return NULL;
		why = write_loclist(w, src, views, &off, &voff);
		if (why)
			return why;
		m = info_add_move(src, a->value, off, voff);
	}
	if (a->indexed) {
		addr_table_entry(src, a, w->loclists_base, m->new, w->u.offset_size);
		return NULL;
	}
	if (!info_fits(m->new, a->size))
		return "a new location list past 4 GiB";
	info_list_ref(w, src, dwarf_patch_add(w->patches, a->place, a->size, m->old, m->new,
					      PATCH_OFFSET));
	if (views)
		info_list_ref(w, src, dwarf_patch_add(w->patches, views->place, views->size,
						      views->value, m->views, PATCH_OFFSET));
	return NULL;
}

const char *dwarf_loc_do(struct info_walk *w, const struct die *d)
{
	const struct addr_attr *views = NULL;
	const char *why = NULL;

	for (unsigned int k = 0; k < d->nr; k++)
		if (d->a[k].at == AT_GNU_LOCVIEWS)
			views = &d->a[k];
	for (unsigned int k = 0; k < d->nr && !why; k++) {
		const struct addr_attr *a = &d->a[k];

		if (a->at != AT_GNU_LOCVIEWS && dwarf_loc_is_list(a->at, a->form, &w->u))
			why = do_loclist(w, a, a->at == AT_LOCATION ? views : NULL);
	}
	return why;
}
