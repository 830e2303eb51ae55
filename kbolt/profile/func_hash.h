/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A function as the portable profile sees it (func_hash.c): its basic blocks, found
 * from its own code alone, each with two hashes of its instructions that leave every
 * address out, and a hash of the whole function.  Two builds of one function, linked
 * at different addresses, against data at different addresses, hash equal.
 */
#ifndef KBOLT_FUNC_HASH_H
#define KBOLT_FUNC_HASH_H

#include <stdbool.h>
#include <stdint.h>

#include "../../kmeta/kmeta.h"

struct hash_block {
	uint32_t off;		/* of its first instruction, from the function's start */
	uint32_t first;		/* index of its first instruction in hash_func.insn_off */
	uint32_t nr_insns;
	/*
	 * strict: the instructions' bytes, addresses left out, branches by kind and
	 * condition; loose: their mnemonics only (capstone's ids), which a changed
	 * register, offset or constant leaves equal
	 */
	uint64_t strict, loose;
};

struct hash_func {
	uint64_t hash;		/* the blocks' strict hashes and the branches between them */
	uint32_t size;		/* bytes decoded: the function's ELF size, or up to bad bytes */
	uint32_t nr_blocks, nr_insns;
	struct hash_block *blocks;
	uint32_t *insn_off;	/* offset of every instruction, ascending */
	bool partial;		/* decoding stopped at bytes that are no instruction */
};

/*
 * Where addresses lie in an image: a 4- or 8-byte field whose value falls in
 * [lo, hi), the span of the loaded sections in the kernel's half of the address
 * space, is taken for an address and left out of the hashes
 */
struct hash_ctx {
	uint64_t lo, hi;
};

/* 64-bit FNV-1a: h (FUNC_HASH_BASIS to begin) continued with n bytes at p */
#define FUNC_HASH_BASIS 1469598103934665603ULL
uint64_t func_hash_bytes(uint64_t h, const void *p, size_t n);
/* qsort() order of struct kmeta_sym pointers: by address, then where they lie */
int func_hash_cmp_sym(const void *a, const void *b);

void func_hash_init(struct kmeta_image *img, struct hash_ctx *ctx);
/*
 * Decode [addr, addr + size) of img, split it into blocks, hash it into *hf (freed by
 * func_hash_free()).  0, or -EINVAL if not even its first instruction decodes (an
 * empty *hf).  Threads: as kmeta_insn_decode_range().
 */
int func_hash_compute(struct kmeta_image *img, const struct hash_ctx *ctx, uint64_t addr,
		      uint64_t size, struct hash_func *hf);
void func_hash_free(struct hash_func *hf);
/* The block holding offset off, -1 if off is past the decoded bytes */
long func_hash_block_at(const struct hash_func *hf, uint32_t off);

#endif
