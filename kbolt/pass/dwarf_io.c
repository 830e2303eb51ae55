// SPDX-License-Identifier: GPL-2.0
/*
 * What the DWARF rewriters share (dwarf_io.h).  LEB128 is DWARF 5 section 7.6; libdw
 * reads it but has no writer, and its readers are not part of its public interface.
 */
#include <string.h>

#include "../../common/util.h"
#include "dwarf_io.h"

void dwarf_put_byte(struct dwarf_buf *b, unsigned char c)
{
	GROW(b->p, b->cap, b->nr + 1);
	b->p[b->nr++] = c;
}

void dwarf_put_bytes(struct dwarf_buf *b, const void *p, size_t size)
{
	GROW(b->p, b->cap, b->nr + size);
	memcpy(b->p + b->nr, p, size);
	b->nr += size;
}

void dwarf_put_uleb(struct dwarf_buf *b, uint64_t v)
{
	do {
		unsigned char c = v & 0x7f;

		v >>= 7;
		dwarf_put_byte(b, c | (v ? 0x80 : 0));
	} while (v);
}

void dwarf_put_sleb(struct dwarf_buf *b, int64_t v)
{
	for (;;) {
		unsigned char c = v & 0x7f;

		v >>= 7;
		if ((!v && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
			dwarf_put_byte(b, c);
			return;
		}
		dwarf_put_byte(b, c | 0x80);
	}
}

uint64_t dwarf_get_uleb(struct dwarf_reader *r)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (r->p < r->end) {
		unsigned char c = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

int64_t dwarf_get_sleb(struct dwarf_reader *r)
{
	int64_t v = 0;
	unsigned int shift = 0;

	while (r->p < r->end) {
		unsigned char c = *r->p++;

		if (shift < 64)
			v |= (int64_t)((uint64_t)(c & 0x7f) << shift);
		shift += 7;
		if (!(c & 0x80)) {
			if (shift < 64 && (c & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	r->bad = true;
	return 0;
}

uint64_t dwarf_get_fixed(struct dwarf_reader *r, unsigned int size)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < size) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	for (unsigned int k = 0; k < size; k++)
		v |= (uint64_t)r->p[k] << (8 * k);
	r->p += size;
	return v;
}

/* The relocation section of sec, NULL if none */
struct kmeta_sec *dwarf_rela_of(struct kmeta_image *img, const struct kmeta_sec *sec)
{
	for (size_t i = 1; i < img->nr_secs; i++) {
		GElf_Shdr sh;

		if (img->secs[i].type == SHT_RELA && gelf_getshdr(img->secs[i].scn, &sh) &&
		    sh.sh_info == sec->idx)
			return &img->secs[i];
	}
	return NULL;
}

unsigned char *dwarf_file_bytes(struct kmeta_image *img, const struct kmeta_sec *sec,
				uint64_t *size)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(sec->scn, &sh) || sh.sh_type == SHT_NOBITS ||
	    sh.sh_offset + sh.sh_size > img->map_size)
		return NULL;
	*size = sh.sh_size;
	return img->map + sh.sh_offset;
}

void dwarf_put_fixed(struct dwarf_buf *b, uint64_t v, unsigned int size)
{
	for (unsigned int k = 0; k < size; k++)
		dwarf_put_byte(b, (unsigned char)(v >> (8 * k)));
}

void dwarf_put_offset(unsigned char *p, unsigned int size, uint64_t v)
{
	if (size == 8)
		put_u64(p, v);
	else
		put_u32(p, (uint32_t)v);
}

uint64_t dwarf_get_offset(const unsigned char *p, unsigned int size)
{
	return size == 8 ? get_u64(p) : get_u32(p);
}
