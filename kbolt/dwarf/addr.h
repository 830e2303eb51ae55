/* SPDX-License-Identifier: GPL-2.0 */
/*
 * DWARF 5's indexed forms, as Clang writes them (addr.c): a unit's table of addresses
 * in .debug_addr (DW_FORM_addrx*, the *x entries of range and location lists), and the
 * offsets tables of its lists (DW_FORM_rnglistx, DW_FORM_loclistx).  info.c's walk
 * reads them through here; in a rewrite, which value each slot of a table takes.
 */
#ifndef KBOLT_DWARF_ADDR_H
#define KBOLT_DWARF_ADDR_H

#include "info_walk.h"

struct output_secs;

/*
 * The bases of the unit whose own DIE is d, and its table of addresses; NULL or why
 * not.  With d NULL: a unit begins, and has none yet.
 */
const char *addr_unit_begin(struct info_walk *w, const struct die *d);
/* The values of d's attributes of indexed forms; NULL or why not */
const char *addr_resolve_die(struct info_walk *w, struct die *d);
/* The address at slot idx of the unit's table, named by a list entry; NULL or why not */
const char *addr_list_slot(struct info_walk *w, uint64_t idx, uint64_t *value);
/* A list read again: the slots it names forgotten */
void addr_list_begin(struct info_walk *w);

/*
 * dwarf_info_check(): a point of a DIE (end: the end of an instruction), and, at the
 * unit's end, the functions kept where a slot's points may need two values and its
 * index has no room for a new one
 */
void addr_check_point(struct info_walk *w, const struct addr_attr *a, bool end);
/* a pair whose DW_AT_low_pc is indexed: can it become a DW_AT_ranges where it is? */
bool addr_pair_can_split(const struct info_walk *w, const struct addr_attr *low,
			 const struct addr_attr *high);
void addr_check_unit_end(struct info_walk *w);

/*
 * The rewrite.  Before a unit's DIEs are patched, each indexed point says the value it
 * needs (rigid: a point, which has only its index; else a pair's start, which can
 * become a range list) and addr_plan() gives each slot one; then addr_use() gives a
 * point a new slot where its own holds another value, and addr_holds() tells a pair
 * whether its slot holds its start.
 */
void addr_want(struct info_walk *w, const struct addr_attr *a, uint64_t value, bool rigid);
void addr_plan(struct info_walk *w);
const char *addr_use(struct info_walk *w, const struct addr_attr *a, uint64_t value);
bool addr_holds(struct info_walk *w, const struct addr_attr *a, uint64_t value);
/* Does a slot the last list read names take a new value (the list must be written again)? */
bool addr_list_changed(struct info_walk *w);
/* The unit's new slots, kept for addr_write(); NULL or why they cannot be had */
const char *addr_unit_end(struct info_walk *w);
/*
 * The list of src at new (an offset in src) for the entry of size bytes of its offsets
 * table at base that a names
 */
void addr_table_entry(struct list_src *src, const struct addr_attr *a, uint64_t base,
		      uint64_t new, unsigned int size);
/*
 * The entries of src's tables set anew (offsets of lists, slots of .debug_addr) in its
 * bytes b, and the addends of their relocations in r
 */
void addr_patch_tables(struct list_src *src, unsigned char *b, unsigned char *r,
		       uint64_t rsize);
/*
 * .debug_addr written again if a slot changed: every table's new slots after its own,
 * the units' DW_AT_addr_base patched to their tables' new places, the relocations
 * moved with their slots; NULL or what is wrong
 */
const char *addr_write(struct info_walk *w, struct output_secs *out);
void addr_free(struct info_walk *w);

#endif
