// SPDX-License-Identifier: GPL-2.0
/*
 * .call_sites (call-depth tracking, CONFIG_CALL_DEPTH_TRACKING, 6.2+): s32 pointers to
 * direct calls (e8 rel32).  callthunks_patch_builtin_calls() re-targets each to the
 * accounting thunk in the 16 bytes before its destination.
 */
#include "../table.h"

DEFINE_SITE_LIST_LAYOUT(call_sites_layouts);

static void call_sites_check(struct kmeta_table *t, const struct kmeta_entry *e,
			     struct check_ctx *c)
{
	const unsigned char *p;

	if (!check_site_is_code(c, e->site, "call") || !check_insn_boundary(c, e->site, "call"))
		return;
	p = kmeta_bytes_at(t->img, e->site, 5);
	if (!p || p[0] != 0xe8)
		check_report(c, e->site, "expected a direct call (e8 rel32)");
}

const struct table_desc call_sites_table = {
	.name = "call_sites",
	.start_sym = "__call_sites",
	.stop_sym = "__call_sites_end",
	.sec_name = ".call_sites",
	.layouts = call_sites_layouts,
	.nr_layouts = 1,
	.check = call_sites_check,
	.rewrite = { TR_PATCHED_POINT },
};
