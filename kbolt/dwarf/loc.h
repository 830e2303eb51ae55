/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The location lists of variables in moved code (loc.c), which info.c's walk of the
 * DIEs hands every DIE.
 */
#ifndef KBOLT_DWARF_LOC_H
#define KBOLT_DWARF_LOC_H

#include "info_walk.h"

/* Is the attribute at of form in u a location list's offset? */
bool dwarf_loc_is_list(uint64_t at, uint64_t form, const struct dwarf_unit *u);
/* The location lists of d's attributes: checked, or written again; NULL or why not */
const char *dwarf_loc_do(struct info_walk *w, const struct die *d);

#endif
