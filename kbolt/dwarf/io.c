// SPDX-License-Identifier: GPL-2.0
/*
 * What the DWARF rewriters share (io.h).  LEB128 is DWARF 5 section 7.6; libdw
 * reads it but has no writer, and its readers are not part of its public interface.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../lib/output.h"
#include "io.h"

void dwarf_put_byte(struct dwarf_buf *b, unsigned char c)
{
	GROW(b->p, b->cap, b->nr + 1);
	b->p[b->nr++] = c;
}

void dwarf_put_bytes(struct dwarf_buf *b, const void *p, size_t size)
{
	if (!size)
		return;		/* p may be NULL */
	GROW(b->p, b->cap, b->nr + size);
	memcpy(b->p + b->nr, p, size);
	b->nr += size;
}

void dwarf_put_uleb_sized(unsigned char *p, uint64_t v, unsigned int size)
{
	for (unsigned int k = 0; k < size; k++, v >>= 7)
		p[k] = (v & 0x7f) | (k + 1 < size ? 0x80 : 0);
}

void dwarf_put_uleb(struct dwarf_buf *b, uint64_t v)
{
	do {
		unsigned char c = v & 0x7f;

		v >>= 7;
		dwarf_put_byte(b, c | (v ? 0x80 : 0));
	} while (v);
}

void dwarf_put_sleb(struct dwarf_buf *b, int64_t v)
{
	for (;;) {
		unsigned char c = v & 0x7f;

		v >>= 7;
		if ((!v && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
			dwarf_put_byte(b, c);
			return;
		}
		dwarf_put_byte(b, c | 0x80);
	}
}

uint64_t dwarf_get_uleb(struct dwarf_reader *r)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (r->p < r->end) {
		unsigned char c = *r->p++;

		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

int64_t dwarf_get_sleb(struct dwarf_reader *r)
{
	int64_t v = 0;
	unsigned int shift = 0;

	while (r->p < r->end) {
		unsigned char c = *r->p++;

		if (shift < 64)
			v |= (int64_t)((uint64_t)(c & 0x7f) << shift);
		shift += 7;
		if (!(c & 0x80)) {
			if (shift < 64 && (c & 0x40))
				v |= -((int64_t)1 << shift);
			return v;
		}
	}
	r->bad = true;
	return 0;
}

uint64_t dwarf_get_fixed(struct dwarf_reader *r, unsigned int size)
{
	uint64_t v = 0;

	if ((size_t)(r->end - r->p) < size) {
		r->bad = true;
		r->p = r->end;
		return 0;
	}
	for (unsigned int k = 0; k < size; k++)
		v |= (uint64_t)r->p[k] << (8 * k);
	r->p += size;
	return v;
}

/* The relocation section of sec, NULL if none */
struct kmeta_sec *dwarf_rela_of(struct kmeta_image *img, const struct kmeta_sec *sec)
{
	for (size_t i = 1; i < img->nr_secs; i++) {
		GElf_Shdr sh;

		if (img->secs[i].type == SHT_RELA && gelf_getshdr(img->secs[i].scn, &sh) &&
		    sh.sh_info == sec->idx)
			return &img->secs[i];
	}
	return NULL;
}

unsigned char *dwarf_file_bytes(struct kmeta_image *img, const struct kmeta_sec *sec,
				uint64_t *size)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(sec->scn, &sh) || sh.sh_type == SHT_NOBITS ||
	    sh.sh_offset + sh.sh_size > img->map_size)
		return NULL;
	*size = sh.sh_size;
	return img->map + sh.sh_offset;
}

void dwarf_put_fixed(struct dwarf_buf *b, uint64_t v, unsigned int size)
{
	for (unsigned int k = 0; k < size; k++)
		dwarf_put_byte(b, (unsigned char)(v >> (8 * k)));
}

void dwarf_put_offset(unsigned char *p, unsigned int size, uint64_t v)
{
	if (size == 8)
		put_u64(p, v);
	else
		put_u32(p, (uint32_t)v);
}

uint64_t dwarf_get_offset(const unsigned char *p, unsigned int size)
{
	return size == 8 ? get_u64(p) : get_u32(p);
}

