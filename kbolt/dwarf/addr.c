// SPDX-License-Identifier: GPL-2.0
/*
 * DWARF 5's indexed forms (section 7.27, 2.17.3, 2.6.2), as Clang writes every code
 * address: a DIE's DW_AT_low_pc, DW_AT_call_pc, DW_AT_call_return_pc as DW_FORM_addrx,
 * an index into its unit's table in .debug_addr (at DW_AT_addr_base); its lists as
 * DW_FORM_rnglistx and DW_FORM_loclistx, indices into the offsets tables at
 * DW_AT_rnglists_base and DW_AT_loclists_base; and their entries' addresses as
 * DW_RLE_base_addressx, DW_LLE_base_addressx, DW_*_startx_*: slots of the same table.
 *
 * One slot serves every user of its address: a call's return address is the next
 * instruction's start, a block's start a call site's, a list's base.  In a moved
 * function these need not go to one place (a jmp kbolt adds after the call), so before
 * a unit's DIEs are patched, each user says what it needs:
 *
 *   a point  (DW_AT_call_pc, DW_AT_call_return_pc, a label's DW_AT_low_pc) has
 *            nothing but its index: rigid;
 *   a pair's DW_AT_low_pc can become a DW_AT_ranges of a new list in its own bytes
 *            and the DW_AT_high_pc's after them (info.c's split_pair());
 *   a list is written again, with addresses of its own, when a slot it names changes.
 *
 * Each slot takes the value most of its points need (then most of its pairs); a point
 * that needs another gets a new slot after the table's last, its index written in its
 * own bytes; .debug_addr is laid out again with each table's new slots after its own
 * (addr_write()), no hole left (readelf reads the tables as one run), every
 * DW_AT_addr_base after the first grown table patched.  The points of one address need at most two
 * values (an instruction's start, a call's end), so a unit needs at most one new slot
 * for each slot whose points are of both kinds: dwarf_info_check() keeps the functions
 * of such a slot whose index has no room for that many more (a ULEB128 of one byte).
 * A slot is patched in place, with the addend of its relocation; .debug_str_offsets
 * and the strings are not touched.
 *
 * Hand-written for the reason info.c is: libdw resolves these forms (the proof reads
 * through it) but does not say where their bytes are, nor write any.
 */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../lib/output.h"
#include "addr.h"

/* What a unit needs of its table, and every unit's table for addr_write() */
struct addr_plan {
	/* the rewrite: what each user of a slot needs, then the slots that change */
	struct slot_want {
		uint64_t idx, value;
		uint32_t rigid, flex;
	} *wants;
	size_t nr_wants, wants_cap;
	struct slot_val {
		uint64_t idx, value;
	} *changed;
	size_t nr_changed, changed_cap;
	uint64_t *extra;	/* the values of new slots after the table's */
	size_t nr_extra, extra_cap;
	/* the check: the points of indexed slots */
	struct slot_use {
		uint64_t idx, addr;
		unsigned int size;
		uint16_t form;
		bool end;
	} *uses;
	size_t nr_uses, uses_cap;
	/*
	 * the rewrite: every unit's table, and the new slots of each, which .debug_addr,
	 * laid out again, holds after the table's own (addr_write())
	 */
	struct unit_table {
		uint64_t base, count, end;	/* end: of its contribution */
		uint64_t shift;		/* bytes of new slots up to its end */
		struct addr_attr attr;		/* the unit's DW_AT_addr_base */
		size_t first_extra, nr_extra;	/* in all_extra */
	} *tables;
	size_t nr_tables, tables_cap;
	uint64_t *all_extra;
	size_t nr_all_extra, all_extra_cap;
};

static struct addr_plan *plan_of(struct info_walk *w)
{
	if (!w->plan)
		w->plan = xcalloc(1, sizeof(*w->plan));
	return w->plan;
}

/* --- reading --- */

/*
 * The header of the table at base of .debug_addr (section 7.27): its entries in *count,
 * the end of its contribution in *end
 */
