// SPDX-License-Identifier: GPL-2.0
/*
 * Symbols: the symbol table, a name index, the address-sorted list used for lookups,
 * and the function list.  A .cold fragment (foo.cold, foo.cold.3: GCC's split-off
 * unlikely part of foo) is linked to its parent, found first among the locals of the
 * same source file (static functions share names across files), then globally.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/*
 * A module's undefined symbols get stub addresses just below the module's synthetic
 * layout (elf.c's MODULE_BASE), each with a 64 KiB extent so that "sym + offset"
 * references (a key inside a struct) still name it, and all within the +-2 GiB that
 * PC32 relocations reach.
 */
#define UNDEF_STUB_TOP 0xffffffffa0000000ULL
#define UNDEF_STUB_STRIDE (1ULL << 16)

static uint64_t name_hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

static Elf_Scn *find_symtab(struct kmeta_image *img, GElf_Shdr *sh)
{
	for (size_t i = 1; i < img->nr_secs; i++) {
		if (img->secs[i].type == SHT_SYMTAB && gelf_getshdr(img->secs[i].scn, sh))
			return img->secs[i].scn;
	}
	return NULL;
}

static void set_sym_addr(struct kmeta_image *img, struct kmeta_sym *sym, GElf_Sym *es,
			 size_t *nr_undef)
{
	sym->addr = es->st_value;
	if (!img->is_module || sym->type == STT_FILE)
		return;
	if (es->st_shndx == SHN_UNDEF && sym->name[0]) {
		/* counts down from the top: the layout needs no count up front */
		sym->addr = UNDEF_STUB_TOP - UNDEF_STUB_STRIDE * ++(*nr_undef);
		sym->size = UNDEF_STUB_STRIDE;
		sym->undefined_stub = true;
	} else if (es->st_shndx && es->st_shndx < img->nr_secs) {
		sym->addr += img->secs[es->st_shndx].addr;
	}
}

