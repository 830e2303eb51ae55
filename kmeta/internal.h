/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of libkmeta share with each other but not with its users.
 */
#ifndef KMETA_INTERNAL_H
#define KMETA_INTERNAL_H

#include "../common/util.h"
#include "kmeta.h"

/* elf.c */
int elf_read_sections(struct kmeta_image *img);

/* sym.c */
int sym_read_symbols(struct kmeta_image *img);
/* Index in img->sorted of the first symbol at or after addr, nr_sorted if none */
size_t sym_first_from(struct kmeta_image *img, uint64_t addr);

/* reloc.c */
int reloc_apply_module(struct kmeta_image *img);
void reloc_free_lookups(struct kmeta_image *img);

/* compress.c: .ko.xz and .ko.zst */
bool compress_is_compressed(const char *path);
int compress_read_file(struct kmeta_image *img, int fd);

/* table.c, insn.c, btf.c */
void table_free_all(struct kmeta_image *img);
void insn_free(struct kmeta_image *img);
void btf_free(struct kmeta_image *img);

/*
 * insn.c: the instruction that holds addr, as a linear sweep of [start, end) from start
 * decodes it, into *insn; *bad (if not NULL) the first address it cannot decode, 0 if
 * none.  0, or -1 if the sweep stops before addr.
 */
int insn_containing(struct kmeta_image *img, uint64_t start, uint64_t end, uint64_t addr,
		    struct kmeta_insn *insn, uint64_t *bad);

#endif
