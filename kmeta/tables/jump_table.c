// SPDX-License-Identifier: GPL-2.0
/*
 * __jump_table: struct jump_entry (include/linux/jump_label.h, relative form): s32 code,
 * s32 target, s64 key, all relative to their own field; key bit 0 is the branch
 * polarity; bit 1 is, in the file, objtool's mark of a site it turned into a nop
 * (5778 of 5980 entries of Debian's 6.1) and, at run time, the init-section flag.  The site is a 2- or 5-byte nop or a
 * jmp to target (arch_jump_entry_size() BUGs otherwise), and every toggle compares the
 * current bytes with exactly those (arch/x86/kernel/jump_label.c).  Sorted by key at
 * boot, not in the file.
 */
#include <string.h>

#include "../table.h"

enum { JUMP_CODE, JUMP_TARGET, JUMP_KEY };

static const struct layout jump_table_layouts[] = {
	{ .name = "relative", .entry_size = 16, .fields = {
		{ "code", NULL, 0, FK_PCREL32, FR_SITE, 0 },
		{ "target", NULL, 4, FK_PCREL32, FR_CODE, 0 },
		{ "key", NULL, 8, FK_PCREL64, FR_DATA, 2 },
	} },
};

static const unsigned char nop2[] = { 0x66, 0x90 };
static const unsigned char nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/*
 * Length of the jump-label site at site (2 or 5), or 0 if it is neither a nop nor a jmp
 * of those sizes; *to is the jmp's destination, 0 for a nop.
 */
static unsigned int site_len(struct kmeta_image *img, uint64_t site, uint64_t *to)
{
	const unsigned char *p = kmeta_bytes_at(img, site, 2);
	const unsigned char *p5 = kmeta_bytes_at(img, site, 5);

	*to = 0;
	if (!p)
		return 0;
	if (p[0] == 0xeb) {
		*to = site + 2 + (int8_t)p[1];
		return 2;
	}
	if (!memcmp(p, nop2, 2))
		return 2;
	if (p5 && p5[0] == 0xe9) {
		*to = site + 5 + (int32_t)get_u32(p5 + 1);
		return 5;
	}
	return p5 && !memcmp(p5, nop5, 5) ? 5 : 0;
}

static void jump_table_check(struct kmeta_table *t, const struct kmeta_entry *e,
			     struct check_ctx *c)
{
	uint64_t target = e->val[JUMP_TARGET], to;
	int64_t rel8 = (int64_t)(target - (e->site + 2));
	unsigned int len;

	if (!check_site_is_code(c, e->site, "jump label") ||
	    !check_insn_boundary(c, e->site, "jump label"))
		return;
	len = site_len(t->img, e->site, &to);
	if (!len)
		check_report(c, e->site, "not a 2- or 5-byte nop or jmp (the kernel BUGs on it)");
	else if (to && to != target)
		check_report(c, e->site, "jmp goes to 0x%llx, not to the target 0x%llx",
			     (unsigned long long)to, (unsigned long long)target);
	else if (len == 2 && rel8 != (int8_t)rel8)
		check_report(c, e->site, "2-byte site but the target is beyond rel8 reach");
	if (!kmeta_is_text_addr(t->img, target))
		check_report(c, e->site, "target is not in code");
	/* a module's key may be vmlinux's: an undefined symbol */
	if (!kmeta_find_sec_containing(t->img, e->val[JUMP_KEY]) &&
	    !kmeta_find_sym_containing(t->img, e->val[JUMP_KEY]))
		check_report(c, e->site, "key is outside the image");
}

const struct table_desc jump_table_table = {
	.name = "jump_table",
	.start_sym = "__start___jump_table",
	.stop_sym = "__stop___jump_table",
	.sec_name = "__jump_table",
	.btf_struct = "jump_entry",
	.layouts = jump_table_layouts,
	.nr_layouts = ARRAY_SIZE(jump_table_layouts),
	.check = jump_table_check,
	.rewrite = { TR_JUMP_LABEL | TR_PATCHED_POINT, "target" },
};
