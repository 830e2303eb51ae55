// SPDX-License-Identifier: GPL-2.0
/*
 * .kcfi_traps (Clang kCFI): s32 pointers to the ud2 of each kCFI check before an
 * indirect call or jump.  Absent from GCC builds such as Debian's.  Clang emits
 *
 *	movl	$-<hash>, %r10d		41 ba imm32
 *	addl	-<pos>(%reg), %r10d	4x 03 modrm disp8
 *	je	1f			74 02
 *	ud2				0f 0b		<- the entry
 *   1:	call	<the indirect call>	(a retpoline site with retpolines)
 *
 * and the kernel reads the whole as one piece: the trap handler decodes the mov and the
 * add at the ud2 - 12 and - 6 (decode_cfi_insn(), arch/x86/kernel/cfi.c), and with
 * cfi=warn resumes after the ud2, at the call; FineIBT finds the check at the call's
 * retpoline site - 14 and rewrites the 14 bytes (cfi_rewrite_callers(),
 * arch/x86/kernel/alternative.c).  So the check and its call are a unit (TR_PATCHED_UNIT,
 * kcfi_traps_unit()): kbolt moves them as one piece, the je's target with them.
 */
#include <string.h>

#include "../internal.h"
#include "../table.h"

DEFINE_SITE_LIST_LAYOUT(kcfi_traps_layouts);

enum { KCFI_CHECK_LEN = 12 };	/* mov, add, je before the ud2 */

/* Is the check before the ud2 at site Clang's, and the instruction after it a branch? */
static bool kcfi_check_at(struct kmeta_image *img, uint64_t site, struct kmeta_insn *after)
{
	const unsigned char *p = site >= KCFI_CHECK_LEN ?
				 kmeta_bytes_at(img, site - KCFI_CHECK_LEN, KCFI_CHECK_LEN + 2) :
				 NULL;

	if (!p || p[0] != 0x41 || p[1] != 0xba || (p[6] & 0xf0) != 0x40 || p[7] != 0x03 ||
	    p[10] != 0x74 || p[11] != 0x02 || p[12] != 0x0f || p[13] != 0x0b)
		return false;
	return !kmeta_insn_decode(img, site + 2, after) &&
	       (after->kind == KI_CALL || after->kind == KI_ICALL || after->kind == KI_JMP ||
		after->kind == KI_IJMP);
}

static bool kcfi_traps_unit(struct kmeta_table *t, const struct kmeta_entry *e,
			    struct kmeta_range *r)
{
	struct kmeta_insn after;

	if (!kcfi_check_at(t->img, e->site, &after))
		return false;
	*r = (struct kmeta_range){ e->site - KCFI_CHECK_LEN, e->site + 2 + after.len };
	return true;
}

static void kcfi_traps_check(struct kmeta_table *t, const struct kmeta_entry *e,
			     struct check_ctx *c)
{
	const unsigned char *p;
	struct kmeta_insn after;

	if (!check_site_is_code(c, e->site, "kCFI trap") ||
	    !check_insn_boundary(c, e->site, "kCFI trap"))
		return;
	p = kmeta_bytes_at(t->img, e->site, 2);
	if (!p || p[0] != 0x0f || p[1] != 0x0b)
		check_report(c, e->site, "expected ud2 (0f 0b)");
	else if (!kcfi_check_at(t->img, e->site, &after))
		check_report(c, e->site, "expected the kCFI check before the ud2 (movl $-hash,%%r10d; "
			     "addl -N(%%reg),%%r10d; je +2) and an indirect call or jmp after it");
}

const struct table_desc kcfi_traps_table = {
	.name = "kcfi_traps",
	.start_sym = "__start___kcfi_traps",
	.stop_sym = "__stop___kcfi_traps",
	.sec_name = "__kcfi_traps",	/* the section's name in vmlinux and modules */
	.layouts = kcfi_traps_layouts,
	.nr_layouts = 1,
	.rewrite = { TR_PATCHED_UNIT },
	.check = kcfi_traps_check,
	.unit = kcfi_traps_unit,
};
