/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cfg.c: basic blocks and their successors, metadata edges included.
 */
#ifndef KBOLT_PASS_CFG_H
#define KBOLT_PASS_CFG_H

#include "../model/opt.h"

/* May skip f, with its reason; has no error to return */
void cfg_build(struct opt *opt, struct func *f);
/* Blocks of the function's own code, not of the padding after it */
uint32_t cfg_nr_body_bbs(const struct func *f);
long cfg_find_bb_of_op(const struct func *f, uint32_t op);

#endif
