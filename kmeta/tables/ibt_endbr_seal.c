// SPDX-License-Identifier: GPL-2.0
/*
 * .ibt_endbr_seal (CONFIG_X86_KERNEL_IBT): s32 pointers to endbr64 instructions of
 * functions that are never called indirectly; apply_seal_endbr() overwrites each with a
 * 4-byte nop at boot, and only if it still is endbr64.
 */
#include <string.h>

#include "../table.h"

DEFINE_SITE_LIST_LAYOUT(ibt_endbr_seal_layouts);

static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };

static void ibt_endbr_seal_check(struct kmeta_table *t, const struct kmeta_entry *e,
				 struct check_ctx *c)
{
	const unsigned char *p;

	if (!check_site_is_code(c, e->site, "endbr64") ||
	    !check_insn_boundary(c, e->site, "endbr64"))
		return;
	p = kmeta_bytes_at(t->img, e->site, sizeof(endbr64));
	if (!p || memcmp(p, endbr64, sizeof(endbr64)))
		check_report(c, e->site, "expected endbr64 (f3 0f 1e fa)");
}

const struct table_desc ibt_endbr_seal_table = {
	.name = "ibt_endbr_seal",
	.start_sym = "__ibt_endbr_seal",
	.stop_sym = "__ibt_endbr_seal_end",
	.sec_name = ".ibt_endbr_seal",
	.layouts = ibt_endbr_seal_layouts,
	.nr_layouts = 1,
	.check = ibt_endbr_seal_check,
};
