/* SPDX-License-Identifier: GPL-2.0 */
/*
 * orc_gen.c: the ORC table regenerated for the new code.
 */
#ifndef KBOLT_PASS_ORC_GEN_H
#define KBOLT_PASS_ORC_GEN_H

#include "../model/opt.h"

int orc_read(struct opt *opt);
int orc_count_func(struct opt *opt, struct func *f);
int orc_fit_budget(struct opt *opt);
int orc_write(struct opt *opt);

#endif
