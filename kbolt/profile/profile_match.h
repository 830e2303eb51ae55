/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KBOLT_PROFILE_MATCH_H
#define KBOLT_PROFILE_MATCH_H

#include <stdbool.h>

#include "../../kmeta/kmeta.h"
#include "profile.h"

/*
 * More than this share (in percent) of the records judged by their addresses miss the
 * image's instructions: the profile is of another kernel.  The 6.1 proc profile misses
 * none on its kernel, 95% on 6.12, 90% with its addresses moved by 2 MiB (KASLR).
 */
#define PROFILE_MATCH_MAX_MISSED_PCT 10

/*
 * Is p a profile of img?  0, or -EINVAL after reporting why not.  With force, a profile
 * of another kernel is used with a warning; a profile without records never is.  A
 * profile of where the kernel ran (p->text_runtime) is first moved to img's link
 * addresses; a symbolic one (BOLT's fdata) resolved against img's functions.
 */
int profile_match(struct kmeta_image *img, struct prof *p, bool force);

/*
 * profile_symbols.c: a symbolic profile's records (prof_is_symbolic()) made addresses
 * of img.  0, or -EINVAL after reporting a name img does not have; with force such
 * records are left out, with a warning.
 */
int profile_resolve_symbols(struct kmeta_image *img, struct prof *p, bool force);
/* profile_symbols.c: img's functions sorted by name, then address: malloc'ed */
struct kmeta_sym **profile_funcs_by_name(struct kmeta_image *img);
/*
 * profile_symbols.c: the symbol a BOLT name (NAME, or NAME/N for the Nth local
 * function of that name) names, NULL if none; by_name from profile_funcs_by_name()
 */
struct kmeta_sym *profile_find_bolt_func(struct kmeta_image *img, struct kmeta_sym **by_name,
					 const char *name);
/*
 * profile_symbols.c: N of the name BOLT gives a local function, NAME/N (the Nth local
 * function symbol called NAME, by address); 0 for a global one, named NAME
 */
size_t profile_bolt_local_nth(struct kmeta_image *img, struct kmeta_sym **by_name,
			       const struct kmeta_sym *func);
/*
 * profile_symbols.c: e's kind once its addresses are img's: PK_FALLTHROUGH if from
 * falls through to to, the next instruction; else e->kind
 */
unsigned int profile_edge_kind(struct kmeta_image *img, const struct prof_edge *e);
/*
 * profile_symbols.c: p, of img's link addresses, as BOLT's fdata: its transfers (not
 * interrupts, samples left out) or, when it has only samples, its samples (no_lbr);
 * records in code of no function are left out.  The number of lines of records.
 */
size_t profile_write_fdata(struct kmeta_image *img, const struct prof *p, FILE *f);

#endif
