// SPDX-License-Identifier: GPL-2.0
/*
 * Relocations.  A vmlinux linked with --emit-relocs (CONFIG_RELOCATABLE, 6.1) keeps a
 * .rela section for each allocated section, with r_offset a virtual address; kmeta
 * indexes them by location, lazily, because most commands never need them.  A module's
 * relocations are applied when it is read (its table fields are zero until then), and
 * indexed on the way.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

typedef int (*reloc_fn)(struct kmeta_image *img, struct kmeta_sec *target,
			struct kmeta_reloc *r, size_t idx);

/* The allocated section that rsec relocates, NULL if rsec is not such a .rela */
static struct kmeta_sec *rela_target(struct kmeta_image *img, struct kmeta_sec *rsec)
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

/* Call fn for every relocation of rsec, which applies to target */
static int for_each_reloc_of(struct kmeta_image *img, struct kmeta_sec *rsec,
			     struct kmeta_sec *target, reloc_fn fn)
{
	Elf_Data *data = elf_getdata(rsec->scn, NULL);
	GElf_Shdr sh;

	img->has_relocs = true;
	if (!data || !gelf_getshdr(rsec->scn, &sh) || !sh.sh_entsize ||
	    sh.sh_size % sh.sh_entsize) {
		pr_err(img->path, "%s: cannot read: %s", rsec->name, elf_errmsg(-1));
		return -EINVAL;
	}
	for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
		struct kmeta_reloc r;
		GElf_Rela rela;
		size_t symi;
		int err;

		if (!gelf_getrela(data, k, &rela)) {
			pr_err(img->path, "%s: cannot read entry %zu: %s", rsec->name, k,
			       elf_errmsg(-1));
			return -EINVAL;
		}
		symi = GELF_R_SYM(rela.r_info);
		if (symi >= img->nr_syms) {
			pr_err(img->path, "%s: entry %zu: symbol %zu out of range",
			       rsec->name, k, symi);
			return -EINVAL;
		}
		r.sym = &img->syms[symi];
		r.type = GELF_R_TYPE(rela.r_info);
		r.addend = rela.r_addend;
		r.addr = img->is_module ? target->addr + rela.r_offset : rela.r_offset;
		r.target = r.sym->addr + r.addend;
		err = fn(img, target, &r, k);
		if (err)
			return err;
	}
	return 0;
}

/* Call fn for every relocation that applies to an allocated section. */
static int for_each_alloc_reloc(struct kmeta_image *img, reloc_fn fn)
{
	for (size_t i = 1; i < img->nr_secs; i++) {
		struct kmeta_sec *target = rela_target(img, &img->secs[i]);
		int err = target ? for_each_reloc_of(img, &img->secs[i], target, fn) : 0;

		if (err)
			return err;
	}
	return 0;
}

static int append_reloc(struct kmeta_image *img, struct kmeta_sec *target,
			struct kmeta_reloc *r, size_t idx)
{
	(void)target; (void)idx;
	if (r->type == R_X86_64_NONE)	/* 6.1 voids .rela__ex_table after sorting it */
		return 0;
	GROW(img->relocs, img->relocs_cap, img->nr_relocs + 1);
	img->relocs[img->nr_relocs++] = *r;
	return 0;
}

static int cmp_reloc_addr(const void *a, const void *b)
{
	const struct kmeta_reloc *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

struct rela_sec {
	struct kmeta_sec *rsec, *target;
};

static int cmp_rela_target(const void *a, const void *b)
{
	const struct rela_sec *x = a, *y = b;

	if (x->target->addr != y->target->addr)
		return x->target->addr < y->target->addr ? -1 : 1;
	return 0;
}

/*
 * The .rela sections to index, in the order of the sections they apply to.  Not
 * .rela.orc_unwind_ip: one relocation per ORC slot, a third of all, that says no more
 * than the ORC table itself (kbolt regenerates it whole).
 */
static struct rela_sec *relas_to_index(struct kmeta_image *img, size_t *nr, size_t *nr_entries)
{
	struct rela_sec *v = xcalloc(img->nr_secs, sizeof(*v));

	*nr = *nr_entries = 0;
	for (size_t i = 1; i < img->nr_secs; i++) {
		struct kmeta_sec *target = rela_target(img, &img->secs[i]);

		if (!target || !strcmp(target->name, ".orc_unwind_ip"))
			continue;
		v[(*nr)++] = (struct rela_sec){ &img->secs[i], target };
		*nr_entries += img->secs[i].size / 24;
	}
	sort_array(v, *nr, sizeof(*v), cmp_rela_target);
	return v;
}

static bool relocs_sorted(const struct kmeta_image *img)
{
	for (size_t k = 1; k < img->nr_relocs; k++)
		if (img->relocs[k].addr < img->relocs[k - 1].addr)
			return false;
	return true;
}

/*
 * The linker writes each .rela in r_offset order and sections do not overlap, so
 * reading them in address order usually gives a sorted index without sorting a
 * million entries (and without qsort's copy of them).
 */
int kmeta_index_relocs(struct kmeta_image *img)
{
	size_t nr, nr_entries;
	struct rela_sec *v;
	int err = 0;

	if (img->relocs_indexed)
		return 0;
	img->relocs_indexed = true;
	v = relas_to_index(img, &nr, &nr_entries);
	GROW(img->relocs, img->relocs_cap, nr_entries);
	for (size_t i = 0; i < nr && !err; i++)
		err = for_each_reloc_of(img, v[i].rsec, v[i].target, append_reloc);
	free(v);
	if (err)
		return err;
	if (!relocs_sorted(img))
		sort_array(img->relocs, img->nr_relocs, sizeof(*img->relocs), cmp_reloc_addr);
	return 0;
}

struct kmeta_reloc *kmeta_find_reloc_at(struct kmeta_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nr_relocs;

	if (kmeta_index_relocs(img))
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->relocs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < img->nr_relocs && img->relocs[lo].addr == addr ? &img->relocs[lo] : NULL;
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
		     struct kmeta_reloc *r, size_t idx)
{
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
	return for_each_alloc_reloc(img, apply_one);
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
