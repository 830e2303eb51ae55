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

struct cu_paths {
	struct cu_range {
		uint64_t start, end;
		uint32_t path;		/* index in paths */
	} *ranges;			/* by start */
	size_t nr_ranges, cap_ranges;
	char **paths;			/* one per compile unit with a name */
	size_t nr_paths, cap_paths;
};

/*
 * Every compile unit of img with its address ranges and a name, into cp: none (0) if
 * img has no .debug_aranges (a vmlinux without DWARF, or compressed); 0, or -EINVAL
 * after reporting DWARF kbolt cannot read.
 */
int cu_paths_read(struct kmeta_image *img, struct cu_paths *cp);
/* The path of the compile unit holding addr, NULL if none */
const char *cu_path_at(const struct cu_paths *cp, uint64_t addr);
void cu_paths_free(struct cu_paths *cp);
/*
 * The source file of the function f, the portable profile's: the path of its compile
 * unit, else the name of the STT_FILE symbol before it (a local symbol: a basename),
 * else "" (a global symbol in an image without DWARF)
 */
const char *cu_func_file(const struct cu_paths *cp, const struct kmeta_image *img,
			 const struct kmeta_sym *f);

/*
 * The key of a compile unit: name relative to comp_dir (comp_dir may be NULL),
 * lexically normalized (no ".", no "x/.."), its leading ".." dropped: for a kernel
 * built in its tree or out of it (O=), the path from the source tree's root, whatever
 * directory it was built in.  Malloc'ed.
 */
char *cu_path_key(const char *name, const char *comp_dir);

#endif
