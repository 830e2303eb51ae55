/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The walk of .debug_info that --update-debug's code addresses take (info.c),
 * shared with the location lists of its DIEs (loc.c): a DIE's attributes that
 * hold code addresses or list offsets, the list sections and their new contributions,
 * and where old code went (info_walk.c).
 */
#ifndef KBOLT_DWARF_INFO_WALK_H
#define KBOLT_DWARF_INFO_WALK_H

#include "io.h"
#include "../model/opt.h"

enum {
	AT_LOW_PC = 0x11, AT_HIGH_PC = 0x12, AT_ENTRY_PC = 0x52, AT_RANGES = 0x55,
	AT_CALL_RETURN_PC = 0x7d, AT_CALL_PC = 0x81,
	TAG_COMPILE_UNIT = 0x11, TAG_PARTIAL_UNIT = 0x3c, TAG_SKELETON_UNIT = 0x4a,
	TAG_GNU_CALL_SITE = 0x4109,
	FORM_ADDR = 0x01, FORM_DATA2 = 0x05, FORM_DATA4 = 0x06, FORM_DATA8 = 0x07,
	FORM_BLOCK1 = 0x0a, FORM_DATA1 = 0x0b, FORM_UDATA = 0x0f, FORM_SEC_OFFSET = 0x17,
	FORM_IMPLICIT_CONST = 0x21, FORM_RNGLISTX = 0x23, FORM_ADDRX = 0x1b,
	FORM_ADDRX1 = 0x29, FORM_ADDRX2 = 0x2a, FORM_ADDRX3 = 0x2b, FORM_ADDRX4 = 0x2c,
	/* DWARF 5's bases of a unit's indexed forms (section 7.5.5): addr.c */
	AT_ADDR_BASE = 0x73, AT_RNGLISTS_BASE = 0x74, AT_LOCLISTS_BASE = 0x8c,
	/*
	 * kbolt's own attribute (DW_AT_lo_user is 0x2000): the bytes a DIE no longer uses
	 * after its DW_AT_low_pc/high_pc pair became a DW_AT_ranges, as a DW_FORM_block1
	 */
	AT_KBOLT_FILLER = 0x2b01,
	RLE_END = 0, RLE_BASE_ADDRESSX = 1, RLE_STARTX_ENDX = 2, RLE_STARTX_LENGTH = 3,
	RLE_OFFSET_PAIR = 4, RLE_BASE = 5, RLE_START_END = 6,
	RLE_START_LENGTH = 7,
	/* location lists (loc.c) */
	AT_LOCATION = 0x02, AT_GNU_LOCVIEWS = 0x2137, FORM_LOCLISTX = 0x22,
	LLE_END = 0, LLE_BASE_ADDRESSX = 1, LLE_STARTX_ENDX = 2, LLE_STARTX_LENGTH = 3,
	LLE_OFFSET_PAIR = 4, LLE_BASE = 6, LLE_START_END = 7,
	LLE_START_LENGTH = 8,
};

/*
 * An attribute of a DIE that gives a code address, where its value is.  An indexed
 * form's (DWARF 5: addrx, rnglistx, loclistx) bytes are its index, a ULEB128 or fixed
 * field of size bytes; value is what the index names: the address in the unit's table
 * of .debug_addr, or the list's offset in its section, whose entry in the list
 * section's offsets table is at table_place.
 */
struct addr_attr {
	uint64_t place, value;
	uint64_t index, table_place;
	uint16_t at, form;
	unsigned int size;
	bool indexed;
};

/* A DIE's code addresses */
struct die {
	uint64_t off, tag;
	struct addr_attr a[12];
	unsigned int nr;
};

/* d's attribute at, NULL if it has none */
const struct addr_attr *info_die_attr(const struct die *d, uint16_t at);

/* A half-open range of addresses */
struct span {
	uint64_t lo, hi;
};

struct spans {
	struct span *v;
	size_t nr, cap;
};

/* A list written again: the old one's offset, the new one's (and its views') */
struct list_move {
	uint64_t old, new, views;
};

/* An entry of a location list: [lo, hi) from view vb to view ve, and its expression */
struct loc_entry {
	uint64_t lo, hi, vb, ve;
	const unsigned char *expr;
	uint64_t len;
};

struct loc_entries {
	struct loc_entry *v;
	size_t nr, cap;
};

