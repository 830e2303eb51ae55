/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bat_build.c: the translation table of the moved functions (lib/bat.h), from emit's
 * plans.
 */
#ifndef KBOLT_PASS_BAT_BUILD_H
#define KBOLT_PASS_BAT_BUILD_H

#include "../model/opt.h"

struct bat;
void bat_build(const struct opt *opt, struct bat *b);

#endif
