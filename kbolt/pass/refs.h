/* SPDX-License-Identifier: GPL-2.0 */
/*
 * refs.c: the references into function bodies (code, tables, relocations, ORC) and the
 * skips they force.
 */
#ifndef KBOLT_PASS_REFS_H
#define KBOLT_PASS_REFS_H

#include "../model/opt.h"

int refs_collect(struct opt *opt);
/* The decoded instruction of code outside functions (replacements, aux) at addr */
const struct kmeta_insn *refs_find_extra_insn(struct opt *opt, uint64_t addr);

#endif
