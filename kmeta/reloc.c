// SPDX-License-Identifier: GPL-2.0
/*
 * Relocations.  A vmlinux linked with --emit-relocs (CONFIG_RELOCATABLE, 6.1) keeps a
 * .rela section for each allocated section, with r_offset a virtual address.  They are
 * read where they lie, never copied into an index: a million of them would cost tens
 * of megabytes, and the linker writes each .rela in r_offset order already, so a point
 * lookup is a binary search of the section's own entries (an order array is built for
 * a section that is not sorted).  A module's relocations are applied when it is read
 * (its table fields are zero until then).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define RELA_SIZE 24		/* sizeof(Elf64_Rela) */

typedef int (*reloc_fn)(struct kmeta_image *img, struct kmeta_sec *target,
			struct kmeta_reloc *r, size_t idx, void *ctx);

struct kmeta_sec *kmeta_rela_target(struct kmeta_image *img, struct kmeta_sec *rsec)
{
	GElf_Shdr sh;

	if (rsec->type != SHT_RELA || !gelf_getshdr(rsec->scn, &sh))
		return NULL;
	if (!sh.sh_info || sh.sh_info >= img->nr_secs)
		return NULL;
	if (!(img->secs[sh.sh_info].flags & SHF_ALLOC))
		return NULL;
	return &img->secs[sh.sh_info];
}

/* The entries of rsec, NULL (said) if they cannot be read as Elf64_Rela */
static const unsigned char *rela_entries(struct kmeta_image *img, struct kmeta_sec *rsec,
					 size_t *nr)
{
	Elf_Data *data = elf_getdata(rsec->scn, NULL);
	GElf_Shdr sh;

	if (!data || !gelf_getshdr(rsec->scn, &sh)) {
		pr_err(img->path, "%s: cannot read: %s", rsec->name, elf_errmsg(-1));
		return NULL;
	}
	if (sh.sh_entsize != RELA_SIZE || data->d_size % RELA_SIZE ||
	    (data->d_size && !data->d_buf)) {
		pr_err(img->path, "%s: cannot read: not Elf64_Rela entries", rsec->name);
		return NULL;
	}
	*nr = data->d_size / RELA_SIZE;
	/* an empty section has no buffer: no entries, not an error */
	return *nr ? data->d_buf : (const unsigned char *)"";
}

/* Entry k of rsec (entries e) as a kmeta_reloc; -EINVAL (said) for a bad symbol */
static int read_reloc(struct kmeta_image *img, struct kmeta_sec *rsec, struct kmeta_sec *target,
		      const unsigned char *e, size_t k, struct kmeta_reloc *r)
{
	uint64_t info = get_u64(e + k * RELA_SIZE + 8);
	size_t symi = GELF_R_SYM(info);

	if (symi >= img->nr_syms) {
		pr_err(img->path, "%s: entry %zu: symbol %zu out of range", rsec->name, k, symi);
		return -EINVAL;
	}
	r->sym = &img->syms[symi];
	r->type = GELF_R_TYPE(info);
	r->addend = (int64_t)get_u64(e + k * RELA_SIZE + 16);
	r->addr = get_u64(e + k * RELA_SIZE);
	if (img->is_module)
		r->addr += target->addr;
	r->target = r->sym->addr + r->addend;
	return 0;
}

/*
 * Call fn for the relocations of rsec, which applies to target, numbered [first, last)
 * when the numbers of the ones before rsec start at *base (then moved past rsec's)
 */
static int for_each_reloc_of(struct kmeta_image *img, struct kmeta_sec *rsec,
			     struct kmeta_sec *target, size_t *base, size_t first, size_t last,
			     reloc_fn fn, void *ctx)
{
	const unsigned char *e;
	size_t nr, from, to;

	if (!(e = rela_entries(img, rsec, &nr)))
		return -EINVAL;
	from = first > *base ? first - *base : 0;
	to = last - *base < nr ? last - *base : nr;
	*base += nr;
	for (size_t k = from; k < to; k++) {
		struct kmeta_reloc r;
		int err = read_reloc(img, rsec, target, e, k, &r);

		if (!err)
			err = fn(img, target, &r, k, ctx);
		if (err)
			return err;
	}
	return 0;
}

