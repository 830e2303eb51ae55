/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KBOLT_TRANSLATE_H
#define KBOLT_TRANSLATE_H

#include "../../kmeta/kmeta.h"
#include "profile.h"

/* What a translation did (records turned back from the layout's changes) */
struct prof_translation {
	size_t funcs;		/* moved functions in the table */
	size_t added;		/* records from a jmp the layout added */
	size_t removed;		/* fall-throughs over a jmp the layout removed */
	size_t inverted;	/* jcc records whose sense the inverted condition swapped */
};

/*
 * p, a profile of img (kbolt's output, profile_match()ed), into a profile of the
 * input it was made from, through img's .kbolt.bat: its edges replaced, summed and
 * sorted, its build-id the input's.  0, or -EINVAL after reporting.
 */
int prof_translate(struct kmeta_image *img, struct prof *p, struct prof_translation *res);

#endif