static const char *read_table(struct info_walk *w, uint64_t base, uint64_t *count,
			      uint64_t *end)
{
	unsigned int hsize = w->u.offset_size == 8 ? 16 : 8, osize;
	struct dwarf_reader r;
	uint64_t len;

	if (!w->addr.data || base < hsize || base > w->addr.size)
		return "a DW_AT_addr_base past .debug_addr's end";
	r = (struct dwarf_reader){ .p = w->addr.data + base - hsize,
				   .end = w->addr.data + w->addr.size };
	len = dwarf_get_initial_length(&r, &osize);
	if (dwarf_get_fixed(&r, 2) != 5 || dwarf_get_fixed(&r, 1) != w->u.addr_size ||
	    dwarf_get_fixed(&r, 1) != 0 || r.bad || osize != w->u.offset_size || len < 4)
		return "a table of .debug_addr whose header kbolt does not take";
	*count = (len - 4) / w->u.addr_size;
	*end = (r.p - w->addr.data) - 4 + len;
	if (len - 4 > w->addr.size - base)
		return "a table of .debug_addr past the section's end";
	return NULL;
}

const char *addr_unit_begin(struct info_walk *w, const struct die *d)
{
	const struct addr_attr *a = d ? info_die_attr(d, AT_ADDR_BASE) : NULL;
	const struct addr_attr *rl = d ? info_die_attr(d, AT_RNGLISTS_BASE) : NULL;
	const struct addr_attr *ll = d ? info_die_attr(d, AT_LOCLISTS_BASE) : NULL;
	struct addr_plan *p = plan_of(w);
	const char *why;
	uint64_t end;

	p->nr_wants = p->nr_changed = p->nr_extra = p->nr_uses = 0;
	w->rnglists_base = rl ? rl->value : UINT64_MAX;
	w->loclists_base = ll ? ll->value : UINT64_MAX;
	w->addr_base = UINT64_MAX;
	w->nr_addrs = 0;
	if (!a)
		return NULL;
	w->addr_base = a->value;
	why = read_table(w, a->value, &w->nr_addrs, &end);
	if (why || !w->rewrite)
		return why;
	GROW(p->tables, p->tables_cap, p->nr_tables + 1);
	p->tables[p->nr_tables++] = (struct unit_table){ .base = a->value, .count = w->nr_addrs,
							 .end = end, .attr = *a };
	return NULL;
}

static const char *slot_value(struct info_walk *w, uint64_t idx, uint64_t *value)
{
	if (w->addr_base == UINT64_MAX)
		return "an indexed address in a unit without DW_AT_addr_base";
	if (idx >= w->nr_addrs)
		return "an address index past its table in .debug_addr";
	*value = dwarf_get_offset(w->addr.data + w->addr_base + idx * w->u.addr_size,
				  w->u.addr_size);
	return NULL;
}

/* The offset of the list a names, from the offsets table at base of src */
static const char *list_offset(struct info_walk *w, struct list_src *src, uint64_t base,
			       struct addr_attr *a)
{
	unsigned int os = w->u.offset_size;

	if (base == UINT64_MAX)
		return a->form == FORM_RNGLISTX ? "a DW_FORM_rnglistx without DW_AT_rnglists_base" :
		       "a DW_FORM_loclistx without DW_AT_loclists_base";
	if (!src->data || base < 4 || base > src->size ||
	    a->index >= get_u32(src->data + base - 4) ||	/* offset_entry_count */
	    a->index >= (src->size - base) / os)
		return "a list index past its offsets table";
	a->table_place = base + a->index * os;
	a->value = base + dwarf_get_offset(src->data + a->table_place, os);
	return NULL;
}

const char *addr_resolve_die(struct info_walk *w, struct die *d)
{
	const char *why = NULL;

	for (unsigned int k = 0; k < d->nr && !why; k++) {
		struct addr_attr *a = &d->a[k];

		if (!a->indexed)
			continue;
		if (a->form == FORM_RNGLISTX)
			why = list_offset(w, &w->rnglists, w->rnglists_base, a);
		else if (a->form == FORM_LOCLISTX)
			why = list_offset(w, &w->loclists, w->loclists_base, a);
		else
			why = slot_value(w, a->index, &a->value);
	}
	return why;
}

void addr_list_begin(struct info_walk *w)
{
	w->nr_list_slots = 0;
}

