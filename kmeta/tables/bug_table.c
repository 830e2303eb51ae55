// SPDX-License-Identifier: GPL-2.0
/*
 * __bug_table: struct bug_entry (include/asm-generic/bug.h) with x86's relative pointers
 * and CONFIG_DEBUG_BUGVERBOSE: s32 -> ud2, s32 -> file name, u16 line, u16 flags
 * (BUGFLAG_WARNING, _ONCE, _DONE, _NO_CUT_HERE, _ARGS, taint in bits 8-15); in 7.x also
 * s32 -> the format string.  Searched linearly by the trap handler; for a WARN the kernel
 * resumes at ud2 + 2, so the ud2 must be followed by its fall-through code.
 *
 * A WARN with arguments (BUGFLAG_ARGS, arch/x86/include/asm/bug.h __WARN_print_arg())
 * traps nowhere near its entry: "lea <entry>(%rip),%rdi" hands the entry to a call through
 * the WARN_trap static call, and __WARN_trap's ud1 reports it (handle_bug(), BUG_UD1_WARN).
 * The entry's address is the instruction after the lea, printed as the WARN's caller; the
 * call returns.
 */
#include <stdio.h>
#include <string.h>

#include "../table.h"

enum { BUG_ADDR, BUG_FILE, BUG_LINE, BUG_FLAGS, BUG_FORMAT };

static const struct layout bug_table_layouts[] = {
	{ .name = "verbose", .entry_size = 12, .fields = {
		{ "addr", "bug_addr_disp", 0, FK_PCREL32, FR_SITE, 0 },
		{ "file", "file_disp", 4, FK_PCREL32, FR_DATA, 0 },
		{ "line", NULL, 8, FK_U16, FR_VALUE, 0 },
		{ "flags", NULL, 10, FK_U16, FR_VALUE, 0 },
	} },
	/* 7.x (HAVE_ARCH_BUG_FORMAT): the WARN's format string, after the address */
	{ .name = "format", .entry_size = 16, .fields = {
		{ "addr", "bug_addr_disp", 0, FK_PCREL32, FR_SITE, 0 },
		{ "file", "file_disp", 8, FK_PCREL32, FR_DATA, 0 },
		{ "line", NULL, 12, FK_U16, FR_VALUE, 0 },
		{ "flags", NULL, 14, FK_U16, FR_VALUE, 0 },
		{ "format", "format_disp", 4, FK_PCREL32, FR_DATA, 0 },
	} },
};

#define BUGFLAG_WARNING 1
#define BUGFLAG_ARGS (1 << 4)
#define LEA_RIP_LEN 7	/* REX.W 8d modrm(rip) disp32 */

static bool bug_table_format(struct kmeta_table *t, const struct kmeta_entry *e,
			     unsigned int i, char *buf, size_t size)
{
	static const char *const flag_names[] = { "WARNING", "ONCE", "DONE", "NO_CUT_HERE",
						  "ARGS" };
	unsigned int flags = e->val[BUG_FLAGS];
	const unsigned char *s;
	struct kmeta_sec *sec;
	size_t n = 0, avail;

	if (i == BUG_FILE || i == BUG_FORMAT) {
		sec = kmeta_find_sec_containing(t->img, e->val[i]);
		if (!sec || !sec->data)
			return false;
		/* the string may run to the section's end without its NUL */
		s = sec->data + (e->val[i] - sec->addr);
		avail = sec->size - (e->val[i] - sec->addr);
		n = strnlen((const char *)s, avail < 200 ? avail : 200);
		snprintf(buf, size, "%.*s", (int)n, (const char *)s);
		return true;
	}
	if (i != BUG_FLAGS)
		return false;
	buf[0] = 0;
	for (unsigned int b = 0; b < ARRAY_SIZE(flag_names) && n < size; b++)
		if (flags & (1u << b))
			n += snprintf(buf + n, size - n, "%s%s", n ? "|" : "", flag_names[b]);
	if (flags >> 8 && n < size)
		n += snprintf(buf + n, size - n, "%sTAINT(%u)", n ? "|" : "", flags >> 8);
	if (!n)
		snprintf(buf, size, "BUG");
	return true;
}

/* A WARN with arguments: the site is right after "lea <this entry>(%rip),%reg" */
static void check_warn_args(struct kmeta_table *t, const struct kmeta_entry *e,
			    struct check_ctx *c)
{
	const unsigned char *p = kmeta_bytes_at(t->img, e->site - LEA_RIP_LEN, LEA_RIP_LEN);

	if (!check_site_is_code(c, e->site, "instruction after a WARN's lea") ||
	    !check_insn_boundary(c, e->site, "instruction after a WARN's lea"))
		return;
	if (!p || (p[0] & 0xfb) != 0x48 || p[1] != 0x8d || (p[2] & 0xc7) != 0x05 ||
	    kmeta_is_insn_boundary(t->img, e->site - LEA_RIP_LEN) != 1) {
		check_report(c, e->site, "a WARN with arguments, not after lea disp32(%%rip),%%reg");
		return;
	}
	if (e->site + (int32_t)get_u32(p + 3) != e->addr)
		check_report(c, e->site, "the lea before it points to 0x%llx, not to its entry",
			     (unsigned long long)(e->site + (int32_t)get_u32(p + 3)));
}

static void bug_table_check(struct kmeta_table *t, const struct kmeta_entry *e,
			    struct check_ctx *c)
{
	const unsigned char *p;

	if (e->val[BUG_FLAGS] & BUGFLAG_ARGS) {
		check_warn_args(t, e, c);
		return;
	}
	if (!check_site_is_code(c, e->site, "ud2") || !check_insn_boundary(c, e->site, "ud2"))
		return;
	p = kmeta_bytes_at(t->img, e->site, 2);
	if (!p || p[0] != 0x0f || p[1] != 0x0b) {
		check_report(c, e->site, "expected ud2 (0f 0b)");
		return;
	}
	if ((e->val[BUG_FLAGS] & BUGFLAG_WARNING) &&
	    kmeta_find_func_containing(t->img, e->site + 2) ==
	    kmeta_find_func_containing(t->img, e->site))
		check_insn_boundary(c, e->site + 2, "instruction after a WARN's ud2");
	if (!kmeta_bytes_at(t->img, e->val[BUG_FILE], 1))
		check_report(c, e->site, "file name pointer outside the image");
}

const struct table_desc bug_table_table = {
	.name = "bug_table",
	.start_sym = "__start___bug_table",
	.stop_sym = "__stop___bug_table",
	.sec_name = "__bug_table",
	.btf_struct = "bug_entry",
	.layouts = bug_table_layouts,
	.nr_layouts = ARRAY_SIZE(bug_table_layouts),
	.format = bug_table_format,
	.check = bug_table_check,
	/*
	 * a WARN resumes after its ud2; one with arguments has no trap at its site, which
	 * stays right after its lea
	 */
	.rewrite = { TR_MAY_RESUME, "flags", BUGFLAG_WARNING, BUGFLAG_ARGS, BUGFLAG_ARGS },
};
