// SPDX-License-Identifier: GPL-2.0
/*
 * .cfi_sites (Clang kCFI with CONFIG_FINEIBT): s32 pointers to the __cfi_ preambles,
 * "movl $hash, %eax" (b8 imm32), which FineIBT rewrites at boot.  Absent from GCC builds
 * such as Debian's.
 */
#include "../table.h"

DEFINE_SITE_LIST_LAYOUT(cfi_sites_layouts);

static void cfi_sites_check(struct kmeta_table *t, const struct kmeta_entry *e,
			    struct check_ctx *c)
{
	const unsigned char *p;

	if (!check_site_is_code(c, e->site, "kCFI preamble"))
		return;
	p = kmeta_bytes_at(t->img, e->site, 5);
	if (!p || p[0] != 0xb8)
		check_report(c, e->site, "expected a kCFI preamble (b8 imm32: movl $hash, %%eax)");
}

const struct table_desc cfi_sites_table = {
	.name = "cfi_sites",
	.start_sym = "__cfi_sites",
	.stop_sym = "__cfi_sites_end",
	.sec_name = ".cfi_sites",
	.layouts = cfi_sites_layouts,
	.nr_layouts = 1,
	.check = cfi_sites_check,
};
