// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of sort_by_u64_key() (kmeta/util.c), the radix sort of the symbol and
 * site arrays: the order is qsort()'s on random keys, keys that differ only in their
 * high or low 16 bits, and keys all equal; records with equal keys keep their order.
 * TAP output.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../kmeta/util.h"
#include "tap.h"

struct rec {
	uint32_t pad;
	uint64_t key;
	uint32_t seq;	/* position before the sort */
} __attribute__((packed));

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* Sort n records with keys from make(); true if the order is by key, then by seq */
static bool sorts_like_qsort(size_t n, uint64_t (*make)(uint64_t *s, size_t i))
{
	struct rec *a = xcalloc(n + 1, sizeof(*a)), *b = xcalloc(n + 1, sizeof(*b));
	uint64_t s = 0x9e3779b97f4a7c15ULL;
	bool same;

	for (size_t i = 0; i < n; i++)
		a[i] = b[i] = (struct rec){ .key = make(&s, i), .seq = (uint32_t)i };
	sort_by_u64_key(a, n, sizeof(*a), offsetof(struct rec, key));
	qsort(b, n, sizeof(*b), cmp_rec);	/* seq makes it the stable order */
	same = !memcmp(a, b, n * sizeof(*a));
	free(a);
	free(b);
	return same;
}

static uint64_t any(uint64_t *s, size_t i) { (void)i; return rnd(s); }
static uint64_t text(uint64_t *s, size_t i) { (void)i; return 0xffffffff81000000ULL | (rnd(s) & 0xffffff); }
static uint64_t few(uint64_t *s, size_t i) { (void)i; return rnd(s) % 5 << 48; }
static uint64_t low(uint64_t *s, size_t i) { (void)i; return rnd(s) & 0xff; }
static uint64_t equal(uint64_t *s, size_t i) { (void)s; (void)i; return 42; }
static uint64_t down(uint64_t *s, size_t i) { (void)s; return ~(uint64_t)i; }

int main(void)
{
	ok(sorts_like_qsort(0, any), "no records");
	ok(sorts_like_qsort(1, any), "one record");
	ok(sorts_like_qsort(100000, any), "random 64-bit keys");
	ok(sorts_like_qsort(100000, text), "kernel text addresses (the top 32 bits equal)");
	ok(sorts_like_qsort(100000, few), "five keys differing in bits 48-63: stable");
	ok(sorts_like_qsort(100000, low), "keys below 256: stable");
	ok(sorts_like_qsort(1000, equal), "all keys equal: the order is kept");
	ok(sorts_like_qsort(100000, down), "descending keys");
	return tap_done();
}
