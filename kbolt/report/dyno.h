/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KBOLT_DYNO_H
#define KBOLT_DYNO_H

#include <stdint.h>

#include "../../common/json.h"
#include "../model/opt.h"

/* What executed branches the layout leaves, weighted by the profile (dyno.c) */
enum dyno_kind {
	DYNO_TAKEN_JCC,		/* conditional branches taken */
	DYNO_NOT_TAKEN_JCC,	/* conditional branches not taken */
	DYNO_JMP,		/* unconditional jmps inside functions */
	DYNO_FALL,		/* blocks left into the next without a taken branch */
	DYNO_NR
};

enum { DYNO_BEFORE, DYNO_AFTER };

struct dyno_stats {
	uint64_t v[2][DYNO_NR];	/* DYNO_BEFORE, DYNO_AFTER */
	double ext_tsp[2];	/* the layouts' ext-TSP score (ext_tsp.c), summed */
	size_t greedy_fallback;	/* rewritten functions whose ext-TSP order did not fit */
};

/* After layout and orc_fit_budget(): the final set of moved functions */
void dyno_gather(const struct opt *opt, struct dyno_stats *d);
void dyno_print_text(const struct dyno_stats *d);
/* As the value of a key already written */
void dyno_print_json(const struct dyno_stats *d, struct json *j);

#endif
