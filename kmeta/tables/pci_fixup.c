// SPDX-License-Identifier: GPL-2.0
/*
 * .pci_fixup: struct pci_fixup (include/linux/pci.h, CONFIG_HAVE_ARCH_PREL32_RELOCATIONS):
 * u16 vendor, u16 device, u32 class, u32 class_shift, s32 -> hook.  The hooks are
 * function starts, unaffected while functions keep their addresses.
 */
#include "../table.h"

static const struct layout pci_fixup_layouts[] = {
	{ .name = "prel32", .entry_size = 16, .fields = {
		{ "vendor", NULL, 0, FK_U16, FR_VALUE, 0, true },
		{ "device", NULL, 2, FK_U16, FR_VALUE, 0, true },
		{ "class", NULL, 4, FK_U32, FR_VALUE, 0, true },
		{ "class_shift", NULL, 8, FK_U32, FR_VALUE, 0 },
		{ "hook", "hook_offset", 12, FK_PCREL32, FR_SITE, 0 },
	} },
};

static void pci_fixup_check(struct kmeta_table *t, const struct kmeta_entry *e,
			    struct check_ctx *c)
{
	struct kmeta_sym *func = kmeta_find_func_containing(t->img, e->site);

	if (!check_site_is_code(c, e->site, "fixup hook"))
		return;
	if (!func || func->addr != e->site)
		check_report(c, e->site, "hook is not the start of a function");
}

const struct table_desc pci_fixup_table = {
	.name = "pci_fixup",
	.sec_name = ".pci_fixup",
	.btf_struct = "pci_fixup",
	.layouts = pci_fixup_layouts,
	.nr_layouts = ARRAY_SIZE(pci_fixup_layouts),
	.check = pci_fixup_check,
};
