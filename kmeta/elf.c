// SPDX-License-Identifier: GPL-2.0
/*
 * Sections of a kernel image through libelf, and reading bytes by virtual address.
 * A module's (ET_REL) allocated sections have no addresses: give them synthetic ones,
 * laid out in section order with their alignment from a base in the module area.
 */
#include <errno.h>
#include <string.h>


#include "internal.h"

/* Where a module's synthetic layout starts: MODULES_VADDR on x86-64 */
#define MODULE_BASE 0xffffffffa0000000ULL

static int read_one_section(struct kmeta_image *img, Elf_Scn *scn, size_t shstrndx,
			    uint64_t *next_module_addr)
{
	struct kmeta_sec *sec = &img->secs[elf_ndxscn(scn)];
	GElf_Shdr sh;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &sh)) {
		pr_err(img->path, "section %zu: %s", elf_ndxscn(scn), elf_errmsg(-1));
		return -EINVAL;
	}
	sec->idx = elf_ndxscn(scn);
	sec->scn = scn;
	sec->name = elf_strptr(img->elf, shstrndx, sh.sh_name);
	if (!sec->name) {
		pr_err(img->path, "section %zu: bad name: %s", sec->idx, elf_errmsg(-1));
		return -EINVAL;
	}
	sec->type = sh.sh_type;
	sec->flags = sh.sh_flags;
	sec->size = sh.sh_size;
	sec->addr = sh.sh_addr;
	if (img->is_module && (sh.sh_flags & SHF_ALLOC)) {
		uint64_t align = sh.sh_addralign ? sh.sh_addralign : 1;

		sec->addr = (*next_module_addr + align - 1) & ~(align - 1);
		*next_module_addr = sec->addr + sh.sh_size;
	}
	if (sh.sh_type == SHT_NOBITS || sh.sh_type == SHT_NULL)
		return 0;
	/* DWARF is never needed: leave it unread (it is most of a debug vmlinux) */
	if (!(sh.sh_flags & SHF_ALLOC) && !strncmp(sec->name, ".debug", 6))
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data || (data->d_size != sh.sh_size)) {
		pr_err(img->path, "section %s: cannot read its data (truncated file?): %s",
		       sec->name, elf_errmsg(-1));
		return -EINVAL;
	}
	sec->data = data->d_buf;
	return 0;
}

static bool sec_contains(const struct kmeta_sec *sec, uint64_t addr)
{
	/* vmlinux links .data..percpu at 0: it has no place in the address space */
	return (sec->flags & SHF_ALLOC) && sec->addr &&
	       addr >= sec->addr && addr - sec->addr < sec->size;
}