/* Call fn for the relocations numbered [first, last) of those of allocated sections */
static int for_each_alloc_reloc(struct kmeta_image *img, size_t first, size_t last,
				reloc_fn fn, void *ctx)
{
	size_t base = 0;

	for (size_t i = 1; i < img->nr_secs && base < last; i++) {
		struct kmeta_sec *target = kmeta_rela_target(img, &img->secs[i]);
		int err = target ? for_each_reloc_of(img, &img->secs[i], target, &base, first,
						     last, fn, ctx) : 0;

		if (err)
			return err;
	}
	return 0;
}

/* From the headers alone: an unreadable .rela is the walk's to report */
size_t kmeta_nr_relocs(struct kmeta_image *img)
{
	size_t total = 0;
	GElf_Shdr sh;

	for (size_t i = 1; i < img->nr_secs; i++)
		if (kmeta_rela_target(img, &img->secs[i]) &&
		    gelf_getshdr(img->secs[i].scn, &sh))
			total += sh.sh_size / RELA_SIZE;
	return total;
}

struct visit {
	kmeta_reloc_fn fn;
	void *ctx;
};

static int visit_one(struct kmeta_image *img, struct kmeta_sec *target, struct kmeta_reloc *r,
		     size_t idx, void *ctx)
{
	struct visit *v = ctx;

	(void)img; (void)idx;
	if (r->type == R_X86_64_NONE)	/* 6.1 voids .rela__ex_table after sorting it */
		return 0;
	return v->fn(v->ctx, target, r);
}

int kmeta_for_each_reloc(struct kmeta_image *img, kmeta_reloc_fn fn, void *ctx)
{
	return kmeta_for_each_reloc_in(img, 0, SIZE_MAX, fn, ctx);
}

int kmeta_for_each_reloc_in(struct kmeta_image *img, size_t first, size_t last,
			    kmeta_reloc_fn fn, void *ctx)
{
	return for_each_alloc_reloc(img, first, last, visit_one, &(struct visit){ fn, ctx });
}

/* Point lookups in one relocated section: its .rela's entries, in r_offset order */
struct rela_lookup {
	struct kmeta_sec *rsec;
	const unsigned char *e;
	size_t nr;
	uint32_t *order;	/* entry indexes by r_offset; NULL if the entries are sorted */
};

static uint64_t r_offset(const struct rela_lookup *l, size_t i)
{
	return get_u64(l->e + (l->order ? l->order[i] : i) * RELA_SIZE);
}

/* qsort_r(), not qsort(): kbolt reads two images in two threads */
static int cmp_by_offset(const void *a, const void *b, void *arg)
{
	const struct rela_lookup *l = arg;
	uint64_t x = get_u64(l->e + *(const uint32_t *)a * (size_t)RELA_SIZE);
	uint64_t y = get_u64(l->e + *(const uint32_t *)b * (size_t)RELA_SIZE);

	return x < y ? -1 : x > y;
}

/* An order array for entries the linker did not write sorted (none seen so far) */
static void order_entries(struct rela_lookup *l)
{
	for (size_t k = 1; k < l->nr; k++) {
		if (get_u64(l->e + k * RELA_SIZE) >= get_u64(l->e + (k - 1) * RELA_SIZE))
			continue;
		l->order = xmalloc(l->nr * sizeof(*l->order));
		for (size_t i = 0; i < l->nr; i++)
			l->order[i] = i;
		qsort_r(l->order, l->nr, sizeof(*l->order), cmp_by_offset, l);
		return;
	}
}

static void *make_lookups(void *arg)
{
	struct kmeta_image *img = arg;
	struct rela_lookup *lookups = xcalloc(img->nr_secs, sizeof(*lookups));

	for (size_t i = 1; i < img->nr_secs; i++) {
		struct kmeta_sec *target = kmeta_rela_target(img, &img->secs[i]);
		struct rela_lookup *l;

		if (!target || img->is_module)	/* a module's offsets are section-relative */
			continue;
		l = &lookups[target->idx];
		l->rsec = &img->secs[i];
		l->e = rela_entries(img, l->rsec, &l->nr);
		if (l->e && l->nr <= UINT32_MAX)
			order_entries(l);
		else
			l->nr = 0;
		/* the order check read every entry; a lookup reads a few pages again */
		kmeta_release_sec(img, l->rsec);
	}
	return lookups;
}

