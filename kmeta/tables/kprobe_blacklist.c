// SPDX-License-Identifier: GPL-2.0
/*
 * _kprobe_blacklist (NOKPROBE_SYMBOL()): u64 absolute addresses of functions kprobes
 * must not probe; init_kprobes() looks each up with kallsyms to get its size.  Function
 * starts, unaffected while functions keep their addresses.
 */
#include "../table.h"

static const struct layout kprobe_blacklist_layouts[] = {
	{ .name = "any", .entry_size = 8, .fields = {
		{ "addr", "", 0, FK_ABS64, FR_SITE, 0 },
	} },
};

static void kprobe_blacklist_check(struct kmeta_table *t, const struct kmeta_entry *e,
				   struct check_ctx *c)
{
	/* asm entry points (asm_exc_*) are NOTYPE symbols: any symbol start will do */
	if (!check_site_is_code(c, e->site, "blacklisted function"))
		return;
	if (!kmeta_find_sym_at(t->img, e->site))
		check_report(c, e->site, "no symbol starts here");
}

const struct table_desc kprobe_blacklist_table = {
	.name = "kprobe_blacklist",
	.start_sym = "__start_kprobe_blacklist",
	.stop_sym = "__stop_kprobe_blacklist",
	.sec_name = "_kprobe_blacklist",
	.layouts = kprobe_blacklist_layouts,
	.nr_layouts = ARRAY_SIZE(kprobe_blacklist_layouts),
	.check = kprobe_blacklist_check,
};
