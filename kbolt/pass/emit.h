/* SPDX-License-Identifier: GPL-2.0 */
/*
 * emit.c: branch sizes, new offsets, the address map, new bytes.
 */
#ifndef KBOLT_PASS_EMIT_H
#define KBOLT_PASS_EMIT_H

#include "../model/opt.h"

int emit_plan(struct opt *opt, struct func *f);
void emit_code(struct opt *opt, struct func *f);
/* Bytes the plan fills: past the ELF size when f grew into its padding */
uint32_t emit_plan_size(const struct func *f);
/* New address of old address addr (identity outside moved functions); false if unmappable */
bool emit_map_addr(struct opt *opt, uint64_t addr, uint64_t *out);
/* The same for a byte inside an op copied whole (a relocated field) */
bool emit_map_field(struct opt *opt, uint64_t addr, uint64_t *out);

#endif
