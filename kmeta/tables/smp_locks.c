// SPDX-License-Identifier: GPL-2.0
/*
 * .smp_locks: s32 pointers to the lock prefixes (0xf0) of LOCK_PREFIX instructions, which
 * the kernel turns into ds prefixes on a uniprocessor (alternatives_smp_unlock() in
 * arch/x86/kernel/alternative.c).  The section is padded to a page with zero slots; the
 * kernel skips entries outside [_text, _etext), so .init.text sites are harmless.
 */
#include <string.h>

#include "../table.h"

DEFINE_SITE_LIST_LAYOUT(smp_locks_layouts);

/*
 * The lock prefix, possibly after other legacy prefixes: gas puts an operand-size 66
 * before the "lock;" of LOCK_PREFIX (cmpxchgw).  The kernel only patches an f0 right at
 * the site and leaves such entries alone, which is harmless.  NULL if there is none.
 */
static const unsigned char *lock_prefix_off(struct kmeta_image *img, uint64_t site)
{
	static const unsigned char legacy[] = {
		0x66, 0x67, 0x2e, 0x3e, 0x26, 0x64, 0x65, 0x36, 0xf2, 0xf3,
	};
	const unsigned char *p = kmeta_bytes_at(img, site, 4);

	for (unsigned int i = 0; p && i < 4; i++) {
		if (p[i] == 0xf0)
			return p + i;
		if (!memchr(legacy, p[i], sizeof(legacy)))
			return NULL;
	}
	return NULL;
}

static void smp_locks_check(struct kmeta_table *t, const struct kmeta_entry *e,
			    struct check_ctx *c)
{

	if (!check_site_is_code(c, e->site, "lock prefix") ||
	    !check_insn_boundary(c, e->site, "lock prefix"))
		return;
	if (!lock_prefix_off(t->img, e->site))
		check_report(c, e->site, "no lock prefix (f0) among the instruction's prefixes");
}

const struct table_desc smp_locks_table = {
	.name = "smp_locks",
	.start_sym = "__smp_locks",
	.stop_sym = "__smp_locks_end",
	.sec_name = ".smp_locks",
	.layouts = smp_locks_layouts,
	.nr_layouts = 1,
	.check = smp_locks_check,
};
