// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's own BTF (.BTF, read with libbpf), from which the layout of a table entry
 * is read (table.c): struct sizes, member offsets, sizes, signedness and bitfields.  Modules carry split BTF that
 * needs vmlinux as its base; kmeta does not use it and falls back to the version.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/btf.h>

#include "internal.h"

struct btf *kmeta_btf(struct kmeta_image *img)
{
	struct kmeta_sec *sec;

	if (img->btf_tried)
		return img->btf;
	img->btf_tried = true;
	if (img->is_module)
		return NULL;
	sec = kmeta_find_sec_by_name(img, ".BTF");
	if (!sec || !sec->data)
		return NULL;
	img->btf = btf__new(sec->data, sec->size);
	if (!img->btf) {
		pr_warn(img->path, ".BTF: cannot parse (%s); table layouts come from the "
			"kernel version", strerror(errno));
		img->btf = NULL;
	}
	return img->btf;
}

static const struct btf_type *find_struct(struct kmeta_image *img, const char *name)
{
	struct btf *btf = kmeta_btf(img);
	int id;

	if (!btf)
		return NULL;
	id = btf__find_by_name_kind(btf, name, BTF_KIND_STRUCT);
	return id > 0 ? btf__type_by_id(btf, id) : NULL;
}

int kmeta_btf_struct_size(struct kmeta_image *img, const char *name)
{
	const struct btf_type *t = find_struct(img, name);

	return t ? (int)t->size : -ENOENT;
}

static bool is_composite(const struct btf_type *t)
{
	return t && (btf_is_struct(t) || btf_is_union(t));
}

/*
 * Bounds far beyond any kernel struct: a corrupt BTF can nest a struct in itself, or
 * many times over in each of its anonymous members (exponential without a budget).
 */
#define MAX_NESTING 32
#define MAX_ANON_VISITS 1024

/* What a member's type is, for reading it: typedefs, const and volatile resolved */
static void member_type(const struct btf *btf, const struct btf_type *t, int i,
			struct kmeta_btf_member *out)
{
	const struct btf_member *m = btf_members(t) + i;
	int id = btf__resolve_type(btf, m->type);
	const struct btf_type *mt = id >= 0 ? btf__type_by_id(btf, id) : NULL;

	out->bit_size = btf_member_bitfield_size(t, i);
	out->size = mt && (btf_is_int(mt) || btf_is_enum(mt) || btf_is_enum64(mt)) ? mt->size :
		    mt && btf_is_ptr(mt) ? 8 : 0;
	out->is_pointer = mt && btf_is_ptr(mt);
	out->is_signed = mt && ((btf_is_int(mt) && (btf_int_encoding(mt) & BTF_INT_SIGNED)) ||
				((btf_is_enum(mt) || btf_is_enum64(mt)) && btf_kflag(mt)));
}

/*
 * Flatten t's members into out (anonymous structs and unions opened, at most *budget of
 * them): their count
 */
static int flatten_members(const struct btf *btf, const struct btf_type *t, unsigned int base,
			   struct kmeta_btf_member *out, int nr, int max, unsigned int depth,
			   unsigned int *budget)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t) && nr >= 0; i++, m++) {
		const char *name = btf__name_by_offset(btf, m->name_off);
		const struct btf_type *mt = btf__type_by_id(btf, btf__resolve_type(btf, m->type));
		unsigned int off = base + btf_member_bit_offset(t, i);

		if (!name || !name[0]) {
			if (!is_composite(mt) || depth >= MAX_NESTING || !*budget)
				return -EPROTO;
			--*budget;
			nr = flatten_members(btf, mt, off, out, nr, max, depth + 1, budget);
			continue;
		}
		if (nr >= max)
			return -E2BIG;
		out[nr] = (struct kmeta_btf_member){ .name = name, .bit_off = off };
		member_type(btf, t, i, &out[nr]);
		nr++;
	}
	return nr;
}

int kmeta_btf_struct_members(struct kmeta_image *img, const char *sname,
			     struct kmeta_btf_member *out, int max)
{
	const struct btf_type *t = find_struct(img, sname);
	unsigned int budget = MAX_ANON_VISITS;

	if (!t)
		return -ENOENT;
	return flatten_members(img->btf, t, 0, out, 0, max, 0, &budget);
}

/* Append the dotted path of the member at byte off of t to buf; false if none */
static bool member_path(const struct btf *btf, const struct btf_type *t, unsigned int off,
			char *buf, size_t size, unsigned int depth)
{
	const struct btf_member *m = btf_members(t);

	for (int i = 0; i < btf_vlen(t); i++, m++) {
		unsigned int moff = btf_member_bit_offset(t, i) / 8;
		const struct btf_type *mt = btf__type_by_id(btf, btf__resolve_type(btf, m->type));
		long msize = btf__resolve_size(btf, m->type);
		const char *name = btf__name_by_offset(btf, m->name_off);
		size_t n = strlen(buf);

		if (msize <= 0 || off < moff || off >= moff + msize)
			continue;
		if (name && name[0])
			snprintf(buf + n, size - n, "%s%s", n ? "." : "", name);
		if (is_composite(mt))
			return depth < MAX_NESTING &&
			       member_path(btf, mt, off - moff, buf, size, depth + 1);
		return off == moff;
	}
	return false;
}

int kmeta_btf_member_at(struct kmeta_image *img, const char *sname, unsigned int off,
			char *buf, size_t size)
{
	const struct btf_type *t = find_struct(img, sname);

	if (!t || !size)
		return -ENOENT;
	buf[0] = 0;
	return member_path(img->btf, t, off, buf, size, 0) ? 0 : -ENOENT;
}

void btf_free(struct kmeta_image *img)
{
	btf__free(img->btf);
	img->btf = NULL;
}