static int cmp_sec_addr(const void *a, const void *b)
{
	const struct kmeta_sec *x = *(const struct kmeta_sec *const *)a;
	const struct kmeta_sec *y = *(const struct kmeta_sec *const *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The sections that have a place in the address space, by address, for lookups */
static void index_secs_by_addr(struct kmeta_image *img)
{
	img->secs_by_addr = xcalloc(img->nr_secs, sizeof(*img->secs_by_addr));
	for (size_t i = 1; i < img->nr_secs; i++)
		if ((img->secs[i].flags & SHF_ALLOC) && img->secs[i].addr && img->secs[i].size)
			img->secs_by_addr[img->nr_secs_by_addr++] = &img->secs[i];
	sort_array(img->secs_by_addr, img->nr_secs_by_addr, sizeof(*img->secs_by_addr),
		   cmp_sec_addr);
	for (size_t i = 1; i < img->nr_secs_by_addr; i++) {
		const struct kmeta_sec *prev = img->secs_by_addr[i - 1];

		if (img->secs_by_addr[i]->addr - prev->addr < prev->size)
			img->secs_overlap = true;
	}
}

int elf_read_sections(struct kmeta_image *img)
{
	uint64_t next_module_addr = MODULE_BASE;
	size_t shstrndx, nr;
	Elf_Scn *scn = NULL;
	int err;

	if (elf_getshdrnum(img->elf, &nr) || elf_getshdrstrndx(img->elf, &shstrndx)) {
		pr_err(img->path, "cannot read section headers: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	if (nr < 2) {
		pr_err(img->path, "no sections");
		return -EINVAL;
	}
	img->secs = xcalloc(nr, sizeof(*img->secs));
	img->nr_secs = nr;
	img->secs[0].name = "";
	while ((scn = elf_nextscn(img->elf, scn))) {
		err = read_one_section(img, scn, shstrndx, &next_module_addr);
		if (err)
			return err;
	}
	index_secs_by_addr(img);
	return 0;
}

struct kmeta_sec *kmeta_find_sec_by_name(struct kmeta_image *img, const char *name)
{
	for (size_t i = 1; i < img->nr_secs; i++)
		if (!strcmp(img->secs[i].name, name))
			return &img->secs[i];
	return NULL;
}

/* The first section by index that contains addr: what a corrupt image's lookups give */
static struct kmeta_sec *first_sec_containing(struct kmeta_image *img, uint64_t addr)
{
	for (size_t i = 1; i < img->nr_secs; i++)
		if (sec_contains(&img->secs[i], addr))
			return &img->secs[i];
	return NULL;
}

/*
 * kmeta_find_sec_containing()'s last answers, per thread, a slot per image (two images
 * may share one): table walks hit one section many times in a row, and a cache shared
 * by kbolt's threads would move between the cores at every store.  A section index,
 * checked against the image: a new image may come where a closed one was.
 */
#define SEC_CACHE 4
static __thread struct {
	const struct kmeta_image *img;
	size_t idx;
} last_sec[SEC_CACHE];

struct kmeta_sec *kmeta_find_sec_containing(struct kmeta_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nr_secs_by_addr, slot = ((uintptr_t)img >> 6) % SEC_CACHE;
	struct kmeta_sec *sec;

	if (last_sec[slot].img == img && last_sec[slot].idx < img->nr_secs &&
	    sec_contains(&img->secs[last_sec[slot].idx], addr))
		return &img->secs[last_sec[slot].idx];
	if (img->secs_overlap) {
		sec = first_sec_containing(img, addr);
	} else {
		while (lo < hi) {	/* the first section starting after addr */
			size_t mid = lo + (hi - lo) / 2;

			if (img->secs_by_addr[mid]->addr <= addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		sec = lo && sec_contains(img->secs_by_addr[lo - 1], addr) ?
		      img->secs_by_addr[lo - 1] : NULL;
	}
	if (sec) {
		last_sec[slot].img = img;
		last_sec[slot].idx = sec - img->secs;
	}
	return sec;
}

static bool sec_has_bytes(const struct kmeta_sec *sec, uint64_t addr, uint64_t size)
{
	return sec_contains(sec, addr) && sec->data && size <= sec->size - (addr - sec->addr);
}

const unsigned char *kmeta_bytes_at(struct kmeta_image *img, uint64_t addr, uint64_t size)
{
	struct kmeta_sec *sec = kmeta_find_sec_containing(img, addr);

	if (sec && sec_has_bytes(sec, addr, size))
		return sec->data + (addr - sec->addr);
	/*
	 * Sections that overlap (a corrupt image) make the one found depend on the lookup
	 * cache: take any that holds the bytes, so that a read that worked once always does.
	 */
	for (size_t i = 1; sec && i < img->nr_secs; i++) {
		if (sec_has_bytes(&img->secs[i], addr, size))
			return img->secs[i].data + (addr - img->secs[i].addr);
	}
	return NULL;
}

bool kmeta_is_text_addr(struct kmeta_image *img, uint64_t addr)
{
	struct kmeta_sec *sec = kmeta_find_sec_containing(img, addr);

	return sec && (sec->flags & SHF_EXECINSTR);
}
