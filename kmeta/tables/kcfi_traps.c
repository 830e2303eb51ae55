// SPDX-License-Identifier: GPL-2.0
/*
 * .kcfi_traps (Clang kCFI): s32 pointers to the ud2 of each kCFI check; the trap handler
 * decodes the "mov/add/je" before it, so that sequence must stay contiguous with the call.
 * Absent from GCC builds such as Debian's.
 */
#include "../table.h"

DEFINE_SITE_LIST_LAYOUT(kcfi_traps_layouts);

static void kcfi_traps_check(struct kmeta_table *t, const struct kmeta_entry *e,
			     struct check_ctx *c)
{
	const unsigned char *p;

	if (!check_site_is_code(c, e->site, "kCFI trap") ||
	    !check_insn_boundary(c, e->site, "kCFI trap"))
		return;
	p = kmeta_bytes_at(t->img, e->site, 2);
	if (!p || p[0] != 0x0f || p[1] != 0x0b)
		check_report(c, e->site, "expected ud2 (0f 0b)");
}

const struct table_desc kcfi_traps_table = {
	.name = "kcfi_traps",
	.start_sym = "__start___kcfi_traps",
	.stop_sym = "__stop___kcfi_traps",
	.sec_name = "__kcfi_traps",	/* the section's name in vmlinux and modules */
	.layouts = kcfi_traps_layouts,
	.nr_layouts = 1,
	.check = kcfi_traps_check,
};
