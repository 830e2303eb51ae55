/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The source file of each function, as DWARF names it: the compile unit whose address
 * ranges (.debug_aranges) hold the function, its DW_AT_name taken relative to its
 * DW_AT_comp_dir (cu_path.c).  The portable profile's key (portable.c,
 * portable_match.c; Documentation/profile-format.rst, "The portable profile").
 */
#ifndef KBOLT_CU_PATH_H
#define KBOLT_CU_PATH_H

#include <stddef.h>
#include <stdint.h>

#include "../../kmeta/kmeta.h"

struct cu_dwarf;

/*
 * The units' ranges are read at once; a unit's path when first asked for: a portable
 * profile asks for the units of a few thousand functions, of the 2000 to 5000 of a
 * kernel, each unit's header and abbreviations on pages of its own (on Debian's 6.1,
 * 0.1 s to read them all)
 */
struct cu_paths {
	struct cu_range {
		uint64_t start, end;
		uint32_t unit;		/* index in units */
	} *ranges;			/* by start */
	size_t nr_ranges, cap_ranges;
	struct cu_unit {
		uint64_t info_off;	/* in .debug_info */
		char *path;		/* once read, NULL if it has none */
		bool read;
	} *units;
	size_t nr_units, cap_units;
	struct cu_dwarf *dwarf;		/* the sections, for the units not read yet */
	const char *why;		/* the first unit that could not be read: why */
};

/*
 * The compile units of img with their address ranges, into cp: none (0) if img has no
 * .debug_aranges (a vmlinux without DWARF, or compressed); 0, or -EINVAL after
 * reporting DWARF kbolt cannot read.
 */
int cu_paths_read(struct kmeta_image *img, struct cu_paths *cp);
/*
 * The path of the compile unit holding addr, NULL if none (or if its DWARF cannot be
 * read: cu_paths_check() says so)
 */
const char *cu_path_at(struct cu_paths *cp, uint64_t addr);
/* 0, or -EINVAL after reporting a unit cu_path_at() could not read (img's DWARF) */
int cu_paths_check(const struct cu_paths *cp, const struct kmeta_image *img);
void cu_paths_free(struct cu_paths *cp);
/*
 * The source file of the function f, the portable profile's: the path of its compile
 * unit, else the name of the STT_FILE symbol before it (a local symbol: a basename),
 * else "" (a global symbol in an image without DWARF)
 */
const char *cu_func_file(struct cu_paths *cp, const struct kmeta_image *img,
			 const struct kmeta_sym *f);

/*
 * The key of a compile unit: name relative to comp_dir (comp_dir may be NULL),
 * lexically normalized (no ".", no "x/.."), its leading ".." dropped: for a kernel
 * built in its tree or out of it (O=), the path from the source tree's root, whatever
 * directory it was built in.  Malloc'ed.
 */
char *cu_path_key(const char *name, const char *comp_dir);

#endif
