/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The check engine's context: who receives violations, and where the walk is.
 */
#ifndef KMETA_CHECK_H
#define KMETA_CHECK_H

#include "table.h"

struct check_ctx {
	struct kmeta_table *t;
	const struct kmeta_entry *e;	/* the entry being checked */
	size_t nr_violations;
	void (*report)(struct check_ctx *c, uint64_t addr, const char *msg);
	void *priv;
};

/* Check every entry of t, reporting through c->report; 0 or a negative errno. */
int kmeta_check_table(struct check_ctx *c, struct kmeta_table *t);

#endif
