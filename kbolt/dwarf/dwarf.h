/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DWARF stage of kbolt optimize --update-debug, as the pipeline calls it
 * (pass/optimize.c): each rewriter's check, before the layouts, and its rewrite, after
 * rewrite_image().  What the rewriters share among themselves is io.h's and
 * info_walk.h's.
 */
#ifndef KBOLT_DWARF_DWARF_H
#define KBOLT_DWARF_DWARF_H

#include "../model/opt.h"

/*
 * line.c (--update-debug).  Before the layouts, dwarf_line_judge() finds whether
 * kbolt can update the line table, changing nothing (so other passes may run beside
 * it), and dwarf_line_keep() then keeps every function if it cannot (a skip, with a
 * warning).  dwarf_line_rewrite(), after rewrite_image(): the new .debug_line and what
 * refers to it, into out (kbolt/lib/output.h).
 */
struct output_secs;
struct dwarf_patches;
struct line_verdict {
	const char *why;	/* NULL: kbolt can update the line table */
	const char *sec;	/* where it cannot: the section, */
	uint64_t at;		/* and the offset in it */
};
void dwarf_line_judge(struct opt *opt, struct line_verdict *v);
void dwarf_line_keep(struct opt *opt, const struct line_verdict *v);
/* its patches of .debug_info into ps, which dwarf_patches_apply() writes (io.h) */
int dwarf_line_rewrite(struct opt *opt, struct output_secs *out, struct dwarf_patches *ps);
/*
 * frame.c (--update-debug), the same for .debug_frame: dwarf_frame_check() keeps
 * every function whose call frame information kbolt cannot update where it is,
 * dwarf_frame_rewrite() writes the new section and its relocations
 */
void dwarf_frame_check(struct opt *opt);
int dwarf_frame_rewrite(struct opt *opt, struct output_secs *out);
/*
 * info.c (--update-debug), the code addresses of .debug_info (scopes, call sites,
 * labels) and their range lists: dwarf_info_check() keeps every function where one is
 * no place kbolt can map, dwarf_info_rewrite() patches them (into ps) and writes the
 * new range lists
 */
void dwarf_info_check(struct opt *opt);
int dwarf_info_rewrite(struct opt *opt, struct output_secs *out, struct dwarf_patches *ps);

#endif
