// SPDX-License-Identifier: GPL-2.0
/*
 * Opening and closing a kernel image: map the file (or take a decompressed buffer),
 * hand it to libelf, and build the section and symbol model.  The order of the steps
 * matters and is written down in kmeta_open_memory().
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

static struct kmeta_image *image_new(const char *name)
{
	struct kmeta_image *img = xcalloc(1, sizeof(*img));

	img->path = xstrdup(name);
	return img;
}

/* Reject what libelf would accept but kmeta cannot model, with one clear message. */
static int check_elf_header(struct kmeta_image *img)
{
	uint64_t shdrs_end;

	if (elf_kind(img->elf) != ELF_K_ELF) {
		pr_err(img->path, "not an ELF file");
		return -EINVAL;
	}
	if (gelf_getclass(img->elf) != ELFCLASS64) {
		pr_err(img->path, "not a 64-bit ELF file (kmeta handles x86-64 kernels only)");
		return -EINVAL;
	}
	if (!gelf_getehdr(img->elf, &img->ehdr)) {
		pr_err(img->path, "cannot read ELF header: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	if (img->ehdr.e_machine != EM_X86_64) {
		pr_err(img->path, "not an x86-64 ELF file (e_machine %u)", img->ehdr.e_machine);
		return -EINVAL;
	}
	if (img->ehdr.e_type != ET_EXEC && img->ehdr.e_type != ET_REL) {
		pr_err(img->path, "neither a vmlinux (ET_EXEC) nor a module (ET_REL)");
		return -EINVAL;
	}
	shdrs_end = img->ehdr.e_shoff + (uint64_t)img->ehdr.e_shnum * img->ehdr.e_shentsize;
	if (img->ehdr.e_shoff && shdrs_end > img->map_size) {
		pr_err(img->path, "truncated: its section headers end at byte %llu, but the file "
		       "has %zu bytes", (unsigned long long)shdrs_end, img->map_size);
		return -EINVAL;
	}
	img->is_module = img->ehdr.e_type == ET_REL;
	return 0;
}

static int image_load(struct kmeta_image *img)
{
	int err;

	/*
	 * Steps, in order:
	 * - the header check must run before anything trusts section or symbol tables;
	 * - sections before symbols (symbols of a module take their section's synthetic
	 *   address);
	 * - symbols before applying a module's relocations (they resolve against symbols);
	 * - the version last: it reads linux_banner or .modinfo through the model.
	 */
	if (img->map_size >= SELFMAG && !memcmp(img->map, ELFMAG, SELFMAG) &&
	    img->map_size < sizeof(Elf64_Ehdr)) {
		pr_err(img->path, "truncated: %zu bytes, less than an ELF header", img->map_size);
		return -EINVAL;
	}
	img->elf = elf_memory((char *)img->map, img->map_size);
	if (!img->elf) {
		pr_err(img->path, "cannot read ELF: %s", elf_errmsg(-1));
		return -EINVAL;
	}
	err = check_elf_header(img);
	if (!err)
		err = elf_read_sections(img);
	if (!err)
		err = sym_read_symbols(img);
	if (!err && img->is_module)
		err = reloc_apply_module(img);
	if (!err)
		err = kmeta_read_version(img);
	return err;
}

struct kmeta_image *kmeta_open_memory(const char *name, const void *buf, size_t size)
{
	struct kmeta_image *img = image_new(name);

	/* libelf and the module relocator write into the buffer: work on a copy */
	img->map = xmalloc(size);
	memcpy(img->map, buf, size);
	img->map_size = size;
	img->map_is_heap = true;
	if (image_load(img)) {
		kmeta_close(img);
		return NULL;
	}
	return img;
}

static int map_file(struct kmeta_image *img, int fd)
{
	struct stat st;

	if (fstat(fd, &st)) {
		pr_err(img->path, "%s", strerror(errno));
		return -errno;
	}
	if (!S_ISREG(st.st_mode) || st.st_size == 0) {
		pr_err(img->path, "not a regular, non-empty file");
		return -EINVAL;
	}
	/*
	 * Private and writable: module relocations are applied in place, and pages we
	 * never write (the 500 MB of DWARF in a debug vmlinux) are never read.
	 */
	img->map = mmap(NULL, st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (img->map == MAP_FAILED) {
		img->map = NULL;
		pr_err(img->path, "mmap: %s", strerror(errno));
		return -errno;
	}
	img->map_size = st.st_size;
	return 0;
}

struct kmeta_image *kmeta_open(const char *path)
{
	struct kmeta_image *img;
	int fd, err;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		pr_err(path, "%s", strerror(errno));
		return NULL;
	}
	img = image_new(path);
	if (compress_is_compressed(path))
		err = compress_read_file(img, fd);
	else
		err = map_file(img, fd);
	close(fd);
	if (!err)
		err = image_load(img);
	if (err) {
		kmeta_close(img);
		return NULL;
	}
	return img;
}

void kmeta_close(struct kmeta_image *img)
{
	if (!img)
		return;
	table_free_all(img);
	insn_free(img);
	btf_free(img);
	reloc_free_lookups(img);
	free(img->site_ranges);
	free(img->funcs);
	addr_index_free(&img->func_starts);
	free(img->names);
	free(img->sorted);
	free(img->syms);
	free(img->secs_by_addr);
	free(img->secs);
	if (img->elf)
		elf_end(img->elf);
	if (img->map_is_heap)
		free(img->map);
	else if (img->map)
		munmap(img->map, img->map_size);
	free(img->path);
	free(img);
}
