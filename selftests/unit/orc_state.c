// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kmeta_orc_state_near() (kmeta/tables/orc.c), the ORC lookup that
 * starts from the place of its last answer: on sorted ips with repeated addresses and
 * gaps, it must give kmeta_orc_state()'s entry for every address, whether the
 * addresses come in order byte by byte (verify's walk over old code), in runs that
 * jump back and forth (new code through the map of a reordered function), or at
 * random; before the first ip, past the last, and in an empty table.  TAP output.
 */
#include <stdint.h>
#include <stdlib.h>

#include "../../common/util.h"
#include "../../kmeta/kmeta.h"
#include "tap.h"

#define BASE 0xffffffff81000000ULL

struct orc {
	uint64_t *ips;
	unsigned char *entries;
	size_t nr;
};

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* nr ips from BASE, 0 to 15 bytes apart (0: a repeated ip), each entry its index */
static struct orc make_orc(size_t nr, uint64_t *s)
{
	struct orc t = { xcalloc(nr + 1, sizeof(uint64_t)), xcalloc(nr + 1, KMETA_ORC_SIZE), nr };
	uint64_t ip = BASE;

	for (size_t k = 0; k < nr; k++) {
		t.ips[k] = ip;
		put_u32(t.entries + k * KMETA_ORC_SIZE, (uint32_t)k);
		ip += rnd(s) % 16;
	}
	return t;
}

static uint64_t span_end(const struct orc *t)
{
	return t->nr ? t->ips[t->nr - 1] + 32 : BASE + 32;
}

/* Does the near lookup give the plain lookup's entry for addr, from where it is? */
static bool agrees(const struct orc *t, uint64_t addr, size_t *past)
{
	return kmeta_orc_state_near(t->ips, t->entries, t->nr, addr, past) ==
	       kmeta_orc_state(t->ips, t->entries, t->nr, addr);
}

/* Every byte from below the first ip to past the last, in order */
static bool in_order(const struct orc *t)
{
	size_t past = 0;
	bool same = true;

	for (uint64_t a = BASE - 8; a < span_end(t) && same; a++)
		same = agrees(t, a, &past);
	return same;
}

/* Runs of 1 to 64 bytes in order, each starting anywhere: a reordered function */
static bool in_runs(const struct orc *t, uint64_t *s)
{
	uint64_t width = span_end(t) - BASE + 16;
	size_t past = 0;
	bool same = true;

	for (int run = 0; run < 20000 && same; run++) {
		uint64_t a = BASE - 8 + rnd(s) % width, len = 1 + rnd(s) % 64;

		for (uint64_t k = 0; k < len && same; k++)
			same = agrees(t, a + k, &past);
	}
	return same;
}

/* Addresses at random, extremes included */
static bool at_random(const struct orc *t, uint64_t *s)
{
	uint64_t width = span_end(t) - BASE + 16;
	size_t past = 0;
	bool same = agrees(t, 0, &past) && agrees(t, UINT64_MAX, &past) && agrees(t, 0, &past);

	for (int k = 0; k < 100000 && same; k++)
		same = agrees(t, BASE - 8 + rnd(s) % width, &past);
	return same;
}

int main(void)
{
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	size_t sizes[] = { 0, 1, 2, 50000 };

	for (size_t i = 0; i < ARRAY_SIZE(sizes); i++) {
		struct orc t = make_orc(sizes[i], &s);

		ok(in_order(&t), "%zu entries: every byte in order", sizes[i]);
		ok(in_runs(&t, &s), "%zu entries: runs in order, each from anywhere", sizes[i]);
		ok(at_random(&t, &s), "%zu entries: addresses at random", sizes[i]);
		free(t.ips);
		free(t.entries);
	}
	return tap_done();
}
