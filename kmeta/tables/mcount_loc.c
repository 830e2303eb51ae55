// SPDX-License-Identifier: GPL-2.0
/*
 * __mcount_loc: u64 absolute addresses of the "call __fentry__" at the start of every
 * traceable function (at +4 after endbr64 with IBT).  Sorted at build time
 * (scripts/sorttable) with CONFIG_BUILDTIME_MCOUNT_SORT (5.18+), at boot by
 * ftrace_process_locs() otherwise (5.10), and binary-searched by ftrace; slots of functions the build
 * dropped are zeroed (filler).  ftrace turns each call into a nop5 at boot, and only
 * after checking that the call is there (ftrace_verify_code(): ftrace_bug() otherwise),
 * so a nop5 in the file is a violation too, unless the build wrote nops: objtool --mnop
 * (CONFIG_HAVE_OBJTOOL_NOP_MCOUNT, Clang's builds) makes every site a nop5 and defines
 * CC_USING_NOP_MCOUNT, and then ftrace_need_init_nop() is false and the sites are taken
 * as they are.  Which of the two an image is is read from its sites: nops if most are.
 */
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "../table.h"

static const struct layout mcount_loc_layouts[] = {
	{ .name = "any", .entry_size = 8, .fields = {
		{ "site", "", 0, FK_ABS64, FR_SITE, 0 },
	} },
};

static const unsigned char nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

/* The build's form of the sites, decided once by most of them */
struct mcount_form {
	bool nops;
};

static bool sites_are_nops(struct kmeta_table *t)
{
	struct mcount_form *form = t->priv;
	size_t nops = 0, others = 0;
	struct kmeta_entry e;

	if (form)
		return form->nops;
	for (size_t i = 0; i < t->nr_slots; i++) {
		const unsigned char *p;

		if (kmeta_table_read_entry(t, i, &e) || e.filler)
			continue;
		p = kmeta_bytes_at(t->img, e.site, 5);
		if (p && !memcmp(p, nop5, 5))
			nops++;
		else
			others++;
	}
	form = t->priv = xcalloc(1, sizeof(*form));
	form->nops = nops > others;
	return form->nops;
}

static void mcount_loc_free(struct kmeta_table *t)
{
	free(t->priv);
}

static void mcount_loc_check(struct kmeta_table *t, const struct kmeta_entry *e,
			     struct check_ctx *c)
{
	struct kmeta_sym *func = kmeta_find_func_containing(t->img, e->site);
	const unsigned char *start, *p = kmeta_bytes_at(t->img, e->site, 5);
	struct rel32_branch b;
	const char *name;

	if (!check_site_is_code(c, e->site, "fentry call"))
		return;
	/* Debian's vmlinux has fentry sites in functions without a symbol: bytes only */
	start = func ? kmeta_bytes_at(t->img, func->addr, 4) : NULL;
	if (func && e->site != func->addr &&
	    !(e->site == func->addr + 4 && start && !memcmp(start, endbr64, 4)))
		check_report(c, e->site, "fentry call is not at the function's start "
			     "(or right after its endbr64)");
	if (sites_are_nops(t)) {
		if (!p || memcmp(p, nop5, 5))
			check_report(c, e->site, "expected a nop5 (0f 1f 44 00 00), as the image's "
				     "other fentry sites (objtool --mnop)");
		return;
	}
	if (!read_rel32_branch(t->img, e->site, &b) || b.opcode != 0xe8 || b.prefixed) {
		check_report(c, e->site, "expected call __fentry__ (e8 rel32)%s",
			     p && !memcmp(p, nop5, 5) ? ": a nop5 makes ftrace_bug() at boot" : "");
		return;
	}
	name = sym_name_at(t->img, b.target);
	if (!name || strcmp(name, "__fentry__"))
		check_report(c, e->site, "call goes to %s, not __fentry__",
			     name ? name : "a place with no symbol");
}

const struct table_desc mcount_loc_table = {
	.name = "mcount_loc",
	.start_sym = "__start_mcount_loc",
	.stop_sym = "__stop_mcount_loc",
	.sec_name = "__mcount_loc",
	.layouts = mcount_loc_layouts,
	.nr_layouts = ARRAY_SIZE(mcount_loc_layouts),
	.sorted = true,
	.sort_optional = true,
	.check = mcount_loc_check,
	.free_priv = mcount_loc_free,
	.rewrite = { TR_AFTER_ENDBR | TR_PATCHED_POINT },
};
