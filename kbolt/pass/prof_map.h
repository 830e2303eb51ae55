/* SPDX-License-Identifier: GPL-2.0 */
/*
 * prof_map.c: profile records onto functions and blocks; infer.c: block counts from
 * samples.
 */
#ifndef KBOLT_PASS_PROF_MAP_H
#define KBOLT_PASS_PROF_MAP_H

#include "../model/opt.h"

void prof_map_weigh_funcs(struct opt *opt);	/* before decode_funcs() */
void prof_map_apply(struct opt *opt);	/* after cfg_build() */

/*
 * infer.c: f's block counts and edge weights from the samples of its blocks
 * (samples[b] of block b, its body blocks), by minimum-cost flow
 */
void infer_counts(struct func *f, const uint64_t *samples);

#endif
