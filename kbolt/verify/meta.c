// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt verify's checks of what points into code, once the walk has built the map:
 * the ORC state at every walked instruction, every table entry, every relocation
 * (the ORC table's regenerated ones included).  See verify.c for the whole proof.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../kmeta/table.h"
#include "internal.h"

/* Old state at every mapped old byte that starts an insn (or sits in a unit) */
void verify_orc(struct verifier *v)
{
	size_t nr = v->nr_orc, pa = 0, pb = 0;	/* both tables have nr entries */

	if (!v->orc_a || !v->orc_b)
		return;
	for (size_t k = 0; k < v->nr_f; k++) {
		struct vfunc *f = &v->f[k];

		for (uint64_t off = 0; off < f->sym->size; off++) {
			uint64_t o = f->sym->addr + off, n;

			if (f->map[off] == UNMAPPED)
				continue;
			n = f->sym->addr + f->map[off];
			if (!same_state(kmeta_orc_state_near(v->orc_a, v->orc_ea, nr, o, &pa),
					kmeta_orc_state_near(v->orc_b, v->orc_eb, nr, n, &pb)))
				verify_fail(v, o, "ORC state at its new place +0x%x differs", f->map[off]);
		}
	}
	/* outside rewritten functions, each old entry is still there */
	pa = pb = 0;
	for (size_t k = 0; k < nr; k++) {
		uint64_t ip = v->orc_a[k];

		if (vfunc_containing(v, ip))
			continue;
		if (!same_state(kmeta_orc_state_near(v->orc_a, v->orc_ea, nr, ip, &pa),
				kmeta_orc_state_near(v->orc_b, v->orc_eb, nr, ip, &pb)))
			verify_fail(v, ip, "ORC state changed outside rewritten code");
	}
}

/* The old entry's site through the map, as the new table should have it */
static bool map_site(struct verifier *v, struct kmeta_table *t, struct kmeta_entry *e)
{
	for (unsigned int i = 0; i < TABLE_MAX_FIELDS && t->layout->fields[i].name; i++) {
		if (t->layout->fields[i].role != FR_SITE || e->filler)
			continue;
		/* a runtime constant's site is a byte inside its instruction */
		if (!vmap(v, e->val[i], &e->val[i]) && !vmap_place(v, e->val[i], &e->val[i]))
			return false;
		e->site = e->val[i];
	}
	return true;
}

/* Old entry a (its site already mapped) against new entry b */
static void check_entry(struct verifier *v, struct kmeta_table *t, const struct kmeta_entry *a,
			const struct kmeta_entry *b, size_t k)
{
	for (unsigned int i = 0; i < TABLE_MAX_FIELDS && t->layout->fields[i].name; i++) {
		const struct field *f = &t->layout->fields[i];
		bool ok;

		if (f->role == FR_CODE)
			ok = equiv(v, a->val[i], b->val[i]) && a->flags[i] == b->flags[i];
		else if (f->kind == FK_PCREL32 || f->kind == FK_PCREL64 || f->kind == FK_ABS64)
			ok = a->val[i] == b->val[i] && a->flags[i] == b->flags[i];
		else
			ok = a->raw[i] == b->raw[i];
		if (!ok) {
			verify_fail(v, b->site, "%s: entry %zu: %s is not the old one mapped",
			     t->desc->name, k, f->name);
			return;
		}
	}
}

/* Slot k of the old table, its site mapped (a site the walk never reached is said) */
static int read_old(struct verifier *v, struct kmeta_table *ta, size_t k, struct kmeta_entry *e,
		    bool say)
{
	memset(e, 0, sizeof(*e));
	if (kmeta_table_read_entry(ta, k, e))
		return -EINVAL;
	if (!map_site(v, ta, e) && say)
		verify_fail(v, e->site, "%s: entry %zu: its site was not reached by the walk",
			    ta->desc->name, k);
	return 0;
}

/* Slot by slot, one entry of each at a time; a slot may be unreadable only in both */
static void check_slots(struct verifier *v, struct kmeta_table *ta, struct kmeta_table *tb)
{
	struct kmeta_entry ea, eb;

	for (size_t k = 0; k < ta->nr_slots; k++) {
		bool old_ok = !read_old(v, ta, k, &ea, true);
		bool new_ok = !kmeta_table_read_entry(tb, k, &eb);

		if (old_ok && new_ok)
			check_entry(v, ta, &ea, &eb, k);
		else if (old_ok != new_ok)
			verify_fail(v, ea.site, "%s: entry %zu: can be read in only one image",
				    ta->desc->name, k);
	}
}

/* The readable slots of t by site (old: mapped); false if two share a site */
static bool slots_by_site(struct verifier *v, struct kmeta_table *t, bool old,
			  struct slot_key *keys, size_t *nr)
{
	struct kmeta_entry e;

	*nr = 0;
	for (size_t k = 0; k < t->nr_slots; k++) {
		if (old ? read_old(v, t, k, &e, true) : kmeta_table_read_entry(t, k, &e))
			continue;
		keys[(*nr)++] = (struct slot_key){ e.site, k };
	}
	sort_by_u64_key(keys, *nr, sizeof(*keys), offsetof(struct slot_key, site));
	for (size_t k = 1; k < *nr; k++)
		if (keys[k].site == keys[k - 1].site)
			return false;
	return true;
}

/* Whole entries sorted by site, then by value: the order of entries sharing a site */
static void check_sorted_entries(struct verifier *v, struct kmeta_table *ta,
				 struct kmeta_table *tb)
{
	struct kmeta_entry *ea = xcalloc(ta->nr_slots, sizeof(*ea));
	struct kmeta_entry *eb = xcalloc(tb->nr_slots, sizeof(*eb));

	for (size_t k = 0; k < ta->nr_slots; k++)
		if (!read_old(v, ta, k, &ea[k], false))
			kmeta_table_read_entry(tb, k, &eb[k]);
	sort_array(ea, ta->nr_slots, sizeof(*ea), cmp_entry_site);
	sort_array(eb, tb->nr_slots, sizeof(*eb), cmp_entry_site);
	for (size_t k = 0; k < ta->nr_slots; k++)
		check_entry(v, ta, &ea[k], &eb[k], k);
	free(ea);
	free(eb);
}

/*
 * A sorted table (the kernel sorts it at boot, or kbolt re-sorts it): the k-th entry
 * by site of one against the k-th of the other.  By (site, slot) pairs, each entry read
 * again when compared: whole entries (140 bytes each, 38k of mcount_loc, twice) only
 * where two share a site.
 */
static void check_sorted(struct verifier *v, struct kmeta_table *ta, struct kmeta_table *tb)
{
	struct slot_key *ka = xmalloc((ta->nr_slots + 1) * sizeof(*ka));
	struct slot_key *kb = xmalloc((tb->nr_slots + 1) * sizeof(*kb));
	struct kmeta_entry ea, eb;
	size_t nr_a, nr_b;
	bool unique_a = slots_by_site(v, ta, true, ka, &nr_a);	/* says unreached sites */
	bool unique_b = slots_by_site(v, tb, false, kb, &nr_b);

	if (!unique_a || !unique_b) {
		check_sorted_entries(v, ta, tb);
	} else if (nr_a != nr_b) {
		verify_fail(v, 0, "%s: %zu entries can be read, was %zu", ta->desc->name, nr_b,
			    nr_a);
	} else {
		for (size_t k = 0; k < nr_a; k++) {
			read_old(v, ta, ka[k].slot, &ea, false);
			kmeta_table_read_entry(tb, kb[k].slot, &eb);
			check_entry(v, ta, &ea, &eb, k);
		}
	}
	free(ka);
	free(kb);
}

void verify_tables(struct verifier *v)
{
	for (unsigned int d = 0; d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *ta = kmeta_table_get(v->a, kmeta_table_descs[d]);
		struct kmeta_table *tb = kmeta_table_get(v->b, kmeta_table_descs[d]);

		if (!ta || !tb || !ta->present || kmeta_table_has(ta, TR_OWN_PASS))
			continue;
		if (ta->nr_slots != tb->nr_slots) {
			verify_fail(v, 0, "%s: %zu entries, was %zu", ta->desc->name, tb->nr_slots,
			     ta->nr_slots);
			continue;
		}
		if (kmeta_table_sorted(ta))
			check_sorted(v, ta, tb);
		else
			check_slots(v, ta, tb);
	}
}

/* Where the sorted tables lie in the old image: their relocations are permuted */
struct sorted_areas {
	struct kmeta_range *v;
	size_t nr;
};

static void find_sorted_areas(struct verifier *v, struct sorted_areas *sa)
{
	for (unsigned int d = 0; d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *t = kmeta_table_get(v->a, kmeta_table_descs[d]);

		if (!t || !t->present || !kmeta_table_sorted(t))
			continue;
		sa->v = xrealloc(sa->v, (sa->nr + t->nr_ranges) * sizeof(*sa->v));
		for (unsigned int r = 0; r < t->nr_ranges; r++)
			sa->v[sa->nr++] = (struct kmeta_range){ t->ranges[r].addr,
								t->ranges[r].addr + t->ranges[r].size };
	}
}

static bool in_sorted_table(const struct sorted_areas *sa, uint64_t p)
{
	for (size_t k = 0; k < sa->nr; k++)
		if (p >= sa->v[k].start && p < sa->v[k].end)
			return true;
	return false;
}

static void check_rela_entry(struct verifier *v, struct kmeta_sec *target,
			     const struct sorted_areas *sa, const unsigned char *ra,
			     const unsigned char *rb)
{
	uint64_t pa = get_u64(ra), pb = get_u64(rb), info = get_u64(ra + 8);
	int64_t aa = (int64_t)get_u64(ra + 16), ab = (int64_t)get_u64(rb + 16);
	uint64_t s, pm, ref_a, ref_b;

	if (info != get_u64(rb + 8)) {
		verify_fail(v, pa, "relocation's type or symbol changed");
		return;
	}
	if ((uint32_t)info == R_X86_64_NONE || (info >> 32) >= v->a->nr_syms)
		return;
	s = v->a->syms[info >> 32].addr;
	if (in_sorted_table(sa, pa))
		return;		/* slots permuted by sorting: the table check covers them */
	if (!vmap_place(v, pa, &pm) || pm != pb) {
		verify_fail(v, pa, "relocation not moved with its instruction");
		return;
	}
	ref_a = s + aa;
	ref_b = s + ab;
	/* what the linker wrote, the new image holds for the new relocation */
	if (kmeta_reloc_holds(v->a, (uint32_t)info, ref_a, pa) &&
	    !kmeta_reloc_holds(v->b, (uint32_t)info, ref_b, pb))
		verify_fail(v, pa, "relocated value does not match its relocation");
	if ((target->flags & SHF_EXECINSTR) &&
	    ((uint32_t)info == R_X86_64_PC32 || (uint32_t)info == R_X86_64_PLT32)) {
		/* pc-relative in code: the field's target moves, not S + A itself */
		if (ab - aa != 0 && !vfunc_containing(v, ref_a + 4) && !vfunc_containing(v, ref_a))
			verify_fail(v, pa, "relocation addend changed for an unmoved target");
		return;
	}
	/* or a byte inside an instruction (a runtime constant's immediate) moved with it */
	if (!equiv(v, ref_a, ref_b) && !(vmap_place(v, ref_a, &pm) && pm == ref_b))
		verify_fail(v, pa, "relocation target not moved with the code it points to");
}

/*
 * The ORC table's relocations, regenerated: one per slot, to the slot's ip, for as
 * many slots as the section holds (spare slots of a kbolt-enabled tree have none)
 */
static void check_orc_relocs(struct verifier *v, struct kmeta_sec *rsb)
{
	struct kmeta_sec *ip = kmeta_find_sec_by_name(v->b, ".orc_unwind_ip");
	const unsigned char *rb;
	uint64_t size = 0;

	rb = rela_bytes(v->b, rsb, &size);
	if (!ip || !rb || !v->orc_b || size % 24 || size / 24 > v->nr_orc) {
		verify_fail(v, 0, "%s: not one relocation per ORC slot", rsb->name);
		return;
	}
	for (size_t k = 0; k < size / 24; k++) {
		const unsigned char *r = rb + 24 * k;
		uint64_t info = get_u64(r + 8);

		if ((uint32_t)info != R_X86_64_PC32 || (info >> 32) >= v->b->nr_syms ||
		    get_u64(r) != ip->addr + 4 * k ||
		    v->b->syms[info >> 32].addr + get_u64(r + 16) != v->orc_b[k]) {
			verify_fail(v, v->orc_b[k], "%s: relocation %zu does not describe ORC slot %zu",
			     rsb->name, k, k);
			return;
		}
	}
}

#define RELOC_CHUNK 16384	/* relocations checked as one item: 384 KB of each .rela */

/* A run of one section's relocations, checked as one item (the ORC one whole) */
struct reloc_chunk {
	struct kmeta_sec *rsb, *target;
	const unsigned char *ra, *rb;
	uint64_t from, to;
};

struct reloc_checks {
	struct verifier *v;
	struct sorted_areas sa;
	struct reloc_chunk *c;
	size_t nr, cap;
};

static void add_chunks(struct verifier *v, struct kmeta_sec *rsb, struct kmeta_sec *target,
		       const unsigned char *ra, const unsigned char *rb, uint64_t nr, void *arg)
{
	struct reloc_checks *rc = arg;
	bool orc = is_own_pass_sec(v, target);

	for (uint64_t k = 0; k < nr; k += orc ? nr : RELOC_CHUNK) {
		GROW(rc->c, rc->cap, rc->nr + 1);
		rc->c[rc->nr++] = (struct reloc_chunk){
			rsb, target, ra, rb, k, orc || k + RELOC_CHUNK > nr ? nr : k + RELOC_CHUNK };
	}
}

struct reloc_checks *verify_relocs_plan(struct verifier *v)
{
	struct reloc_checks *rc = xcalloc(1, sizeof(*rc));

	rc->v = v;
	find_sorted_areas(v, &rc->sa);
	for_each_rela_pair(v, add_chunks, rc);
	return rc;
}

size_t verify_relocs_nr(const struct reloc_checks *rc)
{
	return rc->nr;
}

/*
 * Give back what a run of relocations made us read: their entries, and (they come in
 * address order) the relocated section from the first to the last of them.  .rela.text
 * and .text alone are 46 MB of both images.
 */
static void release_checked(struct verifier *v, const struct reloc_chunk *c)
{
	uint64_t from = get_u64(c->ra + 24 * c->from), upto = get_u64(c->ra + 24 * (c->to - 1));
	const struct kmeta_sec *t = c->target;
	const unsigned char *p;

	kmeta_release_bytes(v->a, c->ra + 24 * c->from, 24 * (c->to - c->from));
	kmeta_release_bytes(v->b, c->rb + 24 * c->from, 24 * (c->to - c->from));
	if (from < t->addr || upto <= from || upto - t->addr > t->size)
		return;
	if ((p = kmeta_bytes_at(v->a, from, upto - from)))
		kmeta_release_bytes(v->a, p, upto - from);
	if ((p = kmeta_bytes_at(v->b, from, upto - from)))
		kmeta_release_bytes(v->b, p, upto - from);
}

void verify_relocs_chunk(struct reloc_checks *rc, size_t k)
{
	const struct reloc_chunk *c = &rc->c[k];

	if (is_own_pass_sec(rc->v, c->target)) {
		if (rc->v->nr_f)
			check_orc_relocs(rc->v, c->rsb);
		return;
	}
	for (uint64_t i = c->from; i < c->to; i++)
		check_rela_entry(rc->v, c->target, &rc->sa, c->ra + 24 * i, c->rb + 24 * i);
	release_checked(rc->v, c);
}

void verify_relocs_free(struct reloc_checks *rc)
{
	free(rc->sa.v);
	free(rc->c);
	free(rc);
}