uint64_t dwarf_get_initial_length(struct dwarf_reader *r, unsigned int *offset_size)
{
	uint64_t len = dwarf_get_fixed(r, 4);

	*offset_size = 4;
	if (len == 0xffffffff) {	/* 64-bit DWARF */
		*offset_size = 8;
		len = dwarf_get_fixed(r, 8);
	}
	return len;
}

/* One abbreviation, its attributes into ab->attrs; NULL or why not */
static const char *read_abbrev(struct dwarf_abbrevs *ab, struct dwarf_reader *r,
			       struct dwarf_abbrev *a)
{
	a->known = true;
	a->tag = dwarf_get_uleb(r);
	a->children = dwarf_get_fixed(r, 1);
	a->first = ab->nr_attrs;
	for (;;) {
		uint64_t at = dwarf_get_uleb(r), form = dwarf_get_uleb(r);

		if (r->bad)
			return "abbreviations past .debug_abbrev";
		if (!at && !form)
			break;
		if (at > UINT16_MAX || form > UINT16_MAX)
			return "an attribute or form number above 0xffff";
		GROW(ab->attrs, ab->attrs_cap, ab->nr_attrs + 1);
		ab->attrs[ab->nr_attrs] = (struct dwarf_abbrev_attr){ at, form, 0 };
		if (form == 0x21)	/* implicit_const: its value here, none in the DIE */
			ab->attrs[ab->nr_attrs].implicit = dwarf_get_sleb(r);
		ab->nr_attrs++;
	}
	a->nr = ab->nr_attrs - a->first;
	return NULL;
}

const char *dwarf_read_abbrevs(struct dwarf_abbrevs *ab, const unsigned char *abbrev,
			       uint64_t size, uint64_t off)
{
	struct dwarf_reader r = { .p = abbrev + off, .end = abbrev + size };

	if (ab->off == off && ab->nr_codes)
		return NULL;
	ab->off = UINT64_MAX;
	ab->nr_codes = ab->nr_attrs = 0;
	if (off >= size)
		return "abbreviation offset past .debug_abbrev";
	for (;;) {
		uint64_t code = dwarf_get_uleb(&r);
		struct dwarf_abbrev a;
		const char *why;

		if (r.bad)
			return "abbreviations past .debug_abbrev";
		if (!code)
			break;
		if (code > (1 << 20))
			return "an abbreviation code above 2^20";
		why = read_abbrev(ab, &r, &a);
		if (why)
			return why;
		if (code >= ab->nr_codes) {
			GROW(ab->by_code, ab->codes_cap, code + 1);
			memset(ab->by_code + ab->nr_codes, 0,
			       (code + 1 - ab->nr_codes) * sizeof(*ab->by_code));
			ab->nr_codes = code + 1;
		}
		ab->by_code[code] = a;
	}
	ab->off = off;
	return NULL;
}

const struct dwarf_abbrev *dwarf_abbrev_of(const struct dwarf_abbrevs *ab, uint64_t code)
{
	return code < ab->nr_codes && ab->by_code[code].known ? &ab->by_code[code] : NULL;
}

void dwarf_abbrevs_free(struct dwarf_abbrevs *ab)
{
	free(ab->by_code);
	free(ab->attrs);
	*ab = (struct dwarf_abbrevs){ .off = UINT64_MAX };
}

/* The header of the unit at off of .debug_info (DWARF 2-5, section 7.5.1); NULL or why not */
const char *dwarf_read_unit(const unsigned char *info, uint64_t size, uint64_t off,
			    struct dwarf_unit *u)
{
	struct dwarf_reader r = { .p = info + off, .end = info + size };
	uint64_t len;

