// SPDX-License-Identifier: GPL-2.0
/*
 * Old code that the walk left out of the map but that stayed where it was, in a
 * rewritten function that kept its layout (every instruction the walk mapped is at its
 * old offset: only its branches into moved code were re-targeted), mapped to itself
 * after the walk: what asks where an old address went (the values of a kernel without
 * relocations, the ORC and the DWARF checks, the heatmap) then finds it, and the
 * coverage takes it for code that did not move.  Two kinds, each kept only if nothing
 * could tell it from the old code:
 *
 * Alignment padding that nothing runs.  GCC 14 aligns the head of a small loop on up
 * to 64 bytes, though the kernel asks for -falign-loops=1: nops before the loop's
 * head, and where the code before them ends in a jmp, a ret or a BUG's ud2, nothing
 * reaches them.  kbolt optimize drops them from a function it lays out anew (their
 * room becomes int3 fill), but a function it keeps, whose branches into moved code are
 * only re-targeted, keeps them, and the padding claimed after it (the values of a
 * kernel without relocations may point into either).  A run of old nops is kept when
 * the walk reached none of its bytes, in the old code or in the new; the new bytes are
 * the old ones; and the code after it is the same place in both images (equiv(); at
 * the end of the claimed padding, the next function's entry, which never moves): were
 * anything the proof does not know to run the nops, it would go on as the old code
 * did.  A nop that execution reaches (falling into a loop's head) is no padding: the
 * walk compares it like any other instruction.
 *
 * The plain jmps the walk followed (follow(): it compares code modulo them, so it maps
 * none) that are the same bytes at the same place in the new code, reached there too,
 * and lead to the same place: a value of a kernel without relocations may hold the
 * address of one, or of a byte inside it.
 *
 * Runs after the walk and verify_branches(), before the checks that read the map.
 */
#include <string.h>

#include "internal.h"

/* Are the old bytes of in the new ones too, at the same address? */
static bool same_bytes(struct verifier *v, const struct kmeta_insn *in)
{
	const unsigned char *p = kmeta_bytes_at(v->a, in->addr, in->len);
	const unsigned char *q = kmeta_bytes_at(v->b, in->addr, in->len);

	return p && q && !memcmp(p, q, in->len);
}

/* Is the old nop at off, in, unreached on both sides and the same bytes in the new image? */
static bool is_untouched_nop(struct verifier *v, const struct vfunc *f, uint64_t off,
			     const struct kmeta_insn *in)
{
	if (!(in->flags & KIF_NOP) || off + in->len > f->sym->size || !same_bytes(v, in))
		return false;
	for (unsigned int k = 0; k < in->len; k++)
		if (f->olen[off + k] || f->cover[off + k])
			return false;
	return true;
}

static void map_in_place(struct vfunc *f, uint64_t off, unsigned int len)
{
	f->map[off] = off;
	f->olen[off] = len;
	for (unsigned int k = 0; k < len; k++)
		f->cover[off + k] = k ? 2 : 1;
}

/* Map the nops of [start, end) to themselves */
static void keep_run(struct verifier *v, struct vfunc *f, uint64_t start, uint64_t end)
{
	struct kmeta_insn in;

	for (uint64_t off = start; off < end; off += in.len) {
		kmeta_insn_decode(v->a, f->sym->addr + off, &in);	/* decoded before */
		map_in_place(f, off, in.len);
	}
}

/*
 * The run of untouched nops from off, the first of them in; kept if the code after it
 * stayed.  Where the sweep goes on.
 */
static uint64_t padding_run(struct verifier *v, struct vfunc *f, uint64_t off,
			    struct kmeta_insn *in)
{
	uint64_t end = off;

	do
		end += in->len;
	while (end < f->sym->size && !kmeta_insn_decode(v->a, f->sym->addr + end, in) &&
	       is_untouched_nop(v, f, end, in));
	if (equiv(v, f->sym->addr + end, f->sym->addr + end))
		keep_run(v, f, off, end);
	return end;
}

/* A jmp the walk followed at off, olen[off] long: mapped to itself if it stayed */
static void keep_followed_jmp(struct verifier *v, struct vfunc *f, uint64_t off)
{
	uint64_t at = f->sym->addr + off;
	struct kmeta_insn in;

	if (f->map[off] != UNMAPPED || f->cover[off] != 1 || kmeta_insn_decode(v->a, at, &in) ||
	    in.kind != KI_JMP || in.len != f->olen[off] || !same_bytes(v, &in))
		return;
	if (equiv(v, at, at))
		map_in_place(f, off, in.len);
}

/*
 * Did every instruction the walk mapped stay at its offset?  Only then is what it left
 * out what it was too: in a function laid out anew, a jmp of the same bytes at the same
 * place may be another one, added after another block, whose line rows are that block's
 */
static bool kept_layout(const struct vfunc *f)
{
	for (uint64_t off = 0; off < f->sym->size; off++)
		if (f->map[off] != UNMAPPED && f->map[off] != off)
			return false;
	return true;
}

/*
 * One function's old code and the padding claimed after it, in the order a linear
 * sweep decodes them (check_old_reached())
 */
static void find_in_place(struct verifier *v, struct vfunc *f)
{
	struct kmeta_insn in;

	if (!kept_layout(f))
		return;
	for (uint64_t off = 0; off < f->sym->size;) {
		if (f->olen[off]) {
			keep_followed_jmp(v, f, off);
			off += f->olen[off];
		} else if (kmeta_insn_decode(v->a, f->sym->addr + off, &in)) {
			return;		/* check_old_reached() says so */
		} else if (is_untouched_nop(v, f, off, &in)) {
			off = padding_run(v, f, off, &in);
		} else {
			off += in.len;
		}
	}
}

/*
 * In one thread (60 ms on Debian's 6.12): at the end of a function's claimed padding,
 * equiv() reads the next function's map, which its own sweep may be writing
 */
void verify_in_place(struct verifier *v)
{
	for (size_t k = 0; k < v->nr_f; k++)
		find_in_place(v, &v->f[k]);
}
