// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of sort_by_u64_key() (kmeta/util.c), the radix sort of the symbol and
 * site arrays: the order is qsort()'s on random keys, keys that differ only in their
 * high or low 16 bits, and keys all equal; records with equal keys keep their order.
 * And the binary searches of util.h, lower_bound_u64() and upper_bound_u64(), against
 * a linear scan of the same records, for every key present, absent, below all and
 * above all, the extremes of uint64_t included.  TAP output.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
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

/* The index a linear scan finds: the first key >= key (or > key, if past_equal) */
static size_t scan_bound(const struct rec *r, size_t n, uint64_t key, bool past_equal)
{
	size_t i = 0;

	while (i < n && (r[i].key < key || (past_equal && r[i].key == key)))
		i++;
	return i;
}

/* Does each search agree with the scan on every key near the keys of n sorted records? */
static bool bounds_like_scan(size_t n, uint64_t (*make)(uint64_t *s, size_t i))
{
	struct rec *a = xcalloc(n + 1, sizeof(*a));
	uint64_t s = 0x2545f4914f6cdd1dULL;
	bool same = true;

	for (size_t i = 0; i < n; i++)
		a[i] = (struct rec){ .key = make(&s, i), .seq = (uint32_t)i };
	sort_by_u64_key(a, n, sizeof(*a), offsetof(struct rec, key));
	for (size_t i = 0; i <= n + 1 && same; i++) {
		uint64_t probe[] = { 0, UINT64_MAX, i < n ? a[i].key : 7,
				     i < n ? a[i].key - 1 : 1, i < n ? a[i].key + 1 : 8 };

		for (size_t k = 0; k < ARRAY_SIZE(probe); k++) {
			size_t lo = lower_bound_u64(a, n, sizeof(*a), offsetof(struct rec, key),
						    probe[k]);
			size_t up = upper_bound_u64(a, n, sizeof(*a), offsetof(struct rec, key),
						    probe[k]);

			same &= lo == scan_bound(a, n, probe[k], false) &&
				up == scan_bound(a, n, probe[k], true);
		}
	}
	free(a);
	return same;
}

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
	ok(bounds_like_scan(0, any), "bounds: no records");
	ok(bounds_like_scan(1, equal), "bounds: one record");
	ok(bounds_like_scan(2000, any), "bounds: random 64-bit keys, the extremes probed");
	ok(bounds_like_scan(2000, few), "bounds: five keys, each many times");
	ok(bounds_like_scan(300, equal), "bounds: all keys equal");
	ok(bounds_like_scan(2000, text), "bounds: kernel text addresses");
	return tap_done();
}
