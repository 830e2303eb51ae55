// SPDX-License-Identifier: GPL-2.0
/*
 * The generic table engine: find a table (its __start_/__stop_ symbols first, its section
 * otherwise), choose its entry layout (BTF first, kernel version otherwise; never a
 * guess), and read, classify and format its entries.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "table.h"

static const struct field *layout_field(const struct layout *l, unsigned int i)
{
	return i < TABLE_MAX_FIELDS && l->fields[i].name ? &l->fields[i] : NULL;
}

static const char *field_btf_name(const struct field *f)
{
	return f->btf ? f->btf : f->name;
}

static bool layout_matches_version(const struct layout *l, unsigned int v)
{
	return (!l->min_version || v >= l->min_version) && (!l->max_version || v <= l->max_version);
}

#define MAX_BTF_MEMBERS 32

/* Why a template does not fit the kernel's struct, for the one line of an error */
struct misfit {
	int fields_matched;
	char why[160];
};

static bool is_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && (p = strstr(p, name)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

static const struct kmeta_btf_member *find_member(const struct kmeta_btf_member *m, int nr,
						  const char *name)
{
	for (int i = 0; i < nr; i++)
		if (!strcmp(m[i].name, name))
			return &m[i];
	return NULL;
}

static bool is_pointer_kind(unsigned int kind)
{
	return kind == FK_PCREL32 || kind == FK_PCREL64 || kind == FK_ABS64;
}

/* The kind that reads an integer of size bytes */
static int int_kind(unsigned int size, bool is_signed)
{
	static const int kinds[2][4] = { { FK_U8, FK_U16, FK_U32, FK_U64 },
					 { FK_S8, FK_S16, FK_S32, FK_S64 } };

	switch (size) {
	case 1: return kinds[is_signed][0];
	case 2: return kinds[is_signed][1];
	case 4: return kinds[is_signed][2];
	case 8: return kinds[is_signed][3];
	}
	return -1;
}

/*
 * Field f of a template at the place and width BTF gives its member: a pointer keeps its
 * template kind if the member's size is that kind's; a value takes the member's size and
 * signedness; a bitfield is read from the smallest unit holding it.
 */
static bool derive_field(struct field *f, const struct kmeta_btf_member *m, unsigned int size,
			 struct misfit *mf)
{
	unsigned int want = f->kind == FK_PCREL32 ? 4 : 8;
	int kind;

	if (is_pointer_kind(f->kind)) {
		if (m->bit_size || m->size != want) {
			snprintf(mf->why, sizeof(mf->why), "member '%s' is %u bytes, not the %u "
				 "of a %s pointer", m->name, m->size, want,
				 f->kind == FK_ABS64 ? "64-bit" : "relative");
			return false;
		}
		f->off = m->bit_off / 8;
		if (!(m->bit_off % 8))
			return true;
		snprintf(mf->why, sizeof(mf->why), "member '%s' is at bit %u, not on a byte",
			 m->name, m->bit_off);
		return false;
	}
	if (m->bit_size) {
		unsigned int shift = m->bit_off % 8, units = (shift + m->bit_size + 7) / 8;

		/* the unit read must lie inside the entry: 3 bytes are read as 4 */
		if (units == 3 && m->bit_off / 8 + 4 > size)
			units = 5;
		kind = units <= 4 ? int_kind(units == 3 ? 4 : units, false) : -1;
		f->bit_shift = shift;
		f->bit_width = m->bit_size;
	} else {
		kind = m->bit_off % 8 ? -1 : int_kind(m->size, m->is_signed);
	}
	if (kind < 0) {
		snprintf(mf->why, sizeof(mf->why), "member '%s' (%u bits at bit %u) is not an "
			 "integer kmeta reads", m->name, m->bit_size ? m->bit_size : m->size * 8,
			 m->bit_off);
		return false;
	}
	f->off = m->bit_off / 8;
	f->kind = kind;
	return true;
}

/* Is every member of the struct a field of l or one it covers?  The first that is not */
static const struct kmeta_btf_member *unknown_member(const struct layout *l,
						     const struct kmeta_btf_member *m, int nr)
{
	for (int k = 0; k < nr; k++) {
		bool known = is_listed(l->btf_covered, m[k].name);

		for (unsigned int i = 0; !known && layout_field(l, i); i++)
			known = !strcmp(field_btf_name(&l->fields[i]), m[k].name);
		if (!known)
			return &m[k];
	}
	return NULL;
}

/* Template l read at the places of the struct's members into out; false and why if not */
static bool derive_layout(const struct layout *l, const struct kmeta_btf_member *m, int nr,
			  unsigned int size, struct layout *out, struct misfit *mf)
{
	const struct kmeta_btf_member *u = unknown_member(l, m, nr);

	*out = *l;
	out->entry_size = size;
	mf->fields_matched = 0;
	for (unsigned int i = 0; layout_field(l, i); i++) {
		const char *name = field_btf_name(&l->fields[i]);
		const struct kmeta_btf_member *fm;

		if (!name[0]) {	/* not in BTF: as the template has it, if the size agrees */
			if (l->entry_size == size)
				continue;
			snprintf(mf->why, sizeof(mf->why), "is %u bytes where layout %s has %u",
				 size, l->name, l->entry_size);
			return false;
		}
		fm = find_member(m, nr, name);
		if (!fm) {
			snprintf(mf->why, sizeof(mf->why), "has no member '%s'", name);
			return false;
		}
		if (!derive_field(&out->fields[i], fm, size, mf))
			return false;
		mf->fields_matched++;
	}
	if (u) {
		snprintf(mf->why, sizeof(mf->why), "has member '%s' (at +%u), which kmeta does "
			 "not know", u->name, u->bit_off / 8);
		return false;
	}
	return true;
}

static bool same_layout(const struct layout *a, const struct layout *b)
{
	return a->entry_size == b->entry_size && !memcmp(a->fields, b->fields, sizeof(a->fields));
}

/*
 * The layout from the kernel's BTF: the first template that fits, named as the template
 * when BTF gives its offsets exactly (the cross-check), "btf" when it moves them.
 */
static int layout_from_btf(struct kmeta_table *t, int size)
{
	const struct table_desc *d = t->desc;
	struct kmeta_btf_member m[MAX_BTF_MEMBERS];
	struct misfit best = { -1, "" }, mf;
	struct layout out;
	int nr = kmeta_btf_struct_members(t->img, d->btf_struct, m, MAX_BTF_MEMBERS);

	if (nr < 0) {
		pr_err(t->img->path, "%s: struct %s in the kernel's BTF cannot be read (%s)",
		       d->name, d->btf_struct, strerror(-nr));
		return -EPROTO;
	}
	for (unsigned int i = 0; i < d->nr_layouts; i++) {
		if (derive_layout(&d->layouts[i], m, nr, size, &out, &mf)) {
			t->btf_layout = xmalloc(sizeof(out));
			*t->btf_layout = out;
			if (!same_layout(&out, &d->layouts[i]))
				t->btf_layout->name = "btf";
			t->layout = t->btf_layout;
			return 0;
		}
		if (mf.fields_matched > best.fields_matched)
			best = mf;
	}
	pr_err(t->img->path, "%s: struct %s in the kernel's BTF (%d bytes) %s; see "
	       "Documentation/tables.rst", d->name, d->btf_struct, size, best.why);
	return -EPROTO;
}

static int choose_layout(struct kmeta_table *t)
{
	const struct table_desc *d = t->desc;
	struct kmeta_image *img = t->img;
	int size = d->btf_struct ? kmeta_btf_struct_size(img, d->btf_struct) : -ENOENT;

	if (size >= 0)
		return layout_from_btf(t, size);
	for (unsigned int i = 0; i < d->nr_layouts; i++) {
		if (layout_matches_version(&d->layouts[i], img->version)) {
			t->layout = &d->layouts[i];
			return 0;
		}
	}
	pr_err(img->path, "%s: no known entry layout for kernel release '%s' and no BTF "
	       "describing it", d->name, img->release[0] ? img->release : "(unknown)");
	return -EPROTO;
}

static unsigned int kind_size(unsigned int kind)
{
	switch (kind) {
	case FK_U8: case FK_S8: return 1;
	case FK_U16: case FK_S16: return 2;
	case FK_U32: case FK_S32: case FK_PCREL32: return 4;
	}
	return 8;
}

/* Bytes of an entry up to the end of its last field: what a cut last entry must hold */
static unsigned int layout_extent(const struct layout *l)
{
	unsigned int end = 0;

	for (unsigned int i = 0; layout_field(l, i); i++)
		if (l->fields[i].off + kind_size(l->fields[i].kind) > end)
			end = l->fields[i].off + kind_size(l->fields[i].kind);
	return end;
}

int table_add_range(struct kmeta_table *t, uint64_t start, uint64_t stop, const char *name)
{
	unsigned int esize = t->layout->entry_size;
	uint64_t cut = 0;

	if (stop < start) {
		pr_err(t->img->path, "%s: %s ends at 0x%" PRIx64 ", before its start 0x%" PRIx64,
		       t->desc->name, name, stop, start);
		return -EINVAL;
	}
	if ((stop - start) % esize && t->layout->cut_tail &&
	    (stop - start) % esize >= layout_extent(t->layout))
		cut = esize - (stop - start) % esize;
	if ((stop - start + cut) % esize) {
		pr_err(t->img->path, "%s: %s is %" PRIu64 " bytes, not a multiple of the "
		       "%u-byte entry", t->desc->name, name, stop - start, esize);
		return -EINVAL;
	}
	if (stop > start && !kmeta_bytes_at(t->img, start, stop - start)) {
		pr_err(t->img->path, "%s: %s [0x%" PRIx64 ", 0x%" PRIx64 ") is not inside one "
		       "section with contents", t->desc->name, name, start, stop);
		return -EINVAL;
	}
	t->ranges = xrealloc(t->ranges, (t->nr_ranges + 1) * sizeof(*t->ranges));
	t->ranges[t->nr_ranges++] = (struct table_range){ start, stop - start, name,
							  (stop - start + cut) / esize };
	t->nr_slots += (stop - start + cut) / esize;
	t->present = true;
	return 0;
}

int table_locate_by_syms(struct kmeta_table *t, const char *start, const char *stop)
{
	struct kmeta_sym *a = kmeta_find_sym_by_name(t->img, start);
	struct kmeta_sym *b = kmeta_find_sym_by_name(t->img, stop);

	if (!a || !b)
		return 1;	/* not found: the caller tries the section */
	return table_add_range(t, a->addr, b->addr, start);
}

static int locate(struct kmeta_table *t)
{
	const struct table_desc *d = t->desc;
	struct kmeta_sec *sec;
	int err;

	if (d->locate)
		return d->locate(t);
	if (d->start_sym && !t->img->is_module) {
		err = table_locate_by_syms(t, d->start_sym, d->stop_sym);
		if (err <= 0)
			return err;
	}
	sec = d->sec_name ? kmeta_find_sec_by_name(t->img, d->sec_name) : NULL;
	if (!sec)
		return 0;
	if (!sec->data) {
		pr_err(t->img->path, "%s: section %s has no contents", d->name, sec->name);
		return -EINVAL;
	}
	return table_add_range(t, sec->addr, sec->addr + sec->size, sec->name);
}

/* Whether the image has the table at all: a layout is chosen only for tables it has */
static bool is_present(struct kmeta_table *t)
{
	const struct table_desc *d = t->desc;
	struct kmeta_image *img = t->img;

	if (d->probe)
		return d->probe(t);
	if (d->start_sym && !img->is_module && kmeta_find_sym_by_name(img, d->start_sym) &&
	    kmeta_find_sym_by_name(img, d->stop_sym))
		return true;
	return d->sec_name && kmeta_find_sec_by_name(img, d->sec_name);
}

/* Are the real entries' sites in ascending order (filler aside)? */
static bool sites_in_order(struct kmeta_table *t)
{
	struct kmeta_entry e;
	uint64_t prev = 0;

	for (size_t i = 0; i < t->nr_slots; i++) {
		if (kmeta_table_read_entry(t, i, &e))
			return false;
		if (e.filler)
			continue;
		if (e.site < prev)
			return false;
		prev = e.site;
	}
	return true;
}

static struct kmeta_table *table_new(struct kmeta_image *img, const struct table_desc *d)
{
	struct kmeta_table *t = xcalloc(1, sizeof(*t));

	t->desc = d;
	t->img = img;
	if (!is_present(t))
		return t;
	if (choose_layout(t) || locate(t)) {	/* said once: kept as broken */
		free(t->ranges);
		free(t->btf_layout);
		*t = (struct kmeta_table){ .desc = d, .img = img, .broken = true };
		return t;
	}
	t->sorted = d->sorted && (!d->sort_optional || sites_in_order(t));
	return t;
}

struct kmeta_table *kmeta_table_get(struct kmeta_image *img, const struct table_desc *d)
{
	unsigned int i;

	for (i = 0; i < kmeta_nr_table_descs && kmeta_table_descs[i] != d; i++)
		;
	if (i == kmeta_nr_table_descs)
		return NULL;
	if (!img->tables)
		img->tables = xcalloc(kmeta_nr_table_descs, sizeof(*img->tables));
	if (!img->tables[i])
		img->tables[i] = table_new(img, d);
	return img->tables[i]->broken ? NULL : img->tables[i];
}

int kmeta_table_get_all(struct kmeta_image *img)
{
	for (unsigned int i = 0; i < kmeta_nr_table_descs; i++)
		if (!kmeta_table_get(img, kmeta_table_descs[i]))
			return -EPROTO;
	return 0;
}

const struct table_desc *kmeta_table_find_desc(const char *name)
{
	for (unsigned int i = 0; i < kmeta_nr_table_descs; i++)
		if (!strcmp(kmeta_table_descs[i]->name, name))
			return kmeta_table_descs[i];
	return NULL;
}

static uint64_t read_field(const unsigned char *p, const struct field *f, uint64_t field_addr,
			   uint64_t *raw)
{
	switch (f->kind) {
	case FK_U8:	return *raw = p[0];
	case FK_U16:	return *raw = get_u16(p);
	case FK_U32:	return *raw = get_u32(p);
	case FK_U64:	return *raw = get_u64(p);
	case FK_S8:	return *raw = (uint64_t)(int64_t)(int8_t)p[0];
	case FK_S64:	return *raw = get_u64(p);
	case FK_S16:	return *raw = (uint64_t)(int64_t)(int16_t)get_u16(p);
	case FK_S32:	return *raw = (uint64_t)(int64_t)(int32_t)get_u32(p);
	case FK_PCREL32:
		*raw = (uint64_t)(int64_t)(int32_t)get_u32(p);
		return field_addr + *raw;
	case FK_PCREL64:
		*raw = get_u64(p);
		return field_addr + *raw;
	case FK_ABS64:
	default:
		return *raw = get_u64(p);
	}
}

int table_decode_at(struct kmeta_table *t, uint64_t addr, struct kmeta_entry *e)
{
	const struct layout *l = t->layout;
	const unsigned char *p = kmeta_bytes_at(t->img, addr, layout_extent(l));

	if (!p)
		return -EINVAL;
	e->addr = addr;
	e->site = 0;
	e->filler = false;
	for (unsigned int i = 0; layout_field(l, i); i++) {
		const struct field *f = &l->fields[i];

		e->val[i] = read_field(p + f->off, f, addr + f->off, &e->raw[i]);
		if (f->bit_width)
			e->raw[i] = e->val[i] = (e->val[i] >> f->bit_shift) &
						((1ULL << f->bit_width) - 1);
		e->flags[i] = e->val[i] & ((1ULL << f->flag_bits) - 1);
		e->val[i] -= e->flags[i];
		if (f->role == FR_SITE) {
			e->site = e->val[i];
			e->filler = e->raw[i] == 0;
		}
	}
	return 0;
}

int kmeta_table_read_entry(struct kmeta_table *t, size_t idx, struct kmeta_entry *e)
{
	size_t left = idx;

	if (t->desc->read)
		return t->desc->read(t, idx, e);
	for (unsigned int r = 0; r < t->nr_ranges; r++) {
		size_t n = t->ranges[r].nr;

		if (left < n) {
			e->idx = idx;
			e->range = r;
			return table_decode_at(t, t->ranges[r].addr + left * t->layout->entry_size, e);
		}
		left -= n;
	}
	return -ERANGE;
}

const char *sym_name_at(struct kmeta_image *img, uint64_t addr)
{
	struct kmeta_sym *sym = kmeta_find_sym_at(img, addr);

	return sym ? sym->name : NULL;
}

void kmeta_table_format_field(struct kmeta_table *t, const struct kmeta_entry *e, unsigned int i,
			      char *buf, size_t size)
{
	const struct field *f = &t->layout->fields[i];

	if (t->desc->format && t->desc->format(t, e, i, buf, size))
		return;
	switch (f->role) {
	case FR_SITE:
	case FR_CODE:
	case FR_DATA:
		kmeta_addr_str(t->img, e->val[i], buf, size);
		if (e->flags[i]) {
			size_t n = strlen(buf);

			snprintf(buf + n, size - n, "|0x%x", e->flags[i]);
		}
		break;
	default:
		if (f->hex)
			snprintf(buf, size, "0x%" PRIx64, e->val[i]);
		else if (f->kind == FK_S16 || f->kind == FK_S32)
			snprintf(buf, size, "%" PRId64, (int64_t)e->val[i]);
		else
			snprintf(buf, size, "%" PRIu64, e->val[i]);
	}
}

int table_field_idx(const struct kmeta_table *t, const char *name)
{
	for (unsigned int k = 0; k < TABLE_MAX_FIELDS && t->layout->fields[k].name; k++)
		if (!strcmp(t->layout->fields[k].name, name))
			return k;
	return -1;
}

uint64_t kmeta_table_rewrite_value(const struct kmeta_table *t, const struct kmeta_entry *e)
{
	int k = t->desc->rewrite.field ? table_field_idx(t, t->desc->rewrite.field) : -1;

	return k >= 0 ? e->val[k] : 0;
}

bool kmeta_table_entry_glued(const struct kmeta_table *t, const struct kmeta_entry *e)
{
	return kmeta_table_rewrite_value(t, e) & t->desc->rewrite.glue_mask;
}

bool kmeta_table_entry_resumes(const struct kmeta_table *t, const struct kmeta_entry *e)
{
	uint64_t v = kmeta_table_rewrite_value(t, e);

	return kmeta_table_has(t, TR_MAY_RESUME) && (v & t->desc->rewrite.mask) &&
	       !(v & t->desc->rewrite.not_mask);
}

/* The located table one of whose ranges is the whole of sec, NULL if none or on error */
static struct kmeta_table *table_of_sec(struct kmeta_image *img, const struct kmeta_sec *sec)
{
	for (unsigned int d = 0; sec->size && d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *t = kmeta_table_get(img, kmeta_table_descs[d]);

		for (unsigned int r = 0; t && t->present && r < t->nr_ranges; r++)
			if (t->ranges[r].addr == sec->addr && t->ranges[r].size == sec->size)
				return t;
	}
	return NULL;
}

unsigned int *kmeta_table_flags_by_sec(struct kmeta_image *img)
{
	unsigned int *flags = xcalloc(img->nr_secs, sizeof(*flags));

	for (size_t i = 1; i < img->nr_secs; i++) {
		struct kmeta_table *t = table_of_sec(img, &img->secs[i]);

		flags[i] = t ? t->desc->rewrite.flags : 0;
	}
	return flags;
}

const char *kmeta_table_site_area(struct kmeta_table *t, uint64_t site)
{
	struct kmeta_sec *sec = kmeta_find_sec_containing(t->img, site);

	if (sec && !strcmp(sec->name, ".text"))
		return ".text";
	if (sec && !strcmp(sec->name, ".init.text"))
		return ".init.text";
	return "other";
}

void table_free_all(struct kmeta_image *img)
{
	if (!img->tables)
		return;
	for (unsigned int i = 0; i < kmeta_nr_table_descs; i++) {
		struct kmeta_table *t = img->tables[i];

		if (!t)
			continue;
		if (t->desc->free_priv)
			t->desc->free_priv(t);
		free(t->ranges);
		free(t->btf_layout);
		free(t);
	}
	free(img->tables);
	img->tables = NULL;
}