struct info_walk {
	struct opt *opt;
	bool rewrite;		/* false: dwarf_info_check() */
	const unsigned char *info, *abbrev;
	uint64_t info_size, abbrev_size;
	struct dwarf_unit u;
	uint64_t base;		/* the unit's DW_AT_low_pc: the base of its lists */
	/* the unit's DW_AT_addr_base, rnglists_base, loclists_base; UINT64_MAX: none */
	uint64_t addr_base, rnglists_base, loclists_base;
	uint64_t nr_addrs;	/* entries of the unit's table in .debug_addr */
	struct addr_plan *plan;	/* addr.c's: the slots of the tables */
	struct dwarf_abbrevs ab;
	uint64_t why_at;	/* where what cannot be read is */
	/* rewrite */
	struct dwarf_patches *patches;
	struct func *op_item_func;	/* op -> item index, of this function */
	uint32_t *op_item;
	size_t op_item_cap;
	struct spans old, new;
	struct list_src {		/* a range list section and its new contribution */
		struct kmeta_sec *sec, *rs;	/* rs: its relocations, NULL if none */
		const unsigned char *data;
		uint64_t size;
		bool v5;			/* .debug_rnglists, else .debug_ranges */
		struct dwarf_buf out;
		struct dwarf_buf rela;	/* relocations of the new lists */
		struct list_move *moves;
		size_t nr_moves, moves_cap;
		size_t sym;	/* its section symbol, for a DW_AT_ranges' relocation */
		/* entries of its offsets table (DWARF 5 rnglistx, loclistx) set anew */
		struct table_patch {
			uint64_t place, old, new;
			unsigned int size;
		} *tpatches;
		size_t nr_tpatches, tpatches_cap;
		/*
		 * A section whose tables have offsets tables (Clang's, for rnglistx and
		 * loclistx): the new contribution gets one too, of every new list, as
		 * readers that walk the tables (readelf) want.  The lists are written
		 * first, their offsets (starts) and the patches of .debug_info that
		 * name them (refs, in w->patches) moved past it at the end.
		 */
		bool indexed;
		uint64_t *starts;
		size_t nr_starts, starts_cap;
		size_t *refs;
		size_t nr_refs, refs_cap;
	} rnglists, ranges, loclists, loc, addr;
	/* the slots of .debug_addr the last list read names (addr.c) */
	uint64_t *list_slots;
	size_t nr_list_slots, list_slots_cap;
	struct loc_entries locs, new_locs;	/* loc.c's */
	struct kmeta_sec *code_sec;	/* code_symbol()'s last section, and its symbol */
	size_t code_sym;
	/* abbreviations added for pairs that became lists (split_pair()) */
	struct twin {
		uint64_t table, old_code, new_code;
		size_t at, len;		/* its bytes in twin_bytes */
		/* its fillers' sizes: an index's ULEB128 differs from DIE to DIE */
		unsigned int low_fill, high_fill;
	} *twins;
	size_t nr_twins, twins_cap;
	struct dwarf_buf twin_bytes;
	struct unit_ref {		/* every unit's debug_abbrev_offset */
		uint64_t place, table;
		unsigned int size;
	} *units;
	size_t nr_units, units_cap;
};

/* The new place of the instruction at a in moved f (a removed jmp: of its target) */
uint64_t info_new_point(const struct func *f, uint64_t a);
/*
 * The same inside an instruction, as far from its new end as from its old one (a
 * call's last byte)
 */
uint64_t info_new_inner(struct info_walk *w, struct func *f, uint64_t a);
/* Does the layout of moved f emit the instruction at a (not a jmp it removed)? */
bool info_emitted(struct info_walk *w, struct func *f, uint64_t a);
/* The new end of the instruction that ended at a in moved f */
uint64_t info_new_end(struct info_walk *w, struct func *f, uint64_t a);
void info_add_span(struct spans *s, uint64_t lo, uint64_t hi);
/*
 * The spans of old, each part in a moved function mapped, into new, sorted and merged;
 * false if nothing moved
 */
bool info_map_spans(struct info_walk *w, const struct spans *old, struct spans *new);
/* What an address of the DWARF is to the instructions (dwarf_info_check()) */
enum place_kind {
	PLACE_START,	/* an instruction's start (or past the ops) */
	PLACE_END,	/* an instruction's end */
	PLACE_LIST,	/* a location list's boundary: a start, or a call's last byte */
};

/* Can f move: not skipped, and decoded (lite mode decodes only some) */
bool info_may_move(const struct func *f);
/*
 * dwarf_info_check(): keep a function where a, of kind, is no place kbolt can map;
 * and so for the ends of every part of the spans of sp
 */
void info_check_place(struct info_walk *w, struct func *f, uint64_t a, enum place_kind kind);
void info_check_spans(struct info_walk *w, const struct spans *sp, enum place_kind kind);
/* Does v fit in a field of size bytes? */
bool info_fits(uint64_t v, unsigned int size);
/*
 * The symbol a new address is relocated against: the section symbol of the loaded
 * section that holds it (*value: the section's address); 0 if none
 */
size_t info_code_symbol(struct info_walk *w, uint64_t addr, uint64_t *value);
/* An address of a new list at pos of src's new contribution, with its relocation */
const char *info_put_list_addr(struct info_walk *w, struct list_src *src, uint64_t pos,
			       uint64_t addr);
/*
 * Where src's new lists begin: after the old section, and a header for DWARF 5's (and
 * before the offsets table of an indexed section, until info_index_new_lists())
 */
uint64_t info_new_lists_base(const struct list_src *src);
/* A new list of src at off; the patch p of .debug_info that names a new list of src */
void info_list_start(struct list_src *src, uint64_t off);
void info_list_ref(struct info_walk *w, struct list_src *src, const struct dwarf_patch *p);
/*
 * An indexed src: its new lists, and what names them, moved past the offsets table of
 * the new contribution, of info_new_lists_base() + offset_size * nr_starts bytes
 */
void info_index_new_lists(struct info_walk *w, struct list_src *src);
/* The list at old of src written again already, among the last few; NULL if not */
struct list_move *info_find_move(struct list_src *src, uint64_t old);
struct list_move *info_add_move(struct list_src *src, uint64_t old, uint64_t new,
				uint64_t views);

#endif
