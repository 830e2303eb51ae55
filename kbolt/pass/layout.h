/* SPDX-License-Identifier: GPL-2.0 */
/*
 * layout.c: a block order per function (ext-TSP, greedy chains or random), each
 * planned by emit; ext_tsp.c: the ext-TSP order of a function's executed blocks.
 */
#ifndef KBOLT_PASS_LAYOUT_H
#define KBOLT_PASS_LAYOUT_H

#include "../model/opt.h"

int layout_func(struct opt *opt, struct func *f);

/* ext_tsp.c: f->order by ext-TSP; -E2BIG if f has too many executed blocks for it */
int ext_tsp_order(struct func *f);
/* The ext-TSP score of blocks laid out in order (old block sizes) */
double ext_tsp_score(const struct func *f, const uint32_t *order, uint32_t nr);

#endif
