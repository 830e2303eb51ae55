/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers of kmeta and kbolt: allocation that exits on out-of-memory, one
 * array-growth helper, and the one message convention ("FILE: error: TOOL: ...").
 */
#ifndef KMETA_UTIL_H
#define KMETA_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Out of memory: fn(size) is called, and must not return (report, clean up, exit).
 * Until a program sets one, the library reports and aborts.
 */
void kmeta_set_oom_handler(void (*fn)(size_t size));
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Grow *arr (of *cap elements of elem_size) so that it holds at least need elements.
 * The one array-growth helper: doubles, so appends are amortised O(1).
 */
void grow_array(void **arr, size_t *cap, size_t need, size_t elem_size);
#define GROW(arr, cap, need) grow_array((void **)&(arr), &(cap), (need), sizeof(*(arr)))

/* Messages: "FILE: error: TOOL: text".  The tool name is set once by main(). */
extern const char *msg_tool;
extern _Atomic unsigned int nr_warnings;	/* kbolt warns from two threads */
extern bool msg_json;		/* errors as JSON objects on stdout (-j) */
extern bool msg_quiet_warnings;

void pr_err(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pr_warn(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pr_info(const char *file, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Little-endian loads from possibly unaligned bytes. */
static inline uint16_t get_u16(const unsigned char *p) { return p[0] | p[1] << 8; }
static inline uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t get_u64(const unsigned char *p)
{
	return get_u32(p) | (uint64_t)get_u32(p + 4) << 32;
}
static inline void put_u32(unsigned char *p, uint32_t v)
{
	p[0] = v; p[1] = v >> 8; p[2] = v >> 16; p[3] = v >> 24;
}
static inline void put_u64(unsigned char *p, uint64_t v)
{
	put_u32(p, v); put_u32(p + 4, v >> 32);
}

/* 64-byte cache lines: the filters in front of big bitmaps keep a bit per line */
#define CACHE_LINE_SHIFT 6

/* Bit k of a bitmap of bytes */
static inline void bitmap_set(unsigned char *bits, uint64_t k)
{
	bits[k >> 3] |= 1 << (k & 7);
}

static inline bool bitmap_test(const unsigned char *bits, uint64_t k)
{
	return bits[k >> 3] & (1 << (k & 7));
}

/*
 * Sort nr records of size bytes by the uint64_t at byte key_off of each, stably: equal
 * keys keep their order.  A radix sort, 16 bits a pass (passes where every key has
 * the same digit are skipped): for the big arrays of addresses, where qsort()'s
 * comparisons through a function pointer cost most.
 */
void sort_by_u64_key(void *base, size_t nr, size_t size, size_t key_off);

/*
 * Binary searches in nr records of size bytes sorted by the uint64_t at byte key_off
 * (as sort_by_u64_key() leaves them; size 8 and key_off 0 for a plain array): the
 * index of the first record whose key is not below key (lower_bound_u64), or is
 * above it (upper_bound_u64); nr if there is none.  Inline: the verifier asks for
 * every instruction it walks.
 */
static inline size_t bound_u64(const void *base, size_t nr, size_t size, size_t key_off,
			       uint64_t key, bool past_equal)
{
	const unsigned char *rec = base;
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, rec + mid * size + key_off, sizeof(k));
		if (k < key || (past_equal && k == key))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static inline size_t lower_bound_u64(const void *base, size_t nr, size_t size,
				     size_t key_off, uint64_t key)
{
	return bound_u64(base, nr, size, key_off, key, false);
}

static inline size_t upper_bound_u64(const void *base, size_t nr, size_t size,
				     size_t key_off, uint64_t key)
{
	return bound_u64(base, nr, size, key_off, key, true);
}

bool glob_match(const char *pattern, const char *s);

/*
 * *slot, made by make(arg) at the first call and kept: lookups an image builds when
 * first asked, which kbolt's threads may ask for at once.  make runs once, under a lock.
 */
void *get_once(void **slot, void *(*make)(void *arg), void *arg);

/*
 * The command arg names, by its full name or a unique prefix (bpftool's cmd_select): table
 * holds nr entries of size bytes, each starting with its name (const char *).  Its index,
 * or -1 after reporting an unknown or ambiguous command.
 */
long find_cmd_by_prefix(const char *arg, const void *table, size_t nr, size_t size);

/* qsort() that takes an empty array as NULL (qsort's pointer must not be NULL) */
void sort_array(void *base, size_t nmemb, size_t size, int (*cmp)(const void *, const void *));
/* bsearch that takes an empty array's NULL base, which bsearch itself may not be given */
void *search_array(const void *key, const void *base, size_t nmemb, size_t size,
		   int (*cmp)(const void *, const void *));

#endif