const char *addr_list_slot(struct info_walk *w, uint64_t idx, uint64_t *value)
{
	if (w->rewrite) {
		GROW(w->list_slots, w->list_slots_cap, w->nr_list_slots + 1);
		w->list_slots[w->nr_list_slots++] = idx;
	}
	return slot_value(w, idx, value);
}

/* --- the check --- */

void addr_check_point(struct info_walk *w, const struct addr_attr *a, bool end)
{
	struct addr_plan *p = plan_of(w);

	if (!a->indexed)
		return;
	GROW(p->uses, p->uses_cap, p->nr_uses + 1);
	p->uses[p->nr_uses++] = (struct slot_use){ a->index, a->value, a->size, a->form, end };
}

bool addr_pair_can_split(const struct info_walk *w, const struct addr_attr *low,
			 const struct addr_attr *high)
{
	/* a twin's code may take one more byte, from the first of the pair */
	return low->size > w->u.offset_size ||
	       (low->place + low->size == high->place &&
		low->size + high->size > w->u.offset_size);
}

static int cmp_use(const void *x, const void *y)
{
	const struct slot_use *p = x, *q = y;

	return p->idx < q->idx ? -1 : p->idx > q->idx;
}

/* Can an index of a's form and size be as high as idx? */
static bool index_fits(uint16_t form, unsigned int size, uint64_t idx)
{
	unsigned int bits = form == FORM_ADDRX ? 7 * size : 8 * size;

	return bits >= 64 || idx < (uint64_t)1 << bits;
}

/* Keep the function of each point of slots [from, to) of uses that may move */
static void keep_points(struct info_walk *w, const struct slot_use *u, size_t n)
{
	for (size_t k = 0; k < n; k++) {
		struct func *f = find_func_containing(w->opt, u[k].addr - u[k].end);

		if (info_may_move(f))
			skip_func(w->opt, f, SKIP_DEBUG_INFO, u[k].addr);
	}
}

void addr_check_unit_end(struct info_walk *w)
{
	struct addr_plan *p = plan_of(w);
	size_t mixed = 0;

	if (!p->nr_uses)
		return;
	qsort(p->uses, p->nr_uses, sizeof(*p->uses), cmp_use);
	for (int pass = 0; pass < 2; pass++) {
		for (size_t k = 0, n; k < p->nr_uses; k += n) {
			bool start = false, end = false, room = true;

			for (n = 0; k + n < p->nr_uses && p->uses[k + n].idx == p->uses[k].idx; n++) {
				start |= !p->uses[k + n].end;
				end |= p->uses[k + n].end;
				room &= index_fits(p->uses[k + n].form, p->uses[k + n].size,
						   w->nr_addrs + mixed - 1);
			}
			if (!start || !end)
				continue;
			if (!pass)
				mixed++;
			else if (!room)
				keep_points(w, p->uses + k, n);
		}
	}
	p->nr_uses = 0;
}

/* --- the rewrite --- */

void addr_want(struct info_walk *w, const struct addr_attr *a, uint64_t value, bool rigid)
{
	struct addr_plan *p = plan_of(w);

	if (!a->indexed)
		return;
	GROW(p->wants, p->wants_cap, p->nr_wants + 1);
	p->wants[p->nr_wants++] = (struct slot_want){ a->index, value, rigid, !rigid };
}

static int cmp_want(const void *x, const void *y)
{
	const struct slot_want *p = x, *q = y;

	if (p->idx != q->idx)
		return p->idx < q->idx ? -1 : 1;
	return p->value < q->value ? -1 : p->value > q->value;
}

/* Is want x a better holder of its slot than y: more points, then more pairs, then old */
static bool better(const struct slot_want *x, const struct slot_want *y, uint64_t old)
{
	if (x->rigid != y->rigid)
		return x->rigid > y->rigid;
	if (x->flex != y->flex)
		return x->flex > y->flex;
	return x->value == old;
}

