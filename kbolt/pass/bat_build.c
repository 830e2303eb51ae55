// SPDX-License-Identifier: GPL-2.0
/*
 * The translation table of the output (lib/bat.h), from emit's plan of every moved
 * function: each item placed (an old op, a branch emit re-encoded, or a jmp it added)
 * gives an entry at its new offset; each old op that was not placed (a jmp made a
 * fall-through, the int3 after it, padding nobody reaches) an entry marked removed.
 * A jcc records its old target, so that profile/translate.c can tell a taken branch
 * from a fall-through once the condition was inverted.  Runs after orc_fit_budget():
 * only the functions whose new code is written.
 */
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../lib/bat.h"
#include "../model/opt.h"
#include "bat_build.h"

static void add_entry(struct bat_func *bf, size_t *cap, struct bat_entry e)
{
	GROW(bf->entries, *cap, bf->nr + 1);
	bf->entries[bf->nr++] = e;
}

static void build_func(const struct func *f, struct bat_func *bf)
{
	unsigned char *placed = xcalloc(f->nr_ops + 1, 1);
	size_t cap = 0;

	bf->addr = f->sym->addr;
	bf->size = f->sym->size;
	for (uint32_t k = 0; k < f->nr_items; k++) {
		const struct item *it = &f->items[k];
		const struct op *op = &f->ops[it->op];
		struct bat_entry e = { .new_off = it->new_off, .old_off = op->off,
				       .old_len = op->len };

		if (it->added) {
			e.flags = BAT_ADDED;	/* old_off: its target's first op */
			e.old_len = 0;
		} else {
			placed[it->op] = 1;
			if (op->kind == KI_JCC && op->rel_size) {
				e.flags = BAT_JCC;
				e.target = op->target;
			}
		}
		add_entry(bf, &cap, e);
	}
	for (uint32_t i = 0; i < f->nr_ops; i++)
		if (!placed[i])
			add_entry(bf, &cap, (struct bat_entry){ .new_off = UINT32_MAX,
				  .old_off = f->ops[i].off, .old_len = f->ops[i].len,
				  .flags = BAT_REMOVED });
	free(placed);
}

void bat_build(const struct opt *opt, struct bat *b)
{
	memset(b, 0, sizeof(*b));
	if (kmeta_build_id(opt->img, b->build_id, sizeof(b->build_id)))
		b->build_id[0] = '\0';
	for (size_t i = 0; i < opt->nr_funcs; i++) {
		const struct func *f = &opt->funcs[i];

		if (!f->moved || f->alias || !f->nr_items)
			continue;
		GROW(b->funcs, b->cap, b->nr + 1);
		b->funcs[b->nr] = (struct bat_func){ 0 };
		build_func(f, &b->funcs[b->nr++]);
	}
}