/* The lookup state of every relocated section, indexed by section, built once */
static struct rela_lookup *rela_lookups(struct kmeta_image *img)
{
	return get_once((void **)&img->rela_lookups, make_lookups, img);
}

void reloc_free_lookups(struct kmeta_image *img)
{
	for (size_t i = 0; img->rela_lookups && i < img->nr_secs; i++)
		free(img->rela_lookups[i].order);
	free(img->rela_lookups);
}

bool kmeta_reloc_at(struct kmeta_image *img, uint64_t addr, struct kmeta_reloc *out)
{
	struct kmeta_sec *target = kmeta_find_sec_containing(img, addr);
	const struct rela_lookup *l;
	size_t lo = 0, hi;

	if (!target)
		return false;
	l = &rela_lookups(img)[target->idx];
	hi = l->nr;
	while (lo < hi) {	/* the first entry at or after addr */
		size_t mid = lo + (hi - lo) / 2;

		if (r_offset(l, mid) < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < l->nr && r_offset(l, lo) == addr; lo++) {
		size_t k = l->order ? l->order[lo] : lo;

		if (read_reloc(img, l->rsec, target, l->e, k, out) == 0 &&
		    out->type != R_X86_64_NONE)
			return true;
	}
	return false;
}

bool kmeta_reloc_is_pcrel(uint32_t type)
{
	return type == R_X86_64_PC32 || type == R_X86_64_PLT32 || type == R_X86_64_PC64;
}

unsigned int kmeta_reloc_size(uint32_t type)
{
	return type == R_X86_64_64 || type == R_X86_64_PC64 ? 8 : 4;
}

int kmeta_reloc_value(uint32_t type, uint64_t s_a, uint64_t p, uint64_t *value)
{
	switch (type) {
	case R_X86_64_64:
	case R_X86_64_32:
	case R_X86_64_32S:
		*value = s_a;
		return 0;
	case R_X86_64_PC64:
	case R_X86_64_PC32:
	case R_X86_64_PLT32:
		*value = s_a - p;
		return 0;
	default:
		return -EINVAL;
	}
}

void kmeta_reloc_store(unsigned char *q, uint32_t type, uint64_t value)
{
	if (kmeta_reloc_size(type) == 8)
		put_u64(q, value);
	else
		put_u32(q, (uint32_t)value);
}

static int apply_one(struct kmeta_image *img, struct kmeta_sec *target,
		     struct kmeta_reloc *r, size_t idx, void *ctx)
{
	(void)ctx;
	uint64_t off = r->addr - target->addr, v;
	unsigned int size = kmeta_reloc_size(r->type);

	if (r->type == R_X86_64_NONE)
		return 0;
	if (!target->data || off > target->size || size > target->size - off) {
		if (target->type == SHT_NOBITS)
			return 0;
		pr_err(img->path, ".rela%s: entry %zu: offset 0x%llx outside the section",
		       target->name, idx, (unsigned long long)off);
		return -EINVAL;
	}
	if (kmeta_reloc_value(r->type, r->target, r->addr, &v)) {
		pr_err(img->path, ".rela%s: entry %zu: relocation type %u not handled",
		       target->name, idx, r->type);
		return -EINVAL;
	}
	kmeta_reloc_store(target->data + off, r->type, v);
	return 0;
}

int reloc_apply_module(struct kmeta_image *img)
{
	return for_each_alloc_reloc(img, 0, SIZE_MAX, apply_one, NULL);
}

bool kmeta_reloc_holds(struct kmeta_image *img, uint32_t type, uint64_t s_a, uint64_t p)
{
	unsigned int size = kmeta_reloc_size(type);
	const unsigned char *q = kmeta_bytes_at(img, p, size);
	uint64_t want;

	if (kmeta_reloc_value(type, s_a, p, &want))
		return true;	/* not a type whose value kmeta knows */
	if (!q)
		return true;	/* not in the image's contents (.data..percpu) */
	return size == 8 ? get_u64(q) == want : get_u32(q) == (uint32_t)want;
}
