/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rewrite.c: tables, relocations and data that point into moved code.
 */
#ifndef KBOLT_PASS_REWRITE_H
#define KBOLT_PASS_REWRITE_H

#include "../model/opt.h"

int rewrite_image(struct opt *opt);

#endif
