// SPDX-License-Identifier: GPL-2.0
/*
 * .retpoline_sites (CONFIG_RETPOLINE): s32 pointers to calls, jumps and conditional jumps
 * (optionally cs-prefixed, for padding) to __x86_indirect_thunk_<reg>.  apply_retpolines()
 * derives the register from the thunk and rewrites the site in place with an equal-length
 * indirect branch or lfence sequence.
 */
#include <string.h>

#include "../table.h"

DEFINE_SITE_LIST_LAYOUT(retpoline_sites_layouts);

static void retpoline_sites_check(struct kmeta_table *t, const struct kmeta_entry *e,
				  struct check_ctx *c)
{
	static const char prefix[] = "__x86_indirect_";
	struct rel32_branch b;
	const char *name;

	if (!check_site_is_code(c, e->site, "retpoline site") ||
	    !check_insn_boundary(c, e->site, "retpoline site"))
		return;
	if (!read_rel32_branch(t->img, e->site, &b)) {
		check_report(c, e->site, "expected a call, jmp or jcc rel32 to a retpoline thunk");
		return;
	}
	if (kmeta_find_alias_at(t->img, b.target, prefix, true))
		return;
	name = sym_name_at(t->img, b.target);
	check_report(c, e->site, "branch goes to %s, not a __x86_indirect_thunk_*",
		     name ? name : "a place with no symbol");
}

const struct table_desc retpoline_sites_table = {
	.name = "retpoline_sites",
	.start_sym = "__retpoline_sites",
	.stop_sym = "__retpoline_sites_end",
	.sec_name = ".retpoline_sites",
	.layouts = retpoline_sites_layouts,
	.nr_layouts = 1,
	.check = retpoline_sites_check,
	.rewrite = { TR_PATCHED_POINT },
};
