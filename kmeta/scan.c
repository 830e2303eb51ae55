// SPDX-License-Identifier: GPL-2.0
/*
 * Which code could point into a set of address ranges, without decoding it all.  Every
 * byte of every executable section is read as the possible start of a relative
 * branch (e8, e9, eb, 70-7f, e0-e3, 0f 80-8f) or as a %rip-relative ModRM byte (mod 00,
 * r/m 101: disp32 follows, and 0, 1, 2 or 4 immediate bytes may follow it); a target
 * inside a range (not at its start) is reported.  Real references are among the
 * reports, with some false ones that decoding the code around them dismisses: so a
 * caller decodes only the code that may matter.
 */
#include <errno.h>
#include <stdlib.h>

#include "internal.h"

#define SCAN_RELEASE (1 << 20)

struct range_bits {
	uint64_t base, size;
	unsigned char *bits;
};

static void set_inside(struct range_bits *rb, const struct kmeta_range *r)
{
	for (uint64_t a = r->start + 1; a < r->end; a++)
		rb->bits[(a - rb->base) >> 3] |= 1 << ((a - rb->base) & 7);
}

static bool is_inside(const struct range_bits *rb, uint64_t a)
{
	uint64_t off = a - rb->base;

	return off < rb->size && (rb->bits[off >> 3] & (1 << (off & 7)));
}

static int32_t s32(const unsigned char *p)
{
	return (int32_t)get_u32(p);
}

/*
 * Which first bytes can start a reference: about one in five.  The scan reads every
 * byte of the kernel's code, twice per kbolt run; skipping the others in a tight loop
 * makes it several times faster.
 */
static void first_bytes(bool may_start[256])
{
	for (unsigned int b = 0; b < 256; b++)
		may_start[b] = (b & 0xf0) == 0x70 || b == 0xeb || (b >= 0xe0 && b <= 0xe3) ||
			       b == 0xe8 || b == 0xe9 || b == 0x0f || (b & 0xc7) == 0x05;
}

/* The references that may start at byte k of sec */
static void scan_at(const struct range_bits *rb, const struct kmeta_sec *sec, uint64_t k,
		    kmeta_scan_fn fn, void *ctx)
{
	const unsigned char *p = sec->data + k;
	uint64_t left = sec->size - k, at = sec->addr + k;
	static const unsigned int imm[] = { 0, 1, 2, 4 };

	if (left >= 2 && ((p[0] & 0xf0) == 0x70 || p[0] == 0xeb || (p[0] >= 0xe0 && p[0] <= 0xe3)) &&
	    is_inside(rb, at + 2 + (int8_t)p[1]))
		fn(ctx, at, at + 2 + (int8_t)p[1]);
	if (left >= 5 && (p[0] == 0xe8 || p[0] == 0xe9) && is_inside(rb, at + 5 + s32(p + 1)))
		fn(ctx, at, at + 5 + s32(p + 1));
	if (left >= 6 && p[0] == 0x0f && (p[1] & 0xf0) == 0x80 && is_inside(rb, at + 6 + s32(p + 2)))
		fn(ctx, at, at + 6 + s32(p + 2));
	if (left < 5 || (p[0] & 0xc7) != 0x05)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(imm); i++) {
		uint64_t to = at + 5 + imm[i] + s32(p + 1);

		if (is_inside(rb, to))
			fn(ctx, at, to);
	}
}

int kmeta_scan_rel_refs(struct kmeta_image *img, const struct kmeta_range *r, size_t nr,
			kmeta_scan_fn fn, void *ctx)
{
	struct range_bits rb;
	bool may_start[256];

	if (!nr)
		return 0;
	rb.base = r[0].start;
	rb.size = r[nr - 1].end - rb.base;
	for (size_t i = 1; i < nr; i++)
		if (r[i].start < r[i - 1].end)
			return -EINVAL;		/* not sorted, or overlapping */
	if (rb.size > (1ULL << 33))
		return -E2BIG;
	rb.bits = xcalloc(rb.size / 8 + 1, 1);
	for (size_t i = 0; i < nr; i++)
		set_inside(&rb, &r[i]);
	first_bytes(may_start);
	for (size_t i = 1; i < img->nr_secs; i++) {
		const struct kmeta_sec *sec = &img->secs[i];

		if (!(sec->flags & SHF_EXECINSTR) || !sec->data || !(sec->flags & SHF_ALLOC))
			continue;
		for (uint64_t k = 0; k < sec->size; k++) {
			if (may_start[sec->data[k]])
				scan_at(&rb, sec, k, fn, ctx);
			/* read once: give back each megabyte behind (callers read some again) */
			if (k % SCAN_RELEASE == SCAN_RELEASE - 1 && k >= SCAN_RELEASE)
				kmeta_release_bytes(img, sec->data + k + 1 - 2 * SCAN_RELEASE,
						    SCAN_RELEASE);
		}
	}
	free(rb.bits);
	return 0;
}