	memset(u, 0, sizeof(*u));
	u->off = off;
	len = dwarf_get_initial_length(&r, &u->offset_size);
	if (r.bad || len > (uint64_t)(r.end - r.p))
		return "unit length past the section's end";
	u->end = (r.p - info) + len;
	r.end = info + u->end;
	u->version = dwarf_get_fixed(&r, 2);
	if (u->version < 2 || u->version > 5)
		return "unit version kbolt does not know";
	u->type = 1;	/* DW_UT_compile */
	if (u->version >= 5) {
		u->type = dwarf_get_fixed(&r, 1);
		u->addr_size = dwarf_get_fixed(&r, 1);
		u->abbrev_place = r.p - info;
		u->abbrev_off = dwarf_get_fixed(&r, u->offset_size);
		if (u->type == 2 || u->type == 6)	/* type units: signature, type offset */
			r.p += 8 + u->offset_size;
		else if (u->type == 4 || u->type == 5)	/* skeleton, split: dwo_id */
			r.p += 8;
	} else {
		u->abbrev_place = r.p - info;
		u->abbrev_off = dwarf_get_fixed(&r, u->offset_size);
		u->addr_size = dwarf_get_fixed(&r, 1);
	}
	if (r.bad || r.p > r.end)
		return "unit header past its end";
	if (u->addr_size != 4 && u->addr_size != 8)
		return "an address size that is not 4 or 8";
	u->die_off = r.p - info;
	return NULL;
}

/*
 * Skip an attribute value of form in a unit of version, offset and address sizes; false
 * for a form kbolt does not know (DWARF 5 section 7.5.6, and GNU's 0x1f01-0x1f21)
 */
bool dwarf_skip_form(struct dwarf_reader *r, uint64_t form, const struct dwarf_unit *u)
{
	static const signed char fixed[] = {
		[0x01] = -2, [0x05] = 2, [0x06] = 4, [0x07] = 8, [0x0b] = 1, [0x0c] = 1,
		[0x0e] = -1, [0x10] = -3, [0x11] = 1, [0x12] = 2, [0x13] = 4, [0x14] = 8,
		[0x17] = -1, [0x19] = 0, [0x1c] = 4, [0x1d] = -1, [0x1e] = 16, [0x1f] = -1,
		[0x20] = 8, [0x21] = 0, [0x24] = 8, [0x25] = 1, [0x26] = 2, [0x27] = 3,
		[0x28] = 4, [0x29] = 1, [0x2a] = 2, [0x2b] = 3, [0x2c] = 4,
	};
	uint64_t len;

	switch (form) {
	case 0x03: len = dwarf_get_fixed(r, 2); break;	/* block2 */
	case 0x04: len = dwarf_get_fixed(r, 4); break;	/* block4 */
	case 0x0a: len = dwarf_get_fixed(r, 1); break;	/* block1 */
	case 0x09: case 0x18: len = dwarf_get_uleb(r); break;	/* block, exprloc */
	case 0x08:					/* string */
		while (r->p < r->end && *r->p)
			r->p++;
		len = 1;
		break;
	case 0x0d: dwarf_get_sleb(r); return !r->bad;		/* sdata */
	case 0x0f: case 0x15: case 0x1a: case 0x1b: case 0x22: case 0x23:
	case 0x1f01: case 0x1f02:			/* udata, ref_udata, *x */
		dwarf_get_uleb(r);
		return !r->bad;
	case 0x16:					/* indirect */
		form = dwarf_get_uleb(r);
		return !r->bad && form != 0x16 && dwarf_skip_form(r, form, u);
	case 0x1f20: case 0x1f21: len = u->offset_size; break;	/* GNU_ref_alt, GNU_strp_alt */
	default:
		if (form >= ARRAY_SIZE(fixed) || (!fixed[form] && form != 0x19 && form != 0x21))
			return false;
		len = fixed[form] == -1 ? u->offset_size : fixed[form] == -2 ? u->addr_size :
		      fixed[form] == -3 ? (u->version == 2 ? u->addr_size : u->offset_size) :
		      (uint64_t)fixed[form];
	}
	if (len > (uint64_t)(r->end - r->p)) {
		r->bad = true;
		return false;
	}
	r->p += len;
	return true;
}


static int cmp_patch(const void *key, const void *x)
{
	uint64_t place = *(const uint64_t *)key;
	const struct dwarf_patch *p = x;

	return place < p->place ? -1 : place > p->place;
}

static int cmp_patch_place(const void *x, const void *y)
{
	const struct dwarf_patch *p = x, *q = y;

	return p->place < q->place ? -1 : p->place > q->place;
}

