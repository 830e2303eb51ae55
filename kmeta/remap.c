// SPDX-License-Identifier: GPL-2.0
/*
 * Remapping a table for moved code: every field that points into code (its site, a
 * target, a fixup) goes through the caller's address map and is re-encoded in place.
 * A table the kernel searches by site (sorted at build time) is then sorted again,
 * each range on its own, and its pc-relative fields re-encoded for their new slots.
 * The ORC table is not remapped here: its entries describe instructions, not
 * addresses, and kbolt regenerates it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "table.h"

static unsigned char *field_ptr(struct kmeta_table *t, uint64_t entry_addr, const struct field *f,
				unsigned int size)
{
	return (unsigned char *)kmeta_bytes_at(t->img, entry_addr + f->off, size);
}

static unsigned int field_size(const struct field *f)
{
	switch (f->kind) {
	case FK_U8:	return 1;
	case FK_U16:
	case FK_S16:	return 2;
	case FK_U32:
	case FK_S32:
	case FK_PCREL32: return 4;
	default:	return 8;
	}
}

int kmeta_table_write_field(struct kmeta_table *t, uint64_t entry_addr, unsigned int i,
			    uint64_t val)
{
	const struct field *f = &t->layout->fields[i];
	uint64_t at = entry_addr + f->off;
	unsigned char *p = field_ptr(t, entry_addr, f, field_size(f));
	int64_t d = (int64_t)(val - at);

	if (!p)
		return -EINVAL;
	switch (f->kind) {
	case FK_PCREL32:
		if (d != (int32_t)d)
			return -ERANGE;
		put_u32(p, (uint32_t)d);
		return 0;
	case FK_PCREL64:
		put_u64(p, (uint64_t)d);
		return 0;
	case FK_ABS64:
		put_u64(p, val);
		return 0;
	default:
		return -EINVAL;	/* not a pointer */
	}
}

static bool is_code_field(const struct field *f)
{
	return f->role == FR_SITE || f->role == FR_CODE;
}

static bool is_pointer(const struct field *f)
{
	return f->kind == FK_PCREL32 || f->kind == FK_PCREL64 || f->kind == FK_ABS64;
}

static int remap_entry(struct kmeta_table *t, const struct kmeta_entry *e, kmeta_map_fn map,
		       void *ctx, size_t *changed)
{
	const struct layout *l = t->layout;

	for (unsigned int i = 0; i < TABLE_MAX_FIELDS && l->fields[i].name; i++) {
		uint64_t to;

		if (!is_code_field(&l->fields[i]) || (e->filler && l->fields[i].role == FR_SITE))
			continue;
		if (!map(ctx, e->val[i], &to)) {
			char where[KMETA_ADDR_STR_SIZE];

			pr_err(t->img->path, "%s: entry %zu: %s %s cannot be mapped to the new code",
			       t->desc->name, e->idx, l->fields[i].name,
			       kmeta_addr_str(t->img, e->val[i], where, sizeof(where)));
			return -EINVAL;
		}
		if (to == e->val[i])
			continue;
		if (kmeta_table_write_field(t, e->addr, i, to + e->flags[i])) {
			pr_err(t->img->path, "%s: entry %zu: %s out of reach of its field",
			       t->desc->name, e->idx, l->fields[i].name);
			return -ERANGE;
		}
		(*changed)++;
	}
	return 0;
}

struct sort_slot {
	struct kmeta_entry e;
	size_t old;
};

static int cmp_slot(const void *a, const void *b)
{
	const struct sort_slot *x = a, *y = b;

	if (x->e.site != y->e.site)
		return x->e.site < y->e.site ? -1 : 1;
	return x->old < y->old ? -1 : x->old > y->old;
}

/* Sort one range by site; perm[old slot] = new slot */
static int sort_range(struct kmeta_table *t, size_t first, size_t nr, size_t *perm)
{
	struct sort_slot *v = xcalloc(nr, sizeof(*v));
	unsigned char *saved;
	uint64_t base;
	size_t esize = t->layout->entry_size;
	int err = 0;

	for (size_t k = 0; k < nr && !err; k++) {
		err = kmeta_table_read_entry(t, first + k, &v[k].e);
		v[k].old = first + k;
	}
	if (err || !nr) {
		free(v);
		return err;
	}
	base = v[0].e.addr;
	sort_array(v, nr, sizeof(*v), cmp_slot);
	/* entries are read from a saved copy: slots are overwritten in a new order */
	saved = xmalloc(nr * esize);
	memcpy(saved, kmeta_bytes_at(t->img, base, nr * esize), nr * esize);
	for (size_t k = 0; k < nr && !err; k++) {
		const struct layout *l = t->layout;
		unsigned char *p = (unsigned char *)kmeta_bytes_at(t->img, base + k * esize, esize);

		memcpy(p, saved + (v[k].old - first) * esize, esize);
		for (unsigned int i = 0; i < TABLE_MAX_FIELDS && l->fields[i].name && !err; i++)
			if (is_pointer(&l->fields[i]) &&
			    !(v[k].e.filler && l->fields[i].role == FR_SITE))
				err = kmeta_table_write_field(t, base + k * esize, i,
							      v[k].e.val[i] + v[k].e.flags[i]);
		perm[v[k].old] = first + k;
	}
	free(saved);
	free(v);
	return err;
}

static bool is_sorted(struct kmeta_table *t, size_t first, size_t nr)
{
	struct kmeta_entry a, b;

	for (size_t k = 1; k < nr; k++) {
		if (kmeta_table_read_entry(t, first + k - 1, &a) || kmeta_table_read_entry(t, first + k, &b))
			return false;
		if (a.site > b.site)
			return false;
	}
	return true;
}

int kmeta_table_remap(struct kmeta_table *t, kmeta_map_fn map, void *ctx, size_t **perm,
		      size_t *changed)
{
	struct kmeta_entry e;
	size_t first = 0;

	*perm = NULL;
	*changed = 0;
	if (!t->present)
		return 0;
	if (t->desc->read) {
		pr_err(t->img->path, "%s: kmeta cannot remap this table", t->desc->name);
		return -EINVAL;
	}
	for (size_t k = 0; k < t->nr_slots; k++) {
		int err = kmeta_table_read_entry(t, k, &e);

		if (!err)
			err = remap_entry(t, &e, map, ctx, changed);
		if (err)
			return err;
	}
	if (!kmeta_table_sorted(t))
		return 0;
	for (unsigned int r = 0; r < t->nr_ranges; r++) {
		size_t nr = t->ranges[r].nr;

		if (!is_sorted(t, first, nr)) {
			if (!*perm) {
				*perm = xmalloc(t->nr_slots * sizeof(**perm));
				for (size_t k = 0; k < t->nr_slots; k++)
					(*perm)[k] = k;
			}
			if (sort_range(t, first, nr, *perm))
				return -EINVAL;
		}
		first += nr;
	}
	return 0;
}
