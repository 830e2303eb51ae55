// SPDX-License-Identifier: GPL-2.0
/*
 * The blocks and hashes of one function, for profiles that survive a rebuild
 * (portable.c, portable_match.c; Documentation/profile-format.rst, "The portable
 * profile").  The blocks come from the function's own code only: its entry, the
 * targets of its direct jumps inside it, and the instruction after each jump, return
 * and trap.  Not the optimizer's blocks (pass/cfg.c), whose leaders also come from the
 * kernel's tables and other code: those differ between two builds of one function,
 * these do not.  A call does not end a block, as in BOLT.
 *
 * Each instruction contributes to its block's strict hash its bytes with every field
 * that holds an address zeroed: the displacement of a direct branch (the branch counts
 * by its kind and condition alone, so that a jcc rel8 and a jcc rel32 hash equal), of
 * a %rip operand, the displacement of a %gs (per-CPU) operand, and any displacement or
 * immediate whose value lies in the image's loaded span; and to its loose hash its
 * mnemonic only.  As BOLT's stale matching (bolt/lib/Profile/StaleProfileMatching.cpp)
 * has an InstrHash with operands and an OpcodeHash without; kbolt's hashes are its
 * own, 64-bit FNV-1a.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../kmeta/kernel_addr.h"
#include "func_hash.h"

#define FNV_PRIME 1099511628211ULL

uint64_t func_hash_bytes(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

static uint64_t fnv_u64(uint64_t h, uint64_t v)
{
	unsigned char b[8];

	put_u64(b, v);
	return func_hash_bytes(h, b, sizeof(b));
}

int func_hash_cmp_sym(const void *a, const void *b)
{
	const struct kmeta_sym *x = *(struct kmeta_sym *const *)a, *y = *(struct kmeta_sym *const *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x < y ? -1 : x > y;
}

void func_hash_init(struct kmeta_image *img, struct hash_ctx *ctx)
{
	ctx->lo = UINT64_MAX;
	ctx->hi = 0;
	for (size_t i = 0; i < img->nr_secs; i++) {
		const struct kmeta_sec *s = &img->secs[i];

		if (!(s->flags & SHF_ALLOC) || s->addr < KERNEL_HALF_START || !s->size)
			continue;
		if (s->addr < ctx->lo)
			ctx->lo = s->addr;
		if (s->addr + s->size > ctx->hi)
			ctx->hi = s->addr + s->size;
	}
}

static bool is_address(const struct hash_ctx *ctx, uint64_t v)
{
	return v >= ctx->lo && v < ctx->hi;
}

/* A displacement or immediate of size bytes at p: its value as the CPU extends it */
static uint64_t field_value(const unsigned char *p, unsigned int size)
{
	switch (size) {
	case 1: return (uint64_t)(int64_t)(int8_t)p[0];
	case 2: return (uint64_t)(int64_t)(int16_t)get_u16(p);
	case 4: return (uint64_t)(int64_t)(int32_t)get_u32(p);
	case 8: return get_u64(p);
	default: return 0;
	}
}

/* Zero the size bytes at off of b[len] */
static void mask(unsigned char *b, unsigned int len, unsigned int off, unsigned int size)
{
	if (off && size && off + size <= len)
		memset(b + off, 0, size);
}

/*
 * The instruction's contribution to the strict hash: a direct branch by its kind and
 * condition, anything else by its bytes with the fields that hold addresses zeroed
 */
static uint64_t strict_token(uint64_t h, const struct hash_ctx *ctx, const unsigned char *p,
			     const struct kmeta_insn *in, const struct kmeta_insn_fields *fl)
{
	unsigned char b[16];
	int cond;

	if ((in->kind == KI_JCC || in->kind == KI_JMP || in->kind == KI_CALL) && in->rel_size) {
		cond = kmeta_jcc_cond(p, in->len);
		/* loop, jrcxz: their opcode byte, right before the rel8 */
		if (in->kind == KI_JCC && cond < 0)
			cond = 0x100 | p[in->rel_off - 1];
		b[0] = 0xf0 | in->kind;
		put_u32(b + 1, in->kind == KI_JCC ? (uint32_t)cond : 0);
		return func_hash_bytes(h, b, 5);
	}
	memcpy(b, p, in->len);
	if (in->flags & KIF_RIP)
		mask(b, in->len, in->rel_off, in->rel_size);
	if (fl->disp_size >= 4 &&
	    (fl->gs || is_address(ctx, field_value(p + fl->disp_off, fl->disp_size))))
		mask(b, in->len, fl->disp_off, fl->disp_size);
	if (fl->imm_size >= 4 && is_address(ctx, field_value(p + fl->imm_off, fl->imm_size)))
		mask(b, in->len, fl->imm_off, fl->imm_size);
	h = func_hash_bytes(h, &in->len, 1);
	return func_hash_bytes(h, b, in->len);
}

/* The loose hash: the mnemonic (and a jcc's condition, which capstone's id holds) */
static uint64_t loose_token(uint64_t h, const struct hash_ctx *ctx, const unsigned char *p,
			    const struct kmeta_insn *in, const struct kmeta_insn_fields *fl)
{
	unsigned char b[4];

	if (!fl->id)	/* an instruction capstone does not know: its bytes */
		return strict_token(h, ctx, p, in, fl);
	put_u32(b, fl->id);
	return func_hash_bytes(h, b, sizeof(b));
}