/* The slot of the wants [k, k + n): the value that holds it, and its patch */
static void plan_slot(struct info_walk *w, const struct slot_want *v, size_t n)
{
	struct addr_plan *p = plan_of(w);
	const struct slot_want *best = &v[0];
	uint64_t old, place;

	if (slot_value(w, v[0].idx, &old))
		return;		/* read once already: cannot fail */
	for (size_t k = 1; k < n; k++)
		if (better(&v[k], best, old))
			best = &v[k];
	if (best->value == old)
		return;
	GROW(p->changed, p->changed_cap, p->nr_changed + 1);
	p->changed[p->nr_changed++] = (struct slot_val){ best->idx, best->value };
	place = w->addr_base + best->idx * w->u.addr_size;
	GROW(w->addr.tpatches, w->addr.tpatches_cap, w->addr.nr_tpatches + 1);
	w->addr.tpatches[w->addr.nr_tpatches++] = (struct table_patch){
		place, old, best->value, w->u.addr_size };
}

void addr_plan(struct info_walk *w)
{
	struct addr_plan *p = plan_of(w);
	size_t n = 0;

	if (!p->nr_wants)
		return;
	qsort(p->wants, p->nr_wants, sizeof(*p->wants), cmp_want);
	for (size_t k = 0; k < p->nr_wants; k++) {	/* the wants of one value merged */
		if (n && p->wants[n - 1].idx == p->wants[k].idx &&
		    p->wants[n - 1].value == p->wants[k].value) {
			p->wants[n - 1].rigid += p->wants[k].rigid;
			p->wants[n - 1].flex += p->wants[k].flex;
			continue;
		}
		p->wants[n++] = p->wants[k];
	}
	for (size_t k = 0, m; k < n; k += m) {
		for (m = 1; k + m < n && p->wants[k + m].idx == p->wants[k].idx; m++)
			;
		plan_slot(w, p->wants + k, m);
	}
}

static int cmp_slot_val(const void *key, const void *x)
{
	uint64_t idx = *(const uint64_t *)key;
	const struct slot_val *v = x;

	return idx < v->idx ? -1 : idx > v->idx;
}

/* The value slot idx holds after the rewrite */
static uint64_t final_value(struct info_walk *w, uint64_t idx)
{
	struct addr_plan *p = plan_of(w);
	const struct slot_val *v = p->nr_changed ?
		search_array(&idx, p->changed, p->nr_changed, sizeof(*v), cmp_slot_val) : NULL;
	uint64_t old = 0;

	if (v)
		return v->value;
	slot_value(w, idx, &old);
	return old;
}

bool addr_holds(struct info_walk *w, const struct addr_attr *a, uint64_t value)
{
	return !a->indexed || final_value(w, a->index) == value;
}

/* v as a ULEB128 of exactly size bytes, as the little-endian value of those bytes */
const char *addr_use(struct info_walk *w, const struct addr_attr *a, uint64_t value)
{
	struct addr_plan *p = plan_of(w);
	unsigned char bytes[8];
	struct dwarf_reader r = { .p = bytes, .end = bytes + sizeof(bytes) };
	uint64_t idx, new;
	size_t k;

	if (addr_holds(w, a, value))
		return NULL;
	for (k = 0; k < p->nr_extra && p->extra[k] != value; k++)
		;
	if (k == p->nr_extra) {
		GROW(p->extra, p->extra_cap, p->nr_extra + 1);
		p->extra[p->nr_extra++] = value;
	}
	idx = w->nr_addrs + k;
	if (!index_fits(a->form, a->size, idx) || a->size > 8)
		return "no room in a point's index for a new slot of .debug_addr";
	new = idx;	/* addrx1-4: the index's own little-endian bytes */
	if (a->form == FORM_ADDRX) {	/* the patch writes a value's little-endian bytes */
		dwarf_put_uleb_sized(bytes, idx, a->size);
		new = dwarf_get_fixed(&r, a->size);
	}
	/* an index has no relocation: PATCH_ADDR only writes the bytes */
	dwarf_patch_add(w->patches, a->place, a->size, a->index, new, PATCH_ADDR);
	return NULL;
}

bool addr_list_changed(struct info_walk *w)
{
	for (size_t k = 0; k < w->nr_list_slots; k++) {
		uint64_t old = 0;

		slot_value(w, w->list_slots[k], &old);
		if (final_value(w, w->list_slots[k]) != old)
			return true;
	}
	return false;
}

