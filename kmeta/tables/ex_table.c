// SPDX-License-Identifier: GPL-2.0
/*
 * __ex_table: struct exception_table_entry (arch/x86/include/asm/extable.h): s32 insn,
 * s32 fixup, s32 data, where data packs type (bits 0-7, EX_TYPE_* from
 * asm/extable_fixup_types.h), register (8-11), flags (12-15) and a signed immediate
 * (16-31).  Sorted by insn at build time (scripts/sorttable) and binary-searched: faults
 * can be taken before any boot-time sort.  insn -> fixup is a control-flow edge that
 * exists only here.  Before 5.16 the third field is s32 handler -> the ex_handler_*()
 * function that resumes at fixup, often in the .fixup section (5.10).
 */
#include <inttypes.h>
#include <stdio.h>

#include "../table.h"

enum { EX_INSN, EX_FIXUP, EX_DATA };

static const struct layout ex_table_layouts[] = {
	{ .name = "6.1+", .entry_size = 12, .fields = {
		{ "insn", NULL, 0, FK_PCREL32, FR_SITE, 0 },
		{ "fixup", NULL, 4, FK_PCREL32, FR_CODE, 0 },
		{ "data", NULL, 8, FK_S32, FR_VALUE, 0 },
	} },
	{ .name = "handler", .max_version = KMETA_VERSION(5, 15), .entry_size = 12, .fields = {
		{ "insn", NULL, 0, FK_PCREL32, FR_SITE, 0 },
		{ "fixup", NULL, 4, FK_PCREL32, FR_CODE, 0 },
		{ "handler", NULL, 8, FK_PCREL32, FR_CODE, 0 },
	} },
};

#define EX_TYPE_ZEROPAD 20

/* EX_TYPE_* by number; 6.12 dropped COPY (4) and added ERETU (21) */
static const char *const ex_type_names[] = {
	"NONE", "DEFAULT", "FAULT", "UACCESS", "COPY", "CLEAR_FS", "FPU_RESTORE", "BPF",
	"WRMSR", "RDMSR", "WRMSR_SAFE", "RDMSR_SAFE", "WRMSR_IN_MCE", "RDMSR_IN_MCE",
	"DEFAULT_MCE_SAFE", "FAULT_MCE_SAFE", "POP_REG", "IMM_REG", "FAULT_SGX", "UCOPY_LEN",
	"ZEROPAD", "ERETU",
};

static const char *const reg_names[16] = {
	"ax", "cx", "dx", "bx", "sp", "bp", "si", "di",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
};

static bool ex_table_format(struct kmeta_table *t, const struct kmeta_entry *e,
			    unsigned int i, char *buf, size_t size)
{
	int32_t data = (int32_t)e->val[EX_DATA];
	unsigned int type = data & 0xff, reg = (data >> 8) & 0xf, flags = (data >> 12) & 0xf;
	int imm = data >> 16;
	int n;

	if (i != EX_DATA || (int)i != table_field_idx(t, "data"))
		return false;
	if (type < sizeof(ex_type_names) / sizeof(ex_type_names[0]))
		n = snprintf(buf, size, "EX_TYPE_%s", ex_type_names[type]);
	else
		n = snprintf(buf, size, "EX_TYPE_%u", type);
	if (reg && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - n, ",reg=%s", reg_names[reg]);
	if (flags && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - n, ",flags=0x%x", flags);
	if (imm && n >= 0 && (size_t)n < size)
		snprintf(buf + n, size - n, ",imm=%d", imm);
	return true;
}

static void ex_table_check(struct kmeta_table *t, const struct kmeta_entry *e,
			   struct check_ctx *c)
{
	uint64_t fixup = e->val[EX_FIXUP];
	int len;

	if (!check_site_is_code(c, e->site, "faulting instruction") ||
	    !check_insn_boundary(c, e->site, "faulting instruction"))
		return;
	if (!check_site_is_code(c, fixup, "fixup"))
		return;
	check_insn_boundary(c, fixup, "fixup");
	if (table_field_idx(t, "data") == EX_DATA &&
	    ((int32_t)e->val[EX_DATA] & 0xff) == EX_TYPE_ZEROPAD) {
		/* ex_handler_zeropad() resumes at fixup: it must be the next instruction */
		len = kmeta_insn_len(t->img, e->site);
		if (len > 0 && fixup != e->site + len)
			check_report(c, e->site, "EX_TYPE_ZEROPAD fixup is not the next instruction");
	}
}

const struct table_desc ex_table_table = {
	.name = "ex_table",
	.start_sym = "__start___ex_table",
	.stop_sym = "__stop___ex_table",
	.sec_name = "__ex_table",
	.btf_struct = "exception_table_entry",
	.layouts = ex_table_layouts,
	.nr_layouts = ARRAY_SIZE(ex_table_layouts),
	.sorted = true,
	.format = ex_table_format,
	.check = ex_table_check,
	.rewrite = { TR_GLUED_FIXUP },
};
