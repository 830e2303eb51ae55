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
#include "table.h"

#define SCAN_PART (1 << 20)	/* bytes: a part of the scan, given back after it */

/*
 * A bit for each byte from the first range's start to the last one's end, and one for
 * each 64-byte line of that span: the bytes' bitmap of a whole kernel is megabytes,
 * read at random, while the lines' fits in a core's cache and says no to most reads
 * (the ranges are a small part of the code).
 */
struct range_bits {
	uint64_t base, size;
	unsigned char *bits, *lines;
};

static void set_inside(struct range_bits *rb, const struct kmeta_range *r)
{
	for (uint64_t a = r->start + 1; a < r->end; a++) {
		bitmap_set(rb->bits, a - rb->base);
		bitmap_set(rb->lines, (a - rb->base) >> CACHE_LINE_SHIFT);
	}
}

static bool is_inside(const struct range_bits *rb, uint64_t a)
{
	uint64_t off = a - rb->base;

	return off < rb->size && bitmap_test(rb->lines, off >> CACHE_LINE_SHIFT) &&
	       bitmap_test(rb->bits, off);
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

/* The bitmap of the insides of sorted, disjoint ranges r; 0 or a negative errno */
static int range_bits_init(struct range_bits *rb, const struct kmeta_range *r, size_t nr)
{
	rb->base = r[0].start;
	rb->size = r[nr - 1].end - rb->base;
	for (size_t i = 1; i < nr; i++)
		if (r[i].start < r[i - 1].end)
			return -EINVAL;		/* not sorted, or overlapping */
	if (rb->size > (1ULL << 33))
		return -E2BIG;
	rb->bits = xcalloc(rb->size / 8 + 1, 1);
	rb->lines = xcalloc((rb->size >> CACHE_LINE_SHIFT) / 8 + 1, 1);
	for (size_t i = 0; i < nr; i++)
		set_inside(rb, &r[i]);
	return 0;
}

static void range_bits_free(struct range_bits *rb)
{
	free(rb->bits);
	free(rb->lines);
}

/* One part of the scan: SCAN_PART bytes of a section, and the hits found there */
struct scan_part {
	const struct kmeta_sec *sec;
	uint64_t from, to;		/* offsets in sec */
	struct kmeta_range *hits;	/* at (start) -> target (end) */
	size_t nr_hits, cap;
};

struct kmeta_rel_scan {
	struct kmeta_image *img;
	struct range_bits rb;
	bool may_start[256];
	struct scan_part *parts;
	size_t nr_parts;
};

int kmeta_rel_scan_new(struct kmeta_image *img, const struct kmeta_range *r, size_t nr,
		       struct kmeta_rel_scan **out)
{
	struct kmeta_rel_scan *s = xcalloc(1, sizeof(*s));
	size_t cap = 0;
	int err = nr ? range_bits_init(&s->rb, r, nr) : 0;

	if (err) {
		free(s);
		return err;
	}
	s->img = img;
	first_bytes(s->may_start);
	for (size_t i = 1; nr && i < img->nr_secs; i++) {	/* no ranges, no hits */
		const struct kmeta_sec *sec = &img->secs[i];

		if (!(sec->flags & SHF_EXECINSTR) || !sec->data || !(sec->flags & SHF_ALLOC))
			continue;
		for (uint64_t from = 0; from < sec->size; from += SCAN_PART) {
			GROW(s->parts, cap, s->nr_parts + 1);
			s->parts[s->nr_parts++] = (struct scan_part){
				.sec = sec, .from = from,
				.to = from + SCAN_PART < sec->size ? from + SCAN_PART : sec->size };
		}
	}
	*out = s;
	return 0;
}

size_t kmeta_rel_scan_nr_parts(const struct kmeta_rel_scan *s)
{
	return s->nr_parts;
}

static void record_hit(void *ctx, uint64_t at, uint64_t target)
{
	struct scan_part *p = ctx;

	GROW(p->hits, p->cap, p->nr_hits + 1);
	p->hits[p->nr_hits++] = (struct kmeta_range){ at, target };
}

void kmeta_rel_scan_part(struct kmeta_rel_scan *s, size_t k)
{
	struct scan_part *p = &s->parts[k];
	const unsigned char *data = p->sec->data;

	for (uint64_t off = p->from; off < p->to; off++)
		if (s->may_start[data[off]])
			scan_at(&s->rb, p->sec, off, record_hit, p);
	/* read once: give its pages back (callers read some again) */
	kmeta_release_bytes(s->img, data + p->from, p->to - p->from);
}

void kmeta_rel_scan_report(const struct kmeta_rel_scan *s, kmeta_scan_fn fn, void *ctx)
{
	for (size_t k = 0; k < s->nr_parts; k++)
		for (size_t i = 0; i < s->parts[k].nr_hits; i++)
			fn(ctx, s->parts[k].hits[i].start, s->parts[k].hits[i].end);
}

void kmeta_rel_scan_free(struct kmeta_rel_scan *s)
{
	if (!s)
		return;
	for (size_t k = 0; k < s->nr_parts; k++)
		free(s->parts[k].hits);
	free(s->parts);
	range_bits_free(&s->rb);
	free(s);
}

/*
 * kallsyms (scripts/kallsyms.c): symbol addresses, names and their indexes, nothing
 * else: no symbol is inside a function kbolt rewrites, and kallsyms_offsets, whose
 * per-cpu entries are negative, reads as thousands of offsets into code.  From
 * kallsyms_num_syms to the end of kallsyms_seqs_of_names, 3 bytes a symbol.
 */
static bool kallsyms_area(struct kmeta_image *img, struct kmeta_range *r)
{
	struct kmeta_sym *num = kmeta_find_sym_by_name(img, "kallsyms_num_syms");
	struct kmeta_sym *seqs = kmeta_find_sym_by_name(img, "kallsyms_seqs_of_names");
	const unsigned char *p = num ? kmeta_bytes_at(img, num->addr, 4) : NULL;

	if (!p || !seqs || seqs->addr < num->addr)
		return false;
	*r = (struct kmeta_range){ num->addr, seqs->addr + 3ULL * get_u32(p) };
	return true;
}

/*
 * The slots of every table kmeta knows (their entries are read field by field) and
 * kallsyms, sorted
 */
static int table_areas(struct kmeta_image *img, struct kmeta_range **out, size_t *nr)
{
	struct kmeta_range *v = NULL;
	size_t cap = 0;

	*nr = 0;
	for (unsigned int d = 0; d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *t = kmeta_table_get(img, kmeta_table_descs[d]);

		if (!t) {
			free(v);
			return -EINVAL;
		}
		for (unsigned int k = 0; t->present && k < t->nr_ranges; k++) {
			GROW(v, cap, *nr + 1);
			v[(*nr)++] = (struct kmeta_range){ t->ranges[k].addr,
							   t->ranges[k].addr + t->ranges[k].size };
		}
	}
	GROW(v, cap, *nr + 1);
	*nr += kallsyms_area(img, &v[*nr]);
	if (*nr)
		sort_array(v, *nr, sizeof(*v), kmeta_cmp_range);
	*out = v;
	return 0;
}

/*
 * Code is read as code: an executable section.  But a writable one that holds no
 * function is data whatever its flag (7.x's .data is "WAX", and the kernel maps it
 * non-executable), read by data's rules: aligned values, offsets from the field.
 * (.altinstr_replacement and .altinstr_aux hold code without symbols, read-only.)
 */
static bool is_data(struct kmeta_image *img, const struct kmeta_sec *sec)
{
	long i;

	if (!(sec->flags & SHF_EXECINSTR))
		return true;
	if (!(sec->flags & SHF_WRITE))
		return false;
	i = kmeta_func_at_or_before(img, sec->addr + sec->size - 1);
	return i < 0 || img->funcs[i]->addr < sec->addr;
}

struct abs_scan {
	struct kmeta_image *img;
	struct range_bits rb;
	kmeta_scan_fn fn;
	void *ctx;
	struct kmeta_range *alt;	/* the alternatives' code, each decoded whole */
	size_t nr_alt;
};

/*
 * Is [at, at + size) exactly the immediate or the displacement of the instruction
 * at start, len bytes?  True where capstone cannot say: an instruction it does not
 * know, or one whose operand it places in neither field (a moffs address).
 */
static bool is_operand_field(struct kmeta_image *img, uint64_t start, unsigned int len,
			     uint64_t at, unsigned int size)
{
	struct kmeta_insn *insn;
	struct kmeta_insn_fields *f;
	uint64_t bad, off = at - start;
	size_t nr;
	bool yes = true;

	if (kmeta_insn_decode_range_fields(img, start, start + len, &insn, &f, &nr, &bad))
		return true;
	if (nr == 1 && !bad && f[0].id && (f[0].imm_size || f[0].disp_size))
		yes = (off == f[0].imm_off && size == f[0].imm_size) ||
		      (off == f[0].disp_off && size == f[0].disp_size);
	free(insn);
	free(f);
	return yes;
}

/*
 * In code a value is an operand: the immediate or the displacement of one
 * instruction, as capstone finds them, in a function that decodes ("48 81" ending a
 * window would look like 0xffffffff8148xxxx, "c7 80 b4 81", a ModRM and the start of
 * the immediate, like 0xffffffff81b480c7).  A window that crosses the end of that
 * function is none (its last instruction ends there: "90 e8 6b 81", a __pfx_ nop and
 * the call after it).  Anywhere else it may be.
 */
static bool may_be_operand(struct kmeta_image *img, uint64_t at, unsigned int size)
{
	struct kmeta_sym *func = kmeta_find_func_containing(img, at);
	const struct kmeta_func_insns *fi = func ? kmeta_func_decode(img, func) : NULL;
	uint32_t off, lo = 0, hi, end;

	if (!fi || (fi->bad_addr && at + size > fi->bad_addr))
		return true;
	if (at + size > fi->end)
		return false;
	off = at - fi->start;
	hi = fi->nr;
	while (lo < hi) {	/* the first instruction starting after off */
		uint32_t mid = lo + (hi - lo) / 2;

		if (fi->off[mid] <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || fi->off[lo - 1] == off)
		return false;	/* an opcode starts there ("e8 49 69 81": a call) */
	end = lo == fi->nr ? (uint32_t)(fi->end - fi->start) : fi->off[lo];
	return off + size <= end &&
	       is_operand_field(img, fi->start + fi->off[lo - 1], end - fi->off[lo - 1], at, size);
}

/*
 * The alternatives' code (a replacement, .altinstr_aux) is decoded whole from its
 * start, as kbolt decodes it: a window there is an operand as in a function.
 */
static bool may_be_alt_operand(struct abs_scan *s, uint64_t at, unsigned int size)
{
	const struct kmeta_range *r = NULL;
	struct kmeta_insn in;
	uint64_t bad;

	for (size_t k = 0; k < s->nr_alt && !r; k++)
		if (at >= s->alt[k].start && at < s->alt[k].end)
			r = &s->alt[k];
	if (!r || insn_containing(s->img, r->start, r->end, at, &in, &bad) ||
	    (bad && at + size > bad))
		return true;
	return at > in.addr && at + size <= in.addr + in.len &&
	       is_operand_field(s->img, in.addr, in.len, at, size);
}

/* Report target if it is inside a range and may be a value at `at`; true if reported */
static bool abs_hit(struct abs_scan *s, bool data, uint64_t at, unsigned int size,
		    uint64_t target)
{
	if (!is_inside(&s->rb, target))
		return false;
	if (!data && (kmeta_is_alt_code(s->img, at) ? !may_be_alt_operand(s, at, size) :
		      !may_be_operand(s->img, at, size)))
		return false;
	s->fn(s->ctx, at, target);
	return true;
}

/*
 * The values that may be addresses at byte k of sec.  8 bytes at any alignment (a
 * pointer, a movabs immediate; packed notes hold unaligned pointers), 4 bytes
 * sign-extended (the kernel code model's imm32 and disp32): in code at any offset
 * inside an instruction, in data 4-byte aligned.  In data also the offsets from the
 * field's own address (PREL32, PC64), aligned.  Every 32-bit and PC-relative
 * relocation of the lab's 6.12 build's data is 4-byte aligned (the compiler and the
 * kernel's table macros align them); unaligned 4-byte windows of ordinary pointers
 * would otherwise read as thousands of addresses in code.  In code the relative
 * references are kmeta_rel_scan_part()'s.
 */
static void scan_values_at(struct abs_scan *s, const struct kmeta_sec *sec, uint64_t k,
			   bool data)
{
	const unsigned char *p = sec->data + k;
	uint64_t left = sec->size - k, at = sec->addr + k, v8 = 0, v4;
	bool seen8 = false;

	if (left >= 8) {
		v8 = get_u64(p);
		seen8 = abs_hit(s, data, at, 8, v8);
		if (data && !(at & 7))
			abs_hit(s, data, at, 8, at + v8);
	}
	if (left < 4)
		return;
	if (data && (at & 3))
		return;
	v4 = (uint64_t)(int64_t)s32(p);
	if (!seen8 || v4 != v8)	/* not the low half of the pointer just reported */
		abs_hit(s, data, at, 4, v4);
	if (data)
		abs_hit(s, data, at, 4, at + v4);
}

int kmeta_scan_abs_refs(struct kmeta_image *img, const struct kmeta_range *r, size_t nr,
			kmeta_scan_fn fn, void *ctx)
{
	struct abs_scan s = { .img = img, .fn = fn, .ctx = ctx };
	struct kmeta_range *areas;
	size_t nr_areas;
	int err;

	if (!nr)
		return 0;
	err = table_areas(img, &areas, &nr_areas);
	if (err)
		return err;
	if (kmeta_alt_code_ranges(img, &s.alt, &s.nr_alt)) {
		free(areas);
		return -EINVAL;
	}
	err = range_bits_init(&s.rb, r, nr);
	for (size_t i = 1; !err && i < img->nr_secs; i++) {
		const struct kmeta_sec *sec = &img->secs[i];
		bool data = is_data(img, sec);
		size_t a = 0;

		if (!sec->data || !(sec->flags & SHF_ALLOC))
			continue;
		for (uint64_t k = 0; k < sec->size; k++) {
			uint64_t at = sec->addr + k;

			while (a < nr_areas && areas[a].end <= at)
				a++;
			if (a < nr_areas && at >= areas[a].start)
				k = areas[a].end - sec->addr - 1;	/* skip the table */
			else
				scan_values_at(&s, sec, k, data);
		}
	}
	if (!err)
		range_bits_free(&s.rb);
	free(s.alt);
	free(areas);
	return err;
}
