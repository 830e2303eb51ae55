// SPDX-License-Identifier: GPL-2.0
/*
 * Checking every table entry against the bytes it points to: the engine that walks the
 * tables and calls each table's check hook, the generic sortedness check, and the
 * helpers the hooks share.  Violations go to a callback, located as func+0xoff.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "internal.h"

void check_report(struct check_ctx *c, uint64_t addr, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->nr_violations++;
	c->report(c, addr, msg);
}

bool check_site_is_code(struct check_ctx *c, uint64_t addr, const char *what)
{
	if (kmeta_is_text_addr(c->t->img, addr))
		return true;
	check_report(c, addr, "%s is not in an executable section", what);
	return false;
}

bool check_insn_boundary(struct check_ctx *c, uint64_t addr, const char *what)
{
	/* -1: not in a decodable function; nothing to say about boundaries there */
	if (kmeta_is_insn_boundary(c->t->img, addr) != 0)
		return true;
	check_report(c, addr, "%s is not on an instruction boundary", what);
	return false;
}

bool read_rel32_branch(struct kmeta_image *img, uint64_t addr, struct rel32_branch *b)
{
	const unsigned char *p = kmeta_bytes_at(img, addr, 5);
	unsigned int i = 0;

	if (!p)
		return false;
	b->prefixed = p[0] == 0x2e;
	if (b->prefixed)
		i++;
	if (p[i] == 0xe8 || p[i] == 0xe9) {
		b->opcode = p[i];
		b->len = i + 5;
	} else if (p[i] == 0x0f && (p[i + 1] & 0xf0) == 0x80) {
		b->opcode = p[i + 1];
		b->len = i + 6;
	} else {
		return false;
	}
	/* only now read the whole instruction: a site may end its section */
	p = kmeta_bytes_at(img, addr, b->len);
	if (!p)
		return false;
	b->target = addr + b->len + (int32_t)get_u32(p + b->len - 4);
	return true;
}

static void check_sorted(struct check_ctx *c, const struct kmeta_entry *e, uint64_t *prev)
{
	if (e->site < *prev)
		check_report(c, e->site, "table not sorted: entry %zu comes before the previous "
			     "entry's site", e->idx);
	*prev = e->site;
}

int kmeta_check_table(struct check_ctx *c, struct kmeta_table *t)
{
	uint64_t prev = 0;
	struct kmeta_entry e;

	c->t = t;
	for (size_t i = 0; t->present && i < t->nr_slots; i++) {
		int err = kmeta_table_read_entry(t, i, &e);

		if (err)
			return err;
		if (e.filler)
			continue;
		c->e = &e;
		/* modules' sorted tables are sorted by the module loader, not the build */
		if (kmeta_table_sorted(t) && !t->img->is_module)
			check_sorted(c, &e, &prev);
		if (t->desc->check)
			t->desc->check(t, &e, c);
	}
	c->e = NULL;
	return 0;
}