struct dwarf_patch *dwarf_patch_add(struct dwarf_patches *ps, uint64_t place,
				    unsigned int size, uint64_t old, uint64_t new,
				    enum dwarf_patch_kind kind)
{
	GROW(ps->v, ps->cap, ps->nr + 1);
	ps->v[ps->nr] = (struct dwarf_patch){ .place = place, .new_place = place, .old = old,
					      .new = new, .size = size, .kind = kind };
	return &ps->v[ps->nr++];
}

void dwarf_shift_add(struct dwarf_patches *ps, uint64_t from, uint64_t to, unsigned int by)
{
	if (from == to)
		return;
	GROW(ps->shifts, ps->shifts_cap, ps->nr_shifts + 1);
	ps->shifts[ps->nr_shifts++] = (struct dwarf_shift){ from, to, by };
}

static int cmp_shift(const void *key, const void *x)
{
	uint64_t place = *(const uint64_t *)key;
	const struct dwarf_shift *s = x;

	return place < s->from ? -1 : place >= s->to;
}

static int cmp_shift_place(const void *x, const void *y)
{
	const struct dwarf_shift *p = x, *q = y;

	return p->from < q->from ? -1 : p->from > q->from;
}

/*
 * Where the byte at place of the old .debug_info is now.  Places come mostly in
 * order, so the search starts at the first shift not known to end before the last
 * place (*hint), as patch_at()'s does
 */
static uint64_t shifted(const struct dwarf_patches *ps, uint64_t place, size_t *hint)
{
	const struct dwarf_shift *s;
	size_t k = *hint;

	if (k && k <= ps->nr_shifts && ps->shifts[k - 1].to > place) {
		s = search_array(&place, ps->shifts, ps->nr_shifts, sizeof(*s), cmp_shift);
		return s ? place + s->by : place;
	}
	while (k < ps->nr_shifts && ps->shifts[k].to <= place)
		k++;
	*hint = k;
	if (k < ps->nr_shifts && ps->shifts[k].from <= place)
		return place + ps->shifts[k].by;
	return place;
}

/*
 * The patch at place, NULL if none.  Relocations come mostly in place order, so the
 * search starts where the last one ended (*hint) and goes back to bsearch() only for
 * a place before it: 10.6 million lookups on 6.1
 */
static const struct dwarf_patch *patch_at(const struct dwarf_patches *ps, uint64_t place,
					  size_t *hint)
{
	size_t k = *hint;

	if (k && k <= ps->nr && ps->v[k - 1].place >= place)
		return search_array(&place, ps->v, ps->nr, sizeof(*ps->v), cmp_patch);
	while (k < ps->nr && ps->v[k].place < place)
		k++;
	*hint = k;
	return k < ps->nr && ps->v[k].place == place ? &ps->v[k] : NULL;
}

/* Where patch_at() and shifted() start their next search */
struct patch_hints {
	size_t patch, shift;
};

/* The relocation entry at e of .rela.debug_info (rela: its bytes in the mapping) */
static int patch_reloc(struct kmeta_image *img, const unsigned char *e, unsigned char *rela,
		       uint64_t at, const struct dwarf_patches *ps, struct patch_hints *h)
{
	uint64_t place = get_u64(e), addend = get_u64(e + 16);
	const struct dwarf_patch *p = patch_at(ps, place, &h->patch);
	unsigned char *r = rela + at;
	uint64_t new_place = shifted(ps, place, &h->shift);

	if (new_place != place)
		put_u64(r, new_place);
	if (!p)
		return 0;
	switch (p->kind) {
	case PATCH_OFFSET:
		if (addend != p->old) {
			pr_err(img->path, ".rela.debug_info: the relocation of the section "
			       "offset at 0x%" PRIx64 " does not add its value", place);
			return -EINVAL;
		}
		/* fall through */
	case PATCH_ADDR:	/* S + A held the old value: A moves by what it moved */
		put_u64(r + 16, addend + (p->new - p->old));
		break;
	case PATCH_RETYPE:
		put_u64(r, p->new_place);
		put_u64(r + 8, p->info);
		put_u64(r + 16, p->new);
		break;
	case PATCH_DROP:
		put_u64(r + 8, ELF64_R_INFO(0, R_X86_64_NONE));
		put_u64(r + 16, 0);
		break;
	}
	return 0;
}