static int read_symtab(struct kmeta_image *img)
{
	size_t nr_undef = 0;
	unsigned int file = 0;
	GElf_Shdr sh;
	Elf_Scn *scn = find_symtab(img, &sh);
	Elf_Data *data;

	if (!scn && img->is_module) {
		pr_err(img->path, "no symbol table: a module keeps one unless stripped with "
		       "--strip-all; use the module as installed");
		return -ENOENT;
	}
	if (!scn) {
		pr_err(img->path, "no symbol table (a stripped image?): kmeta needs the "
		       "unstripped vmlinux, such as the one of Debian's -dbg package");
		return -ENOENT;
	}
	data = elf_getdata(scn, NULL);
	if (!data || !sh.sh_entsize || sh.sh_size % sh.sh_entsize) {
		pr_err(img->path, ".symtab: cannot read: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	img->nr_syms = sh.sh_size / sh.sh_entsize;
	img->syms = xcalloc(img->nr_syms, sizeof(*img->syms));
	for (size_t i = 0; i < img->nr_syms; i++) {
		struct kmeta_sym *sym = &img->syms[i];
		GElf_Sym es;

		if (!gelf_getsym(data, i, &es)) {
			pr_err(img->path, ".symtab: entry %zu: %s", i, elf_errmsg(-1));
			return -EINVAL;
		}
		sym->name = elf_strptr(img->elf, sh.sh_link, es.st_name);
		if (!sym->name) {
			pr_err(img->path, ".symtab: entry %zu: bad name", i);
			return -EINVAL;
		}
		sym->type = GELF_ST_TYPE(es.st_info);
		sym->bind = GELF_ST_BIND(es.st_info);
		sym->shndx = es.st_shndx;
		sym->size = es.st_size;
		if (sym->type == STT_FILE)
			file = i;
		sym->file = sym->bind == STB_LOCAL ? file : 0;
		set_sym_addr(img, sym, &es, &nr_undef);
	}
	return 0;
}

static void index_names(struct kmeta_image *img)
{
	size_t n = 1;

	while (n < img->nr_syms * 2)
		n <<= 1;
	img->names = xcalloc(n, sizeof(*img->names));
	img->names_mask = n - 1;
	/* reverse order: the first symbol of a name ends up first in its probe chain */
	for (size_t i = img->nr_syms; i-- > 1;) {
		struct kmeta_sym *sym = &img->syms[i];
		size_t h = name_hash(sym->name) & img->names_mask;

		if (!sym->name[0] || sym->type == STT_FILE || sym->type == STT_SECTION)
			continue;
		while (img->names[h] && strcmp(img->names[h]->name, sym->name))
			h = (h + 1) & img->names_mask;
		/* keep the global one, else the first local: both are "by name" answers */
		if (!img->names[h] || img->names[h]->bind == STB_LOCAL)
			img->names[h] = sym;
	}
}

struct kmeta_sym *kmeta_find_sym_by_name(struct kmeta_image *img, const char *name)
{
	size_t h = name_hash(name) & img->names_mask;

	while (img->names[h]) {
		if (!strcmp(img->names[h]->name, name))
			return img->names[h];
		h = (h + 1) & img->names_mask;
	}
	return NULL;
}

static bool is_defined(struct kmeta_image *img, const struct kmeta_sym *sym)
{
	if (sym->undefined_stub)
		return true;
	if (!sym->name[0] || sym->type == STT_FILE || sym->type == STT_SECTION)
		return false;
	return sym->shndx != SHN_UNDEF && sym->shndx != SHN_ABS && sym->shndx < img->nr_secs &&
	       (img->secs[sym->shndx].flags & SHF_ALLOC);
}

/*
 * The order of img->sorted: by address, the larger symbol first, globals before locals,
 * then symtab order.  Sorted as compact keys: comparing through the symbols themselves
 * missed the cache at every step (120k symbols, 7 MB).
 */
struct sym_key {
	uint64_t addr, size;
	uint32_t local, idx;
};

static int cmp_sym_key(const void *a, const void *b)
{
	const struct sym_key *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	if (x->local != y->local)
		return x->local ? 1 : -1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void index_func_starts(struct kmeta_image *img)
{
	uint64_t *starts = xmalloc((img->nr_funcs + 1) * sizeof(*starts));

	for (size_t i = 0; i < img->nr_funcs; i++)
		starts[i] = img->funcs[i]->addr;
	addr_index_init(&img->func_starts, starts, img->nr_funcs);
}

/* The defined symbols in address order, and the functions among them in that order */
static void sort_symbols(struct kmeta_image *img)
{
	struct sym_key *keys = xmalloc(img->nr_syms * sizeof(*keys));

	img->sorted = xmalloc(img->nr_syms * sizeof(*img->sorted));
	img->funcs = xmalloc(img->nr_syms * sizeof(*img->funcs));
	for (size_t i = 1; i < img->nr_syms; i++) {
		struct kmeta_sym *sym = &img->syms[i];

		if (is_defined(img, sym))
			keys[img->nr_sorted++] = (struct sym_key){
				sym->addr, sym->size, sym->bind == STB_LOCAL, (uint32_t)i };
	}
	/* by address, then symbols at one address (a few) by the rest of the order */
	sort_by_u64_key(keys, img->nr_sorted, sizeof(*keys), offsetof(struct sym_key, addr));
	for (size_t k = 0, end; k < img->nr_sorted; k = end) {
		for (end = k + 1; end < img->nr_sorted && keys[end].addr == keys[k].addr; end++)
			;
		sort_array(keys + k, end - k, sizeof(*keys), cmp_sym_key);
	}
	for (size_t k = 0; k < img->nr_sorted; k++) {
		struct kmeta_sym *sym = &img->syms[keys[k].idx];

		img->sorted[k] = sym;
		if (sym->type == STT_FUNC && sym->size)
			img->funcs[img->nr_funcs++] = sym;
	}
	free(keys);
	index_func_starts(img);
}

/* foo.cold.12 -> length of "foo", or 0 if name is not a .cold fragment */
static size_t cold_parent_len(const char *name)
{
	const char *p = strstr(name, ".cold");

	if (!p || p == name)
		return 0;
	if (p[5] && p[5] != '.')
		return 0;
	return p - name;
}

static struct kmeta_sym *find_cold_parent(struct kmeta_image *img, struct kmeta_sym *cold,
					  size_t len)
{
	struct kmeta_sym *global = NULL;

	/* locals of one file are contiguous in the symtab, right after its STT_FILE */
	for (size_t i = cold->file + 1; cold->file && i < img->nr_syms; i++) {
		struct kmeta_sym *s = &img->syms[i];

		if (s->type == STT_FILE || s->bind != STB_LOCAL)
			break;
		if (s->type == STT_FUNC && s != cold && !strncmp(s->name, cold->name, len) &&
		    !s->name[len])
			return s;
	}
	char *name = xasprintf("%.*s", (int)len, cold->name);

	global = kmeta_find_sym_by_name(img, name);
	free(name);
	return global && global->type == STT_FUNC ? global : NULL;
}

static void link_cold_fragments(struct kmeta_image *img)
{
	for (size_t i = 0; i < img->nr_funcs; i++) {
		struct kmeta_sym *f = img->funcs[i];
		size_t len = cold_parent_len(f->name);

		if (len)
			f->parent = find_cold_parent(img, f, len);
	}
}

/* A vmlinux's _text and _etext, the kernel image's code (0 in a module) */
static void find_text_bounds(struct kmeta_image *img)
{
	struct kmeta_sym *start = kmeta_find_sym_by_name(img, "_text");
	struct kmeta_sym *end = kmeta_find_sym_by_name(img, "_etext");

	img->text_start = start ? start->addr : 0;
	img->text_end = end ? end->addr : 0;
}

int sym_read_symbols(struct kmeta_image *img)
{
	int err = read_symtab(img);

	if (err)
		return err;
	index_names(img);
	sort_symbols(img);
	link_cold_fragments(img);
	find_text_bounds(img);
	return 0;
}

/* Index of the last entry of arr[0..n) with addr <= a, or -1 */
static long last_at_or_before(struct kmeta_sym **arr, size_t n, uint64_t a)
{
	long lo = 0, hi = (long)n - 1, found = -1;

	while (lo <= hi) {
		long mid = lo + (hi - lo) / 2;

		if (arr[mid]->addr <= a) {
			found = mid;
			lo = mid + 1;
		} else {
			hi = mid - 1;
		}
	}
	return found;
}

size_t sym_first_from(struct kmeta_image *img, uint64_t addr)
{
	return addr ? (size_t)(last_at_or_before(img->sorted, img->nr_sorted, addr - 1) + 1) : 0;
}

/* arr[i] is the last entry at or before a (-1 if none) */
static struct kmeta_sym *find_containing(struct kmeta_sym **arr, long i, uint64_t a)
{
	/* a few steps back cover symbols nested inside a bigger one */
	for (int k = 0; i >= 0 && k < 8; i--, k++) {
		if (a < arr[i]->addr + arr[i]->size) {
			/* the first at that address is the preferred name */
			while (i > 0 && arr[i - 1]->addr == arr[i]->addr &&
			       arr[i - 1]->size == arr[i]->size)
				i--;
			return arr[i];
		}
	}
	return NULL;
}

long kmeta_func_at_or_before(struct kmeta_image *img, uint64_t addr)
{
	return (long)addr_index_upto(&img->func_starts, addr) - 1;
}

struct kmeta_sym *kmeta_find_func_containing(struct kmeta_image *img, uint64_t addr)
{
	return find_containing(img->funcs, kmeta_func_at_or_before(img, addr), addr);
}

struct kmeta_sym *kmeta_find_sym_containing(struct kmeta_image *img, uint64_t addr)
{
	return find_containing(img->sorted, last_at_or_before(img->sorted, img->nr_sorted, addr),
			       addr);
}


struct kmeta_sym *kmeta_find_sym_at(struct kmeta_image *img, uint64_t addr)
{
	long i = last_at_or_before(img->sorted, img->nr_sorted, addr);

	if (i < 0 || img->sorted[i]->addr != addr)
		return NULL;
	while (i > 0 && img->sorted[i - 1]->addr == addr)
		i--;
	return img->sorted[i];
}

struct kmeta_sym *kmeta_find_alias_at(struct kmeta_image *img, uint64_t addr, const char *name,
				      bool prefix)
{
	size_t n = strlen(name);

	for (long i = last_at_or_before(img->sorted, img->nr_sorted, addr);
	     i >= 0 && img->sorted[i]->addr == addr; i--)
		if (prefix ? !strncmp(img->sorted[i]->name, name, n) :
			     !strcmp(img->sorted[i]->name, name))
			return img->sorted[i];
	return NULL;
}

/*
 * The nearest symbol at or before addr that belongs to addr's own section: code past a
 * function's end (an ORC terminator after startup_64) reads best as startup_64+0x68.
 * A label of another section at the same address (__alt_instructions_end, at the start
 * of .altinstr_replacement) would mislead.
 */
static struct kmeta_sym *find_sym_before(struct kmeta_image *img, struct kmeta_sec *sec,
					 uint64_t addr)
{
	long i = last_at_or_before(img->sorted, img->nr_sorted, addr);

	for (; i >= 0 && img->sorted[i]->addr >= sec->addr; i--) {
		if (img->sorted[i]->shndx != sec->idx || img->sorted[i]->undefined_stub)
			continue;
		/* the preferred name at that address comes first (sized, global) */
		while (i > 0 && img->sorted[i - 1]->addr == img->sorted[i]->addr &&
		       img->sorted[i - 1]->shndx == sec->idx)
			i--;
		return img->sorted[i];
	}
	return NULL;
}

char *kmeta_addr_str(struct kmeta_image *img, uint64_t addr, char *buf, size_t size)
{
	struct kmeta_sym *sym = kmeta_find_func_containing(img, addr);
	struct kmeta_sec *sec = NULL;

	if (!sym)
		sym = kmeta_find_sym_containing(img, addr);
	if (!sym && (sec = kmeta_find_sec_containing(img, addr)))
		sym = find_sym_before(img, sec, addr);
	if (!sym && sec)
		snprintf(buf, size, "%s+0x%llx", sec->name, (unsigned long long)(addr - sec->addr));
	else if (!sym)
		snprintf(buf, size, "0x%llx", (unsigned long long)addr);
	else if (addr == sym->addr)
		snprintf(buf, size, "%s", sym->name);
	else
		snprintf(buf, size, "%s+0x%llx", sym->name,
			 (unsigned long long)(addr - sym->addr));
	return buf;
}
