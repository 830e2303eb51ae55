/* SPDX-License-Identifier: GPL-2.0 */
/*
 * decode.c: the model's functions, and the ops of each (kmeta's decoder, the tables'
 * per-op facts).
 */
#ifndef KBOLT_PASS_DECODE_H
#define KBOLT_PASS_DECODE_H

#include "../model/opt.h"

/* The functions, their aliases, and the skips of the options, the areas and symbols */
void decode_init_funcs(struct opt *opt);
int decode_funcs(struct opt *opt);

#endif
