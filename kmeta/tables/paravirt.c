// SPDX-License-Identifier: GPL-2.0
/*
 * .parainstructions (5.10, 6.1; removed in 6.8): struct paravirt_patch_site
 * (arch/x86/include/asm/paravirt_types.h): u64 absolute site, u8 type = index of the
 * pv_ops slot the site calls, u8 len.  paravirt_patch() overwrites the site with a direct
 * call or with native code and nops; the site is "call *pv_ops+8*type(%rip)" (ff 15), in
 * 5.10 "call *pv_ops+8*type" with an absolute address (ff 14 25 abs32), or in 5.10's entry
 * code "jmp *pv_ops+8*type(%rip)" (ff 25: cpu.iret).
 */
#include <stdio.h>

#include "../table.h"

enum { PV_INSTR, PV_TYPE, PV_LEN };

static const struct layout paravirt_layouts[] = {
	/*
	 * 5.10 emits a u16 clobbers after len (not in the struct) and no padding after the
	 * last entry: the section ends 4 bytes short of a whole entry (cut_tail).
	 */
	{ .name = "6.1", .entry_size = 16, .cut_tail = true, .fields = {
		{ "instr", NULL, 0, FK_ABS64, FR_SITE, 0 },
		{ "type", NULL, 8, FK_U8, FR_VALUE, 0 },
		{ "len", NULL, 9, FK_U8, FR_VALUE, 0 },
	} },
};

static bool paravirt_format(struct kmeta_table *t, const struct kmeta_entry *e,
			    unsigned int i, char *buf, size_t size)
{
	char path[128];

	if (i != PV_TYPE)
		return false;
	if (kmeta_btf_member_at(t->img, "paravirt_patch_template", e->val[PV_TYPE] * 8,
				path, sizeof(path)))
		snprintf(buf, size, "pv_ops[%u]", (unsigned int)e->val[PV_TYPE]);
	else
		snprintf(buf, size, "%s", path);
	return true;
}

/* The slot the indirect call or jmp at site reads: its length, 0 if not such a branch */
static unsigned int pv_branch_slot(struct kmeta_image *img, uint64_t site, uint64_t *slot)
{
	const unsigned char *p = kmeta_bytes_at(img, site, 7);

	if (p && p[0] == 0xff && (p[1] == 0x15 || p[1] == 0x25)) {	/* call/jmp *disp(%rip) */
		*slot = site + 6 + (int32_t)get_u32(p + 2);
		return 6;
	}
	if (p && p[0] == 0xff && p[1] == 0x14 && p[2] == 0x25) {	/* call *abs32 */
		*slot = (uint64_t)(int64_t)(int32_t)get_u32(p + 3);
		return 7;
	}
	return 0;
}

static void paravirt_check(struct kmeta_table *t, const struct kmeta_entry *e,
			   struct check_ctx *c)
{
	struct kmeta_sym *pv_ops = kmeta_find_sym_by_name(t->img, "pv_ops");
	uint64_t slot;
	unsigned int len;

	if (!check_site_is_code(c, e->site, "paravirt site") ||
	    !check_insn_boundary(c, e->site, "paravirt site"))
		return;
	if (!kmeta_bytes_at(t->img, e->site, e->val[PV_LEN]))
		check_report(c, e->site, "site of %u bytes runs past its section",
			     (unsigned int)e->val[PV_LEN]);
	len = pv_branch_slot(t->img, e->site, &slot);
	if (!len || e->val[PV_LEN] < len) {
		check_report(c, e->site, "expected call *pv_ops+slot(%%rip) (ff 15), "
			     "jmp *pv_ops+slot(%%rip) (ff 25) or call *pv_ops+slot (ff 14 25) in %u bytes",
			     (unsigned int)e->val[PV_LEN]);
		return;
	}
	if (pv_ops && slot != pv_ops->addr + 8 * e->val[PV_TYPE])
		check_report(c, e->site, "calls through pv_ops+0x%llx, but its type says slot %u",
			     (unsigned long long)(slot - pv_ops->addr),
			     (unsigned int)e->val[PV_TYPE]);
}

const struct table_desc paravirt_table = {
	.name = "paravirt",
	.start_sym = "__parainstructions",
	.stop_sym = "__parainstructions_end",
	.sec_name = ".parainstructions",
	.btf_struct = "paravirt_patch_site",
	.layouts = paravirt_layouts,
	.nr_layouts = ARRAY_SIZE(paravirt_layouts),
	.format = paravirt_format,
	.check = paravirt_check,
	.rewrite = { TR_PATCHED_UNIT, "len" },
};