/*
 * The patches written into .debug_info, and into the addends of their relocations.
 * .rela.debug_info (255 MB on 6.1) is read by pread() in chunks, not through the
 * mapping: its pages would stay in kbolt's memory; only those of the relocations
 * patched are written.
 */
int dwarf_patches_apply(struct kmeta_image *img, struct dwarf_patches *ps,
			struct output_secs *out)
{
	enum { CHUNK = 24 << 16 };
	struct kmeta_sec *info = kmeta_find_sec_by_name(img, ".debug_info");
	struct kmeta_sec *rs = info ? dwarf_rela_of(img, info) : NULL;
	uint64_t size, rsize = 0;
	unsigned char *p = info ? dwarf_file_bytes(img, info, &size) : NULL;
	unsigned char *r = rs ? dwarf_file_bytes(img, rs, &rsize) : NULL;
	unsigned char *buf;
	struct patch_hints h = { 0 };
	int fd, err = 0;

	if (!ps->nr || !p)
		return 0;
	qsort(ps->v, ps->nr, sizeof(*ps->v), cmp_patch_place);
	if (ps->nr_shifts)	/* qsort() takes no NULL array, even empty */
		qsort(ps->shifts, ps->nr_shifts, sizeof(*ps->shifts), cmp_shift_place);
	for (size_t i = 0; i < ps->nr; i++) {	/* little-endian, 1 to 8 bytes */
		const struct dwarf_patch *q = &ps->v[i];
		uint64_t at = q->kind == PATCH_RETYPE ? q->new_place :
			      shifted(ps, q->place, &h.shift);

		if (q->kind == PATCH_DROP)
			continue;
		for (unsigned int k = 0; k < q->size; k++)
			p[at + k] = (unsigned char)(q->new >> (8 * k));
	}
	output_secs_add(out, info->idx, NULL, 0);
	if (!r)
		return 0;
	fd = open(img->path, O_RDONLY);
	if (fd < 0) {
		pr_err(img->path, "%s", strerror(errno));
		return -errno;
	}
	buf = xmalloc(CHUNK);
	h = (struct patch_hints){ 0 };
	for (uint64_t at = 0; at + 24 <= rsize && !err; at += CHUNK) {
		uint64_t n = rsize - at < CHUNK ? rsize - at : CHUNK;

		if (pread(fd, buf, n, (r - img->map) + at) != (ssize_t)n) {
			pr_err(img->path, ".rela.debug_info: %s", strerror(errno ? errno : EIO));
			err = -EIO;
		}
		for (uint64_t e = 0; !err && e + 24 <= n; e += 24)
			err = patch_reloc(img, buf + e, r, at + e, ps, &h);
	}
	free(buf);
	close(fd);
	if (!err)
		output_secs_add(out, rs->idx, NULL, 0);
	return err;
}

void dwarf_patches_take(struct dwarf_patches *ps, struct dwarf_patches *from)
{
	GROW(ps->v, ps->cap, ps->nr + from->nr);
	if (from->nr)
		memcpy(ps->v + ps->nr, from->v, from->nr * sizeof(*from->v));
	ps->nr += from->nr;
	GROW(ps->shifts, ps->shifts_cap, ps->nr_shifts + from->nr_shifts);
	if (from->nr_shifts)
		memcpy(ps->shifts + ps->nr_shifts, from->shifts,
		       from->nr_shifts * sizeof(*from->shifts));
	ps->nr_shifts += from->nr_shifts;
	dwarf_patches_free(from);
}

void dwarf_patches_free(struct dwarf_patches *ps)
{
	free(ps->v);
	free(ps->shifts);
	*ps = (struct dwarf_patches){ 0 };
}

size_t dwarf_section_symbol(struct kmeta_image *img, const struct kmeta_sec *sec)
{
	for (size_t k = 1; k < img->nr_syms; k++)
		if (img->syms[k].type == STT_SECTION && img->syms[k].shndx == sec->idx)
			return k;
	return 0;
}
