// SPDX-License-Identifier: GPL-2.0
/*
 * .return_sites (CONFIG_RETHUNK): s32 pointers to "jmp __x86_return_thunk" (e9 rel32),
 * the function returns objtool found; Clang (-mindirect-branch-cs-prefix) puts a cs
 * prefix before it (2e e9 rel32), which apply_returns() decodes with the jmp
 * (insn_decode_kernel()) and patches, all six bytes, as the plain one.  It patches each
 * to "ret; int3..." or to a jmp to the chosen thunk, and warns "missing return thunk"
 * when a site is not that jmp.
 */
#include <string.h>

#include "../table.h"

DEFINE_SITE_LIST_LAYOUT(return_sites_layouts);

static void return_sites_check(struct kmeta_table *t, const struct kmeta_entry *e,
			       struct check_ctx *c)
{
	struct rel32_branch b;
	const char *name;

	if (!check_site_is_code(c, e->site, "return thunk jump") ||
	    !check_insn_boundary(c, e->site, "return thunk jump"))
		return;
	if (!read_rel32_branch(t->img, e->site, &b) || b.opcode != 0xe9) {
		check_report(c, e->site, "expected jmp __x86_return_thunk (e9 rel32)");
		return;
	}
	if (kmeta_find_alias_at(t->img, b.target, "__x86_return_thunk", false))
		return;
	name = sym_name_at(t->img, b.target);
	check_report(c, e->site, "jmp goes to %s, not __x86_return_thunk",
		     name ? name : "a place with no symbol");
}

const struct table_desc return_sites_table = {
	.name = "return_sites",
	.start_sym = "__return_sites",
	.stop_sym = "__return_sites_end",
	.sec_name = ".return_sites",
	.layouts = return_sites_layouts,
	.nr_layouts = 1,
	.check = return_sites_check,
	.rewrite = { TR_PATCHED_POINT },
};
