/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the DWARF rewriters of --update-debug share (dwarf_line.c, dwarf_frame.c): a
 * growing output buffer, a bounded reader of LEB128 and fixed-size fields (DWARF 5
 * section 7.6), and the file bytes of a non-loaded section and of its relocations.
 */
#ifndef KBOLT_PASS_DWARF_IO_H
#define KBOLT_PASS_DWARF_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../kmeta/kmeta.h"

struct dwarf_buf {
	unsigned char *p;
	size_t nr, cap;
};

void dwarf_put_byte(struct dwarf_buf *b, unsigned char c);
void dwarf_put_bytes(struct dwarf_buf *b, const void *p, size_t size);
void dwarf_put_uleb(struct dwarf_buf *b, uint64_t v);
void dwarf_put_sleb(struct dwarf_buf *b, int64_t v);
void dwarf_put_fixed(struct dwarf_buf *b, uint64_t v, unsigned int size);

/* A section offset of 4 or 8 bytes (32- or 64-bit DWARF), in place */
void dwarf_put_offset(unsigned char *p, unsigned int size, uint64_t v);
uint64_t dwarf_get_offset(const unsigned char *p, unsigned int size);

/* A reader over [p, end); a read past the end sets bad and reads 0 */
struct dwarf_reader {
	const unsigned char *p, *end;
	bool bad;
};

uint64_t dwarf_get_uleb(struct dwarf_reader *r);
int64_t dwarf_get_sleb(struct dwarf_reader *r);
uint64_t dwarf_get_fixed(struct dwarf_reader *r, unsigned int size);

/* The relocation section of sec, NULL if none */
struct kmeta_sec *dwarf_rela_of(struct kmeta_image *img, const struct kmeta_sec *sec);
/* sec's bytes in img's mapping, and their number; NULL if it has none in the file */
unsigned char *dwarf_file_bytes(struct kmeta_image *img, const struct kmeta_sec *sec,
				uint64_t *size);

#endif
