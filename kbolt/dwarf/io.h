/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the DWARF rewriters of --update-debug share (line.c, frame.c, info.c): a
 * growing output buffer, a bounded reader of LEB128 and fixed-size fields (DWARF 5
 * section 7.6), unit headers and attribute forms of .debug_info, the file bytes of a
 * non-loaded section and of its relocations, and the in-place patches of .debug_info
 * with their relocations.
 */
#ifndef KBOLT_DWARF_IO_H
#define KBOLT_DWARF_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../../kmeta/kmeta.h"

struct output_secs;

struct dwarf_buf {
	unsigned char *p;
	size_t nr, cap;
};

void dwarf_put_byte(struct dwarf_buf *b, unsigned char c);
void dwarf_put_bytes(struct dwarf_buf *b, const void *p, size_t size);
void dwarf_put_uleb(struct dwarf_buf *b, uint64_t v);
/* v as a ULEB128 of exactly size bytes at p (DWARF allows the redundant 0x80 bytes) */
void dwarf_put_uleb_sized(unsigned char *p, uint64_t v, unsigned int size);
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

/* A unit of .debug_info: where it is, what its header says */
struct dwarf_unit {
	uint64_t off, end;	/* the unit, header included */
	uint64_t die_off;	/* its first DIE */
	uint64_t abbrev_off, abbrev_place;	/* debug_abbrev_offset, and where it is */
	unsigned int version, type, offset_size, addr_size;
};

const char *dwarf_read_unit(const unsigned char *info, uint64_t size, uint64_t off,
			    struct dwarf_unit *u);
/* An initial length (DWARF 5 section 7.4): the length, and the offset size it says */
uint64_t dwarf_get_initial_length(struct dwarf_reader *r, unsigned int *offset_size);

/* One abbreviation table of .debug_abbrev, by code (DWARF 5 section 7.5.3) */
struct dwarf_abbrevs {
	uint64_t off;		/* of the table in .debug_abbrev; UINT64_MAX none yet */
	struct dwarf_abbrev {
		uint64_t tag;
		uint32_t first, nr;	/* its attributes in attrs */
		bool children, known;
	} *by_code;
	size_t nr_codes, codes_cap;
	struct dwarf_abbrev_attr {
		uint16_t at, form;
		int64_t implicit;	/* DW_FORM_implicit_const's value */
	} *attrs;
	size_t nr_attrs, attrs_cap;
};

/* The table at off of abbrev (unless it is ab's already); NULL or why not */
const char *dwarf_read_abbrevs(struct dwarf_abbrevs *ab, const unsigned char *abbrev,
			       uint64_t size, uint64_t off);
/* The abbreviation of code, NULL if the table has none */
const struct dwarf_abbrev *dwarf_abbrev_of(const struct dwarf_abbrevs *ab, uint64_t code);
void dwarf_abbrevs_free(struct dwarf_abbrevs *ab);

/* Skip a value of form in u; false for a form kbolt does not know (DWARF 5 7.5.6) */
bool dwarf_skip_form(struct dwarf_reader *r, uint64_t form, const struct dwarf_unit *u);

/*
 * A value of .debug_info patched in place, and what becomes of its relocation, if it
 * has one.  Collected by line.c and info.c, applied once.
 */
enum dwarf_patch_kind {
	PATCH_ADDR,	/* an address: the addend moves by what the value moved */
	PATCH_OFFSET,	/* a section offset: the addend, which must be the old value, too */
	PATCH_RETYPE,	/* now a section offset at new_place: relocated by info, the value */
	PATCH_DROP,	/* no longer a value: its relocation becomes R_X86_64_NONE */
};

struct dwarf_patches {
	struct dwarf_patch {
		uint64_t place, new_place;	/* new_place: PATCH_RETYPE's */
		uint64_t old, new, info;	/* info: PATCH_RETYPE's r_info */
		unsigned int size;
		unsigned char kind;	/* enum dwarf_patch_kind */
	} *v;
	size_t nr, cap;
	/* bytes [from, to) of .debug_info moved up by `by`, with their relocations */
	struct dwarf_shift {
		uint64_t from, to;
		unsigned int by;
	} *shifts;
	size_t nr_shifts, shifts_cap;
};

struct dwarf_patch *dwarf_patch_add(struct dwarf_patches *ps, uint64_t place,
				    unsigned int size, uint64_t old, uint64_t new,
				    enum dwarf_patch_kind kind);
/* The patches and shifts of from added to ps, after its own; from is left empty */
void dwarf_patches_take(struct dwarf_patches *ps, struct dwarf_patches *from);
/* Bytes [from, to) of .debug_info, already moved by by in the mapping: their relocations */
void dwarf_shift_add(struct dwarf_patches *ps, uint64_t from, uint64_t to, unsigned int by);
int dwarf_patches_apply(struct kmeta_image *img, struct dwarf_patches *ps,
			struct output_secs *out);
void dwarf_patches_free(struct dwarf_patches *ps);
/* The index of sec's STT_SECTION symbol in img's symbol table, 0 if none */
size_t dwarf_section_symbol(struct kmeta_image *img, const struct kmeta_sec *sec);

#endif