/* Which offsets start a block: the entry, jump targets inside, and after jumps */
static unsigned char *find_leaders(const struct kmeta_insn *insns, size_t nr, uint64_t addr,
				   uint32_t size)
{
	unsigned char *lead = xcalloc(size + 1, 1);

	lead[0] = 1;
	for (size_t i = 0; i < nr; i++) {
		const struct kmeta_insn *in = &insns[i];
		uint64_t next = in->addr + in->len - addr;

		if ((in->kind == KI_JCC || in->kind == KI_JMP) && in->target >= addr &&
		    in->target < addr + size)
			lead[in->target - addr] = 1;
		if (in->kind == KI_JCC || kmeta_insn_ends_flow(in))
			lead[next] = 1;
	}
	return lead;
}

/* The function's hash: its blocks' and where its jumps inside it go */
static uint64_t hash_whole(const struct hash_func *hf, const struct kmeta_insn *insns,
			   uint64_t addr)
{
	uint64_t h = fnv_u64(FUNC_HASH_BASIS, hf->nr_blocks);

	h = fnv_u64(h, hf->partial);
	for (uint32_t b = 0; b < hf->nr_blocks; b++) {
		const struct hash_block *bb = &hf->blocks[b];

		h = fnv_u64(fnv_u64(h, bb->strict), bb->nr_insns);
	}
	for (uint32_t i = 0; i < hf->nr_insns; i++) {
		const struct kmeta_insn *in = &insns[i];
		long t;

		if (in->kind != KI_JCC && in->kind != KI_JMP)
			continue;
		t = in->target >= addr ? func_hash_block_at(hf, in->target - addr) : -1;
		/* the target's block and its offset in it: the shape of the graph */
		h = fnv_u64(fnv_u64(h, t), t < 0 ? 0 : in->target - addr - hf->blocks[t].off);
	}
	return h;
}

/* A 64-bit finish, so that every bit of a hash depends on every input byte */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static void hash_blocks(struct hash_func *hf, const struct hash_ctx *ctx,
			const unsigned char *code, const struct kmeta_insn *insns,
			const struct kmeta_insn_fields *fields, const unsigned char *lead)
{
	size_t cap = 0;

	for (uint32_t i = 0; i < hf->nr_insns; i++) {
		uint32_t off = hf->insn_off[i];
		struct hash_block *bb;

		if (lead[off] || !hf->nr_blocks) {
			GROW(hf->blocks, cap, hf->nr_blocks + 1);
			hf->blocks[hf->nr_blocks++] = (struct hash_block){ off, i, 0, FUNC_HASH_BASIS,
									     FUNC_HASH_BASIS };
		}
		bb = &hf->blocks[hf->nr_blocks - 1];
		bb->nr_insns++;
		bb->strict = strict_token(bb->strict, ctx, code + off, &insns[i], &fields[i]);
		bb->loose = loose_token(bb->loose, ctx, code + off, &insns[i], &fields[i]);
	}
	for (uint32_t b = 0; b < hf->nr_blocks; b++) {
		hf->blocks[b].strict = mix(hf->blocks[b].strict);
		hf->blocks[b].loose = mix(hf->blocks[b].loose);
	}
}

int func_hash_compute(struct kmeta_image *img, const struct hash_ctx *ctx, uint64_t addr,
		      uint64_t size, struct hash_func *hf)
{
	const unsigned char *code = kmeta_bytes_at(img, addr, size);
	struct kmeta_insn_fields *fields = NULL;
	struct kmeta_insn *insns = NULL;
	unsigned char *lead;
	uint64_t bad = 0;
	size_t nr = 0;

	memset(hf, 0, sizeof(*hf));
	if (!code || size > UINT32_MAX ||
	    kmeta_insn_decode_range_fields(img, addr, addr + size, &insns, &fields, &nr, &bad) ||
	    !nr) {
		free(insns);
		free(fields);
		return -EINVAL;
	}
	hf->partial = bad != 0;
	hf->size = bad ? bad - addr : size;
	hf->nr_insns = nr;
	hf->insn_off = xmalloc(nr * sizeof(*hf->insn_off));
	for (size_t i = 0; i < nr; i++)
		hf->insn_off[i] = insns[i].addr - addr;
	lead = find_leaders(insns, nr, addr, hf->size);
	hash_blocks(hf, ctx, code, insns, fields, lead);
	hf->hash = mix(hash_whole(hf, insns, addr));
	free(lead);
	free(insns);
	free(fields);
	return 0;
}

void func_hash_free(struct hash_func *hf)
{
	free(hf->blocks);
	free(hf->insn_off);
	memset(hf, 0, sizeof(*hf));
}

long func_hash_block_at(const struct hash_func *hf, uint32_t off)
{
	size_t lo = 0, hi = hf->nr_blocks;

	if (off >= hf->size || !hf->nr_blocks)
		return -1;
	while (lo < hi) {	/* the last block starting at or before off */
		size_t mid = lo + (hi - lo) / 2;

		if (hf->blocks[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (long)lo - 1 : -1;
}
