// SPDX-License-Identifier: GPL-2.0
/*
 * The bytes of the translation table .kbolt.bat (bat.h), little-endian, numbers as
 * LEB128 (unsigned, or signed for a target's distance from its function):
 *
 *   "KBAT" u32 version (1) u8 build-id length, build-id bytes (hex text of the input's)
 *   uleb nr_funcs, then per function, by address:
 *     u64 addr, uleb size, uleb nr_entries, then per entry:
 *       u8 flags, [uleb new_off - previous new_off, unless BAT_REMOVED], uleb old_off,
 *       u8 old_len, [sleb target - addr, if BAT_JCC]
 *
 * The same table gives the same bytes: the output stays a function of its inputs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "bat.h"

#define BAT_MAGIC "KBAT"
#define BAT_VERSION 1

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void put_bytes(struct buf *b, const void *p, size_t n)
{
	GROW(b->p, b->cap, b->len + n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void put_uleb(struct buf *b, uint64_t v)
{
	do {
		unsigned char c = v & 0x7f;

		v >>= 7;
		if (v)
			c |= 0x80;
		put_bytes(b, &c, 1);
	} while (v);
}

static void put_sleb(struct buf *b, int64_t v)
{
	put_uleb(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));	/* zigzag */
}

void bat_encode(const struct bat *t, unsigned char **out, size_t *size)
{
	struct buf b = { 0 };
	unsigned char v[8], idlen = strlen(t->build_id);

	put_bytes(&b, BAT_MAGIC, 4);
	put_u32(v, BAT_VERSION);
	put_bytes(&b, v, 4);
	put_bytes(&b, &idlen, 1);
	put_bytes(&b, t->build_id, idlen);
	put_uleb(&b, t->nr);
	for (size_t i = 0; i < t->nr; i++) {
		const struct bat_func *f = &t->funcs[i];
		uint32_t prev = 0;

		put_u64(v, f->addr);
		put_bytes(&b, v, 8);
		put_uleb(&b, f->size);
		put_uleb(&b, f->nr);
		for (uint32_t k = 0; k < f->nr; k++) {
			const struct bat_entry *e = &f->entries[k];

			put_bytes(&b, &e->flags, 1);
			if (!(e->flags & BAT_REMOVED)) {
				put_uleb(&b, e->new_off - prev);
				prev = e->new_off;
			}
			put_uleb(&b, e->old_off);
			put_bytes(&b, &e->old_len, 1);
			if (e->flags & BAT_JCC)
				put_sleb(&b, (int64_t)(e->target - f->addr));
		}
	}
	*out = b.p;
	*size = b.len;
}

struct reader {
	const unsigned char *p, *end;
	bool bad;
};

static const unsigned char *get_bytes(struct reader *r, size_t n)
{
	const unsigned char *p = r->p;

	if (r->bad || (size_t)(r->end - r->p) < n) {
		r->bad = true;
		return NULL;
	}
	r->p += n;
	return p;
}

static uint64_t get_uleb(struct reader *r)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; shift < 64; shift += 7) {
		const unsigned char *c = get_bytes(r, 1);

		if (!c)
			return 0;
		v |= (uint64_t)(*c & 0x7f) << shift;
		if (!(*c & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

static uint8_t get_u8(struct reader *r)
{
	const unsigned char *c = get_bytes(r, 1);

	return c ? *c : 0;
}

static void get_entry(struct reader *r, const struct bat_func *f, struct bat_entry *e,
		      uint32_t *prev)
{
	uint64_t z;

	e->flags = get_u8(r);
	if (!(e->flags & BAT_REMOVED))
		e->new_off = *prev = *prev + get_uleb(r);
	else
		e->new_off = UINT32_MAX;
	e->old_off = get_uleb(r);
	e->old_len = get_u8(r);
	if (e->flags & BAT_JCC) {
		z = get_uleb(r);
		e->target = f->addr + (uint64_t)((int64_t)(z >> 1) ^ -(int64_t)(z & 1));
	}
	if (e->old_off >= f->size || (!(e->flags & BAT_REMOVED) && e->new_off >= f->size))
		r->bad = true;
}

int bat_decode(const unsigned char *p, size_t size, struct bat *t)
{
	struct reader r = { p, p + size, false };
	const unsigned char *magic = get_bytes(&r, 4), *ver = get_bytes(&r, 4), *id;
	uint8_t idlen;
	uint64_t nr;

	memset(t, 0, sizeof(*t));
	if (!magic || !ver || memcmp(magic, BAT_MAGIC, 4) || get_u32(ver) != BAT_VERSION)
		return -EINVAL;
	idlen = get_u8(&r);
	id = get_bytes(&r, idlen);
	if (id && idlen < sizeof(t->build_id))
		memcpy(t->build_id, id, idlen);
	nr = get_uleb(&r);
	for (uint64_t i = 0; i < nr && !r.bad; i++) {
		const unsigned char *a = get_bytes(&r, 8);
		struct bat_func f = { .addr = a ? get_u64(a) : 0 };
		uint32_t prev = 0;
		uint64_t n;

		f.size = get_uleb(&r);
		n = get_uleb(&r);
		if (r.bad || n > (size_t)(r.end - r.p))	/* at least a byte an entry */
			break;
		f.nr = n;
		f.entries = xcalloc(n + 1, sizeof(*f.entries));
		for (uint32_t k = 0; k < f.nr && !r.bad; k++)
			get_entry(&r, &f, &f.entries[k], &prev);
		GROW(t->funcs, t->cap, t->nr + 1);
		t->funcs[t->nr++] = f;
	}
	if (r.bad || r.p != r.end || t->nr != nr) {
		bat_free(t);
		return -EINVAL;
	}
	return 0;
}

void bat_free(struct bat *t)
{
	for (size_t i = 0; i < t->nr; i++)
		free(t->funcs[i].entries);
	free(t->funcs);
	memset(t, 0, sizeof(*t));
}