/* The unit's new slots, after its table's own (addr_write()) */
const char *addr_unit_end(struct info_walk *w)
{
	struct addr_plan *p = plan_of(w);
	struct unit_table *t = p->nr_tables ? &p->tables[p->nr_tables - 1] : NULL;

	if (!p->nr_extra)
		return NULL;
	if (!t || t->base != w->addr_base)
		return "new slots of a unit without DW_AT_addr_base";
	if (w->u.addr_size != 8)
		return "new slots in a table of 4-byte addresses";
	if (t->end != t->base + t->count * 8)
		return "new slots after a table of .debug_addr with bytes past its last";
	t->first_extra = p->nr_all_extra;
	t->nr_extra = p->nr_extra;
	GROW(p->all_extra, p->all_extra_cap, p->nr_all_extra + p->nr_extra);
	memcpy(p->all_extra + p->nr_all_extra, p->extra, p->nr_extra * sizeof(*p->extra));
	p->nr_all_extra += p->nr_extra;
	return NULL;
}

void addr_table_entry(struct list_src *src, const struct addr_attr *a, uint64_t base,
		      uint64_t new, unsigned int size)
{
	for (size_t k = src->nr_tpatches; k-- > 0 && k + 8 >= src->nr_tpatches;)
		if (src->tpatches[k].place == a->table_place)
			return;		/* a list two DIEs share */
	GROW(src->tpatches, src->tpatches_cap, src->nr_tpatches + 1);
	src->tpatches[src->nr_tpatches++] = (struct table_patch){ a->table_place,
								  a->value - base, new - base, size };
}

static int cmp_tpatch(const void *key, const void *x)
{
	uint64_t place = *(const uint64_t *)key;
	const struct table_patch *t = x;

	return place < t->place ? -1 : place > t->place;
}

static int cmp_tpatch_place(const void *x, const void *y)
{
	return cmp_tpatch(&((const struct table_patch *)x)->place, y);
}

void addr_patch_tables(struct list_src *src, unsigned char *b, unsigned char *r,
			 uint64_t rsize)
{
	if (!src->nr_tpatches)
		return;
	qsort(src->tpatches, src->nr_tpatches, sizeof(*src->tpatches), cmp_tpatch_place);
	for (size_t k = 0; k < src->nr_tpatches; k++)
		for (unsigned int i = 0; i < src->tpatches[k].size; i++)
			b[src->tpatches[k].place + i] = src->tpatches[k].new >> (8 * i);
	for (uint64_t e = 0; r && e + 24 <= rsize; e += 24) {
		uint64_t place = get_u64(r + e);
		const struct table_patch *t = search_array(&place, src->tpatches,
							   src->nr_tpatches, sizeof(*t),
							   cmp_tpatch);

		if (t)
			put_u64(r + e + 16, get_u64(r + e + 16) + (t->new - t->old));
	}
}

static int cmp_table(const void *x, const void *y)
{
	const struct unit_table *p = x, *q = y;

	return p->base < q->base ? -1 : p->base > q->base;
}

/* Each table's shift: the bytes of new slots up to its end (tables in base order) */
static void shifts(struct addr_plan *p)
{
	uint64_t by = 0;

	for (size_t k = 0; k < p->nr_tables; k++) {
		if (k == 0 || p->tables[k].base != p->tables[k - 1].base)
			by += 8 * p->tables[k].nr_extra;
		p->tables[k].shift = by;
	}
}

/* Where the byte at old offset o of .debug_addr is, the new slots inserted before it */
static uint64_t new_offset(const struct addr_plan *p, uint64_t o)
{
	size_t past = upper_bound_u64(p->tables, p->nr_tables, sizeof(*p->tables),
				      offsetof(struct unit_table, end), o);

	return o + (past ? p->tables[past - 1].shift : 0);
}

