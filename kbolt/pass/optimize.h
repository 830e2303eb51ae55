/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KBOLT_OPTIMIZE_H
#define KBOLT_OPTIMIZE_H

#include <stdbool.h>

#include "../model/opt.h"

struct optimize_report {
	bool stats, json, pretty;
};

/* kbolt optimize: 0, or 1 after reporting; nothing is written at out on failure */
int kbolt_optimize(const char *in, const char *out, const struct opt_options *o,
		   const struct optimize_report *rep);

#endif
