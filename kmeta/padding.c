// SPDX-License-Identifier: GPL-2.0
/*
 * The alignment padding after functions.  The compiler aligns each function (16 bytes
 * on x86-64) and the assembler fills the gap after the previous one with nops, or
 * int3; nothing in it runs and no symbol names it.  A tool that rewrites a function in
 * place may use those bytes as room, so kmeta_claim_padding() lets a function's size
 * cover them: only when asked (kbolt does), never for kmeta's own commands, which show
 * the ELF sizes.
 *
 * The gap is claimed only when it is all nops and int3s (recognized from their bytes,
 * in the encodings compilers and assemblers pad with), lies in the function's section,
 * holds no symbol, and is shorter than PADDING_MAX.  Whether anything refers into it
 * is for the caller to find out, as for any byte of the function.
 *
 * A kernel built with function padding (CONFIG_CALL_PADDING: call-depth tracking,
 * FineIBT, kCFI) owns the FUNC_PADDING bytes before every function: call thunks,
 * FineIBT and new kCFI hashes may be written there at boot (arch/x86/kernel/callthunks.c,
 * alternative.c).  GCC names them (__pfx_ symbols); Clang with kCFI does not for a
 * function that is not address-taken, whose 11 padding nops (16 less the 5-byte
 * preamble it has not) follow the previous function's alignment int3s: those of the
 * int3s that lie within 16 bytes of the next function are the kernel's too: a layout
 * grown into them crashed at boot (the lab's Clang 6.12 with ThinLTO and kCFI, in
 * do_exit).  So in an image with __pfx_ or __cfi_ symbols the claim ends FUNC_PADDING
 * bytes before the next function.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "internal.h"

#define PADDING_MAX 64	/* gaps of a function's alignment, not of a section's */
#define FUNC_PADDING 16	/* CONFIG_FUNCTION_PADDING_BYTES: before each function */

/* Length of the padding instruction at p (at most n bytes), 0 if it is not one */
static unsigned int nop_len(const unsigned char *p, unsigned int n)
{
	unsigned int i = 0, modrm_len;

	if (p[0] == 0x90 || p[0] == 0xcc)
		return 1;
	while (i < n && i < 14 && (p[i] == 0x66 || p[i] == 0x2e || p[i] == 0x3e))
		i++;
	if (i < n && p[i] == 0x90 && i == 1 && p[0] == 0x66)
		return 2;	/* xchg %ax,%ax */
	if (i + 2 >= n || p[i] != 0x0f || p[i + 1] != 0x1f || (p[i + 2] & 0x38))
		return 0;	/* not 0f 1f /0, "nop r/m" */
	switch (p[i + 2] & 0xc7) {	/* mod and rm */
	case 0x00: modrm_len = 1; break;	/* (%rax) */
	case 0x40: modrm_len = 2; break;	/* disp8(%rax) */
	case 0x44: modrm_len = 3; break;	/* disp8(%rax,%rax,1) */
	case 0x80: modrm_len = 5; break;	/* disp32(%rax) */
	case 0x84: modrm_len = 6; break;	/* disp32(%rax,%rax,1) */
	default: return 0;
	}
	return i + 2 + modrm_len <= n ? i + 2 + modrm_len : 0;
}

static bool is_padding(const unsigned char *p, unsigned int n)
{
	for (unsigned int k = 0, len; k < n; k += len) {
		len = nop_len(p + k, n - k);
		if (!len)
			return false;
	}
	return true;
}

bool kmeta_is_padding_sym(const char *name)
{
	return !strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6);
}

/* Does the kernel own the bytes before its functions (function padding)? */
static bool has_func_padding(const struct kmeta_image *img)
{
	for (size_t i = 1; i < img->nr_syms; i++)
		if (kmeta_is_padding_sym(img->syms[i].name))
			return true;
	return false;
}

/* The start of the first function after end in sec (not its padding), or the section's end */
static uint64_t next_func_start(struct kmeta_image *img, const struct kmeta_sec *sec,
				uint64_t end)
{
	for (size_t i = sym_first_from(img, end); i < img->nr_sorted; i++) {
		const struct kmeta_sym *s = img->sorted[i];

		if (s->addr >= sec->addr + sec->size)
			break;
		if (s->type == STT_FUNC && s->addr >= end && !kmeta_is_padding_sym(s->name))
			return s->addr;
	}
	return sec->addr + sec->size;
}

/*
 * Bytes of padding after f, 0 if the gap is not padding as described above; reserved:
 * the kernel owns the FUNC_PADDING bytes before each function
 */
static uint64_t padding_after(struct kmeta_image *img, const struct kmeta_sym *f, bool reserved)
{
	uint64_t end = f->addr + f->size, next, limit;
	struct kmeta_sec *sec = kmeta_find_sec_containing(img, f->addr);
	size_t i = sym_first_from(img, end);
	const unsigned char *p;

	if (!sec || !(sec->flags & SHF_EXECINSTR) || end >= sec->addr + sec->size)
		return 0;
	next = i < img->nr_sorted ? img->sorted[i]->addr : sec->addr + sec->size;
	if (next > sec->addr + sec->size)
		next = sec->addr + sec->size;
	if (reserved) {
		limit = next_func_start(img, sec, end);
		limit = limit >= end + FUNC_PADDING ? limit - FUNC_PADDING : end;
		if (next > limit)
			next = limit;
	}
	if (next <= end || next - end >= PADDING_MAX)
		return 0;
	p = kmeta_bytes_at(img, end, next - end);
	return p && is_padding(p, (unsigned int)(next - end)) ? next - end : 0;
}

size_t kmeta_claim_padding(struct kmeta_image *img)
{
	size_t nr = 0;

	bool reserved = has_func_padding(img);

	for (size_t i = 0; i < img->nr_funcs; i++) {
		struct kmeta_sym *f = img->funcs[i];
		uint64_t pad = f->padding ? 0 : padding_after(img, f, reserved);

		if (!pad)
			continue;
		f->size += pad;
		f->padding = (uint32_t)pad;
		nr++;
	}
	img->last_func = NULL;
	return nr;
}

/*
 * like's claimed sizes for img's functions.  A function of img may have grown into
 * its padding, and its ELF size with it (kbolt writes that size): anything from like's
 * ELF size to its claimed size is the same function.
 */
int kmeta_claim_padding_like(struct kmeta_image *img, const struct kmeta_image *like)
{
	if (img->nr_funcs != like->nr_funcs)
		return -EINVAL;
	for (size_t i = 0; i < img->nr_funcs; i++) {
		const struct kmeta_sym *f = img->funcs[i];
		const struct kmeta_sym *g = like->funcs[i];

		if (f->addr != g->addr || f->padding || f->size > g->size ||
		    f->size < kmeta_elf_size(g))
			return -EINVAL;
	}
	for (size_t i = 0; i < img->nr_funcs; i++) {
		img->funcs[i]->padding = (uint32_t)(like->funcs[i]->size - img->funcs[i]->size);
		img->funcs[i]->size = like->funcs[i]->size;
	}
	img->last_func = NULL;
	return 0;
}