/* The section's bytes laid out again: each table's new slots after its own, patched */
static const char *lay_out(struct info_walk *w, struct dwarf_buf *b)
{
	struct addr_plan *p = w->plan;
	struct list_src *src = &w->addr;
	uint64_t pos = 0;

	for (size_t k = 0; k < p->nr_tables; k++) {
		struct unit_table *t = &p->tables[k];
		unsigned char *len;

		if (k && t->base == p->tables[k - 1].base) {
			if (t->nr_extra && p->tables[k - 1].nr_extra)
				return "new slots in a table of .debug_addr two units share";
			continue;
		}
		if (!t->nr_extra)
			continue;
		dwarf_put_bytes(b, src->data + pos, t->end - pos);
		for (size_t i = 0; i < t->nr_extra; i++)
			dwarf_put_fixed(b, p->all_extra[t->first_extra + i], 8);
		/* its unit_length, 32-bit or 64-bit DWARF (read_table()) */
		len = b->p + new_offset(p, t->base) - (t->attr.size == 8 ? 12 : 8);
		dwarf_put_offset(len, t->attr.size,
				 dwarf_get_offset(len, t->attr.size) + 8 * t->nr_extra);
		pos = t->end;
	}
	dwarf_put_bytes(b, src->data + pos, src->size - pos);
	for (size_t k = 0; k < src->nr_tpatches; k++)
		dwarf_put_offset(b->p + new_offset(p, src->tpatches[k].place),
				 src->tpatches[k].size, src->tpatches[k].new);
	return NULL;
}

/* The relocations of .debug_addr moved with their slots, and those of the new slots */
static const char *relocate(struct info_walk *w, struct dwarf_buf *rb)
{
	struct addr_plan *p = w->plan;
	struct list_src *src = &w->addr;
	uint64_t rsize = 0;
	const unsigned char *r = dwarf_file_bytes(w->opt->img, src->rs, &rsize);

	dwarf_put_bytes(rb, r, rsize);
	for (uint64_t e = 0; e + 24 <= rb->nr; e += 24) {
		uint64_t place = get_u64(rb->p + e);
		const struct table_patch *t = src->nr_tpatches ?
			search_array(&place, src->tpatches, src->nr_tpatches, sizeof(*t),
				     cmp_tpatch) : NULL;

		put_u64(rb->p + e, new_offset(p, place));
		if (t)
			put_u64(rb->p + e + 16, get_u64(rb->p + e + 16) + (t->new - t->old));
	}
	for (size_t k = 0; k < p->nr_tables; k++) {
		const struct unit_table *t = &p->tables[k];
		uint64_t at = new_offset(p, t->end) - 8 * t->nr_extra;

		for (size_t i = 0; i < t->nr_extra; i++) {
			uint64_t value = 0, addr = p->all_extra[t->first_extra + i];
			size_t sym = info_code_symbol(w, addr, &value);

			if (!sym)
				return "no section symbol for the code a new slot of .debug_addr holds";
			dwarf_put_fixed(rb, at + 8 * i, 8);
			dwarf_put_fixed(rb, ELF64_R_INFO(sym, R_X86_64_64), 8);
			dwarf_put_fixed(rb, addr - value, 8);
		}
	}
	return NULL;
}

const char *addr_write(struct info_walk *w, struct output_secs *out)
{
	struct addr_plan *p = w->plan;
	struct list_src *src = &w->addr;
	struct dwarf_buf b = { 0 }, rb = { 0 };
	const char *why;

	if (!p || (!p->nr_all_extra && !src->nr_tpatches))
		return NULL;
	qsort(p->tables, p->nr_tables, sizeof(*p->tables), cmp_table);
	shifts(p);
	if (src->nr_tpatches)
		qsort(src->tpatches, src->nr_tpatches, sizeof(*src->tpatches), cmp_tpatch_place);
	why = lay_out(w, &b);
	if (!why && src->rs)
		why = relocate(w, &rb);
	if (why) {
		free(b.p);
		free(rb.p);
		return why;
	}
	for (size_t k = 0; k < p->nr_tables; k++) {
		const struct unit_table *t = &p->tables[k];
		uint64_t new = new_offset(p, t->base);

		if (new != t->base)
			dwarf_patch_add(w->patches, t->attr.place, t->attr.size, t->base, new,
					PATCH_OFFSET);
	}
	output_secs_add(out, src->sec->idx, b.p, b.nr);
	if (src->rs)
		output_secs_add(out, src->rs->idx, rb.p, rb.nr);
	return NULL;
}

void addr_free(struct info_walk *w)
{
	struct addr_plan *p = w->plan;

	free(w->list_slots);
	if (!p)
		return;
	free(p->wants);
	free(p->changed);
	free(p->extra);
	free(p->uses);
	free(p->tables);
	free(p->all_extra);
	free(p);
}
