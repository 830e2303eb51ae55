// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the portable profile's hashes (kbolt/profile/func_hash.c) on
 * selftests/fixtures/hash.S, assembled and linked at test time: one function's code at
 * two addresses, against other data, another callee and another per-CPU offset, hashes
 * equal, block for block; so does its copy with rel32 branches; a changed register,
 * structure offset or instruction changes the function's hash and its block's strict
 * hash and nothing else, and the loose hash only for a changed instruction.  The blocks
 * are where the fixture says.  TAP output.
 */
#include <stdlib.h>
#include <string.h>

#include "../../kbolt/profile/func_hash.h"
#include "fixture.h"

static struct kmeta_image *img;
static struct hash_ctx ctx;

/* The hashes of the function of that name (an empty one, said, if it cannot be had) */
static struct hash_func hash_of(const char *name)
{
	struct kmeta_sym *sym = kmeta_find_sym_by_name(img, name);
	struct hash_func hf = { 0 };

	if (!sym || func_hash_compute(img, &ctx, sym->addr, sym->size, &hf))
		printf("# %s: not found or not decoded\n", name);
	return hf;
}

/* a and b have the same blocks, and hash equal in every block but differ */
static bool same_but(const struct hash_func *a, const struct hash_func *b, int differ,
		     bool loose_differs)
{
	if (a->nr_blocks != b->nr_blocks || !a->nr_blocks) {
		printf("# %u blocks and %u\n", a->nr_blocks, b->nr_blocks);
		return false;
	}
	for (uint32_t k = 0; k < a->nr_blocks; k++) {
		bool d = (int)k == differ;

		if (a->blocks[k].nr_insns != b->blocks[k].nr_insns ||
		    (a->blocks[k].strict != b->blocks[k].strict) != d ||
		    (a->blocks[k].loose != b->blocks[k].loose) != (d && loose_differs)) {
			printf("# block %u: strict %016llx %016llx, loose %016llx %016llx\n", k,
			       (unsigned long long)a->blocks[k].strict,
			       (unsigned long long)b->blocks[k].strict,
			       (unsigned long long)a->blocks[k].loose,
			       (unsigned long long)b->blocks[k].loose);
			return false;
		}
	}
	return (a->hash != b->hash) == (differ >= 0);
}

static void test_blocks(const struct hash_func *a)
{
	static const uint32_t off[] = { 0x0, 0x29, 0x30, 0x37 }, nr[] = { 7, 2, 2, 2 };
	bool good = a->nr_blocks == ARRAY_SIZE(off) && !a->partial;

	for (uint32_t k = 0; good && k < a->nr_blocks; k++)
		good = a->blocks[k].off == off[k] && a->blocks[k].nr_insns == nr[k];
	ok(good, "hash_a: 4 blocks, at +0x0 (7 instructions), +0x29, +0x30 (the jz's target) "
	   "and +0x37 (the jmp's)");
	ok(func_hash_block_at(a, 0x2e) == 1 && func_hash_block_at(a, 0x37) == 3 &&
	   func_hash_block_at(a, 0x3a) == -1, "the block at an offset: +0x2e in bb1, +0x37 "
	   "starts bb3, +0x3a past the code");
}

int main(void)
{
	static const char *const names[] = {
		"hash_a", "hash_b", "hash_far", "hash_reg", "hash_off", "hash_op",
	};
	struct hash_func hf[ARRAY_SIZE(names)];
	struct fixture fx;

	if (fixture_build(&fx, "hash", "_text", "")) {
		ok(0, "the hash fixture assembled and linked");
		return tap_done();
	}
	img = kmeta_open(fx.path);
	if (!img) {
		ok(0, "kmeta opens the hash fixture");
		fixture_remove(&fx);
		return tap_done();
	}
	func_hash_init(img, &ctx);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		hf[i] = hash_of(names[i]);
	test_blocks(&hf[0]);
	ok(same_but(&hf[0], &hf[1], -1, false), "one function at two addresses, against other "
	   "data, callee and per-CPU offset: equal hashes, block for block");
	ok(same_but(&hf[0], &hf[2], -1, false), "... and with its branches as rel32: equal");
	ok(same_but(&hf[0], &hf[3], 2, false), "another register in bb2: the function's hash "
	   "and bb2's strict hash differ, its loose hash and the other blocks' do not");
	ok(same_but(&hf[0], &hf[4], 2, false), "another structure offset in bb2: the same");
	ok(same_but(&hf[0], &hf[5], 2, true), "add for sub in bb2: its loose hash differs too");
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		func_hash_free(&hf[i]);
	kmeta_close(img);
	fixture_remove(&fx);
	return tap_done();
}
