// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt verify ORIG NEW: translation validation, independent of how the output was
 * made.  It knows only the two images.
 *
 * 1. Functions whose bytes differ are the rewritten ones.  Each is walked from its
 *    entry in both images at once, instruction against instruction: the same bytes up
 *    to the displacements, whose targets must correspond; a jcc may be inverted (its
 *    two successors then swap); a jmp may disappear (its target comes next) or appear
 *    (a block no longer falls through); patch sites must be the same units.  The walk
 *    builds the address map old -> new and fails on any conflict.  Targets of table
 *    entries and relocations (exception fixups, computed-goto labels) are walked too.
 * 2. Every old instruction of a rewritten function that is not padding must have been
 *    reached, every new byte must be an instruction reached or int3 fill.
 * 3. ORC: the state at each new instruction is the old state at its old address.
 * 4. Tables: every entry's code fields are the old ones through the map, the rest equal
 *    (sorted tables compared after sorting).  Relocations: each follows its place and
 *    target through the map.  Code outside rewritten functions differs only in
 *    displacements that point into moved code.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kmeta/table.h"
#include "../kmeta/util.h"
#include "verify.h"

#define UNMAPPED UINT32_MAX
#define MAX_REPORTS 20
#define ORC_SIZE 6

struct vfunc {
	struct kmeta_sym *sym;		/* in orig */
	uint32_t *map;			/* old offset -> new offset */
	unsigned char *olen;		/* old offset -> length of the insn walked there */
	unsigned char *cover;		/* new offset: 1 insn start, 2 inside one */
};

struct pair {
	uint64_t old, new;
};

struct verifier {
	struct kmeta_image *a, *b;	/* orig, new */
	struct vfunc *f;
	size_t nr_f;
	struct pair *work;		/* walk worklist */
	size_t nr_work, work_cap;
	struct pair *ext;		/* targets outside the walked function, checked last */
	size_t nr_ext, ext_cap;
	size_t errors;
	bool quiet;
	const struct kmeta_range *sites_a, *sites_b;
	size_t nr_sites_a, nr_sites_b;
	/* ORC of both, ips sorted */
	uint64_t *orc_a, *orc_b;
	const unsigned char *orc_ea, *orc_eb;
	size_t nr_orc;
	size_t walked, added_jmps;
};

static void fail(struct verifier *v, uint64_t addr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void fail(struct verifier *v, uint64_t addr, const char *fmt, ...)
{
	char where[KMETA_ADDR_STR_SIZE], msg[512];
	va_list ap;

	if (v->errors++ >= MAX_REPORTS || v->quiet)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err(v->b->path, "verify: %s: %s", kmeta_addr_str(v->a, addr, where, sizeof(where)),
	       msg);
}

static struct vfunc *vfunc_containing(struct verifier *v, uint64_t addr)
{
	size_t lo = 0, hi = v->nr_f;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v->f[mid].sym->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= v->f[lo - 1].sym->addr + v->f[lo - 1].sym->size)
		return NULL;
	return &v->f[lo - 1];
}

/* Old address -> new, through the walks; identity outside rewritten functions */
static bool vmap(struct verifier *v, uint64_t addr, uint64_t *out)
{
	struct vfunc *f = vfunc_containing(v, addr);

	*out = addr;
	if (!f)
		return true;
	if (f->map[addr - f->sym->addr] == UNMAPPED)
		return false;
	*out = f->sym->addr + f->map[addr - f->sym->addr];
	return true;
}

/* A byte inside an instruction walked in old code -> new */
static bool vmap_place(struct verifier *v, uint64_t addr, uint64_t *out)
{
	struct vfunc *f = vfunc_containing(v, addr);
	uint64_t off;

	*out = addr;
	if (!f)
		return true;
	off = addr - f->sym->addr;
	for (uint64_t k = 0; k < 16 && k <= off; k++) {
		uint64_t s = off - k;

		if (f->map[s] != UNMAPPED && f->olen[s] > k) {
			*out = f->sym->addr + f->map[s] + k;
			return true;
		}
	}
	return false;
}

static void push(struct verifier *v, uint64_t old, uint64_t new)
{
	GROW(v->work, v->work_cap, v->nr_work + 1);
	v->work[v->nr_work++] = (struct pair){ old, new };
}

/* A target: walked if inside the same function, checked at the end otherwise */
static void push_target(struct verifier *v, struct vfunc *f, uint64_t old, uint64_t new)
{
	if (old >= f->sym->addr && old < f->sym->addr + f->sym->size) {
		push(v, old, new);
		return;
	}
	GROW(v->ext, v->ext_cap, v->nr_ext + 1);
	v->ext[v->nr_ext++] = (struct pair){ old, new };
}

static const struct kmeta_range *site_at(const struct kmeta_range *r, size_t nr, uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nr && r[lo].start == addr ? &r[lo] : NULL;
}

static int cond_of(struct kmeta_image *img, const struct kmeta_insn *in)
{
	const unsigned char *p = kmeta_bytes_at(img, in->addr, in->len);
	unsigned int i = 0;

	if (!p)
		return -1;
	while (i < in->len && (p[i] == 0x2e || p[i] == 0x3e))
		i++;
	if (i + 2 == in->len && (p[i] & 0xf0) == 0x70)
		return p[i] & 0x0f;
	if (i + 6 == in->len && p[i] == 0x0f && (p[i + 1] & 0xf0) == 0x80)
		return p[i + 1] & 0x0f;
	return -1;
}

static void mark_new(struct vfunc *f, uint64_t new, unsigned int len)
{
	uint64_t off = new - f->sym->addr;

	for (unsigned int k = 0; k < len && off + k < f->sym->size; k++)
		f->cover[off + k] = k ? 2 : 1;
}

/*
 * Same instruction up to the displacement: the bytes outside the rel field equal, the
 * targets corresponding (pushed to be checked).  Abs fields that differ must be
 * relocated in the old image and map too.
 */
static bool same_insn(struct verifier *v, struct vfunc *f, const struct kmeta_insn *i,
		      const struct kmeta_insn *j)
{
	const unsigned char *p = kmeta_bytes_at(v->a, i->addr, i->len);
	const unsigned char *q = kmeta_bytes_at(v->b, j->addr, j->len);

	if (!p || !q || i->len != j->len || i->rel_off != j->rel_off || i->rel_size != j->rel_size)
		return false;
	for (unsigned int k = 0; k < i->len; k++) {
		struct kmeta_reloc *r;
		uint64_t to;

		if (i->rel_size && k >= i->rel_off && k < i->rel_off + i->rel_size)
			continue;
		if (p[k] == q[k])
			continue;
		/* an absolute address of code (push $label): where it leads must correspond */
		r = kmeta_find_reloc_at(v->a, i->addr + k);
		if (!r || (r->type != R_X86_64_32S && r->type != R_X86_64_32 &&
			   r->type != R_X86_64_64) || get_u32(p + k) != (uint32_t)r->target)
			return false;
		if (r->type == R_X86_64_64)
			to = get_u64(q + k);
		else if (r->type == R_X86_64_32S)
			to = (uint64_t)(int64_t)(int32_t)get_u32(q + k);
		else
			to = get_u32(q + k);
		push_target(v, f, r->target, to);
		k += (r->type == R_X86_64_64 ? 8 : 4) - 1;
	}
	if (i->rel_size)
		push_target(v, f, i->target, j->target);
	return true;
}

static int read_orc(struct kmeta_image *img, uint64_t **ips, const unsigned char **e, size_t *nr)
{
	struct kmeta_sec *ip = kmeta_find_sec_by_name(img, ".orc_unwind_ip");
	struct kmeta_sec *orc = kmeta_find_sec_by_name(img, ".orc_unwind");

	if (!ip || !orc || !ip->data || !orc->data)
		return -ENOENT;
	*nr = ip->size / 4;
	*ips = xmalloc(*nr * sizeof(**ips));
	*e = orc->data;
	for (size_t k = 0; k < *nr; k++)
		(*ips)[k] = ip->addr + 4 * k + (int64_t)(int32_t)get_u32(ip->data + 4 * k);
	return 0;
}

static const unsigned char *state_at(const uint64_t *ips, const unsigned char *e, size_t nr,
				     uint64_t addr)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ips[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? e + (lo - 1) * ORC_SIZE : NULL;
}

static bool same_state(const unsigned char *x, const unsigned char *y)
{
	return x == y || (x && y && !memcmp(x, y, ORC_SIZE));
}

static const unsigned char *orc_state(struct verifier *v, bool new, uint64_t addr)
{
	if (!v->orc_a || !v->orc_b)
		return NULL;
	return new ? state_at(v->orc_b, v->orc_eb, v->nr_orc, addr)
		   : state_at(v->orc_a, v->orc_ea, v->nr_orc, addr);
}

enum site_kind { SITES_JL, SITES_ANY, SITES_WARN, SITES_NR };

static bool is_jl_site(struct kmeta_image *img, uint64_t addr);
static bool is_table_site(struct kmeta_image *img, uint64_t addr);
static bool in_set(struct kmeta_image *img, enum site_kind kind, uint64_t addr);

#define MAX_FOLLOW 64

/*
 * Where control goes from addr of img (inside f) once plain jmps are followed: jmps
 * are what a layout adds and removes, so the walk compares code modulo them.  A jmp at
 * a table site, relocated, or leaving f is code, not layout.  Followed jmps are marked
 * in mark (new: cover) and, for the new image, returned in jmps[] for the ORC check.
 * (Relocations are looked up in the old image only: a relocated jmp inside its own
 * function does not occur, and if it did the two sides would disagree, not pass.)
 */
static uint64_t follow(struct verifier *v, struct kmeta_image *img, struct vfunc *f,
		       uint64_t addr, bool new, uint64_t *jmps, size_t *nr_jmps)
{
	uint64_t end = f->sym->addr + f->sym->size;

	*nr_jmps = 0;
	for (int k = 0; k < MAX_FOLLOW; k++) {
		struct kmeta_insn in;

		if (kmeta_insn_decode(img, addr, &in) || in.kind != KI_JMP ||
		    in.target < f->sym->addr || in.target >= end || in.target == addr ||
		    is_table_site(img, addr) ||
		    (!new && kmeta_find_reloc_at(img, addr + in.rel_off)))
			return addr;
		if (new)
			mark_new(f, addr, in.len);
		else
			f->olen[addr - f->sym->addr] = in.len;	/* reached, for coverage */
		jmps[(*nr_jmps)++] = addr;
		addr = in.target;
	}
	return addr;
}

/*
 * The new instruction at n, knowing the old one i: the same bytes decode the same,
 * with a displacement's target shifted by the move; only other bytes are decoded.
 */
static int decode_new(struct verifier *v, const struct kmeta_insn *i, uint64_t n,
		      struct kmeta_insn *j)
{
	const unsigned char *p = kmeta_bytes_at(v->a, i->addr, i->len);
	const unsigned char *q = kmeta_bytes_at(v->b, n, i->len);

	if (!p || !q || memcmp(p, q, i->len))
		return kmeta_insn_decode(v->b, n, j);
	*j = *i;
	j->addr = n;
	if (i->rel_size)
		j->target = i->target + (n - i->addr);
	return 0;
}

/* One step of the walk: the old code at o against the new code at n */
static void step(struct verifier *v, struct vfunc *f, uint64_t o, uint64_t n)
{
	uint64_t end = f->sym->addr + f->sym->size, off, jo[MAX_FOLLOW], jn[MAX_FOLLOW];
	const struct kmeta_range *ra, *rb;
	struct kmeta_insn i, j;
	size_t nr_jo, nr_jn;
	int ci, cj;

	if (n < f->sym->addr || n >= end) {
		fail(v, o, "continues outside its function in the new code, at %" PRIx64, n);
		return;
	}
	o = follow(v, v->a, f, o, false, jo, &nr_jo);
	n = follow(v, v->b, f, n, true, jn, &nr_jn);
	for (size_t k = 0; k < nr_jn; k++)
		if (!same_state(orc_state(v, true, jn[k]), orc_state(v, false, o)))
			fail(v, o, "ORC state at the jmp at new +0x%" PRIx64 " differs",
			     jn[k] - f->sym->addr);
	off = o - f->sym->addr;
	if (f->map[off] != UNMAPPED) {
		if (f->sym->addr + f->map[off] != n)
			fail(v, o, "reached at two new places, +0x%x and +0x%" PRIx64,
			     f->map[off], n - f->sym->addr);
		return;
	}
	if (kmeta_insn_decode(v->a, o, &i) || decode_new(v, &i, n, &j)) {
		fail(v, o, "no instruction at its new place %" PRIx64, n);
		return;
	}
	ra = site_at(v->sites_a, v->nr_sites_a, o);
	if (ra) {	/* a patch site: the same unit, its branches re-targeted */
		rb = site_at(v->sites_b, v->nr_sites_b, n);
		if (!rb || rb->end - rb->start != ra->end - ra->start) {
			fail(v, o, "patch site not found at its new place");
			return;
		}
		for (uint64_t k = 0; k < ra->end - ra->start; k++) {
			f->map[off + k] = n - f->sym->addr + k;
			f->olen[off + k] = ra->end - ra->start - k;
		}
		v->walked++;
		for (uint64_t a = o; a < ra->end; a += i.len) {
			if (kmeta_insn_decode(v->a, a, &i) ||
			    kmeta_insn_decode(v->b, n + (a - o), &j) || !same_insn(v, f, &i, &j)) {
				fail(v, a, "patch site content differs");
				return;
			}
		}
		mark_new(f, n, ra->end - ra->start);
		if (ra->end < end)
			push(v, ra->end, n + (ra->end - ra->start));
		return;
	}
	f->map[off] = n - f->sym->addr;
	f->olen[off] = i.len;
	v->walked++;
	mark_new(f, n, j.len);
	if (is_jl_site(v->a, o)) {	/* nop or jmp, 2 or 5 bytes; its target from the table */
		if (!is_jl_site(v->b, n) || (i.kind == KI_JMP) != (j.kind == KI_JMP))
			fail(v, o, "jump-label site differs");
		else if (o + i.len < end)
			push(v, o + i.len, n + j.len);
		return;
	}
	ci = i.kind == KI_JCC ? cond_of(v->a, &i) : -1;
	cj = j.kind == KI_JCC ? cond_of(v->b, &j) : -1;
	if (ci >= 0 && i.target >= f->sym->addr && i.target < end && cj >= 0 &&
	    !kmeta_find_reloc_at(v->a, o + i.rel_off)) {
		if (ci != cj && (ci ^ 1) != cj) {
			fail(v, o, "conditional branch differs");
			return;
		}
		push(v, ci == cj ? i.target : o + i.len, j.target);
		push(v, ci == cj ? o + i.len : i.target, n + j.len);
		return;
	}
	if (!same_insn(v, f, &i, &j)) {
		fail(v, o, "instruction differs from the old one");
		return;
	}
	if (kmeta_insn_ends_flow(&i) && !in_set(v->a, SITES_WARN, o) && !(i.flags & KIF_INT))
		return;
	if (o + i.len < end)
		push(v, o + i.len, n + j.len);
}

/* Sorted site addresses of one kind in one image, built on first use */
struct site_set {
	struct kmeta_image *img;
	uint64_t *v;
	size_t nr;
};
static struct site_set site_sets[2][SITES_NR];

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool wanted(const struct kmeta_table *t, const struct kmeta_entry *e, enum site_kind k)
{
	if (k == SITES_JL)
		return !strcmp(t->desc->name, "jump_table");
	if (k == SITES_WARN)	/* BUGFLAG_WARNING: execution goes on after the ud2 */
		return !strcmp(t->desc->name, "bug_table") && (e->val[3] & 1);
	return strcmp(t->desc->name, "orc");
}

static void build_set(struct site_set *s, struct kmeta_image *img, enum site_kind kind)
{
	s->img = img;
	for (unsigned int d = 0; d < nr_table_descs; d++) {
		struct kmeta_table *t = table_get(img, table_descs[d]);
		struct kmeta_entry e;

		for (size_t k = 0; t && t->present && k < t->nr_slots; k++) {
			if (table_read_entry(t, k, &e) || e.filler || !wanted(t, &e, kind))
				continue;
			s->v = xrealloc(s->v, (s->nr + 1) * sizeof(*s->v));
			s->v[s->nr++] = e.site;
		}
	}
	sort_array(s->v, s->nr, sizeof(*s->v), cmp_u64);
}

static bool in_set(struct kmeta_image *img, enum site_kind kind, uint64_t addr)
{
	struct site_set *s = &site_sets[0][kind];
	size_t lo = 0, hi;

	if (s->img != img)
		s = &site_sets[1][kind];
	if (s->img != img) {
		s = site_sets[0][kind].img ? &site_sets[1][kind] : &site_sets[0][kind];
		build_set(s, img, kind);
	}
	hi = s->nr;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid] < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->nr && s->v[lo] == addr;
}

static bool is_jl_site(struct kmeta_image *img, uint64_t addr)
{
	return in_set(img, SITES_JL, addr);
}

static bool is_table_site(struct kmeta_image *img, uint64_t addr)
{
	return in_set(img, SITES_ANY, addr);
}

static void walk(struct verifier *v, struct vfunc *f)
{
	while (v->nr_work) {
		struct pair p = v->work[--v->nr_work];

		step(v, f, p.old, p.new);
	}
}

static const unsigned char *rela_bytes(struct kmeta_image *img, struct kmeta_sec *sec,
				       uint64_t *size);

/* Index in img->funcs of the function containing addr, -1 if none */
static long func_index(struct kmeta_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nr_funcs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (img->funcs[mid]->addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= img->funcs[lo - 1]->addr + img->funcs[lo - 1]->size)
		return -1;
	return lo - 1;
}

/* Functions with relocations that moved: their bytes may still be equal (equal blocks) */
static void mark_moved_relocs(struct verifier *v, unsigned char *marks)
{
	for (size_t i = 1; i < v->a->nr_secs; i++) {
		struct kmeta_sec *rsa = &v->a->secs[i];
		const unsigned char *ra, *rb;
		uint64_t sa = 0, sb = 0;
		GElf_Shdr sh;

		if (rsa->type != SHT_RELA || !gelf_getshdr(rsa->scn, &sh) || !sh.sh_info ||
		    sh.sh_info >= v->a->nr_secs || !(v->a->secs[sh.sh_info].flags & SHF_EXECINSTR))
			continue;
		ra = rela_bytes(v->a, rsa, &sa);
		rb = rela_bytes(v->b, &v->b->secs[i], &sb);
		for (uint64_t k = 0; ra && rb && sa == sb && k < sa / 24; k++) {
			uint64_t p = get_u64(ra + 24 * k);
			long f;

			if (p != get_u64(rb + 24 * k) && (f = func_index(v->a, p)) >= 0)
				marks[f] = 1;
		}
	}
}

/* The rewritten functions: bytes that differ, or relocations that moved */
static void find_rewritten(struct verifier *v)
{
	struct kmeta_image *a = v->a;
	unsigned char *marks = xcalloc(a->nr_funcs, 1);

	mark_moved_relocs(v, marks);
	v->f = xcalloc(a->nr_funcs, sizeof(*v->f));
	for (size_t i = 0; i < a->nr_funcs; i++) {
		struct kmeta_sym *s = a->funcs[i];
		const unsigned char *p = kmeta_bytes_at(a, s->addr, s->size);
		const unsigned char *q = kmeta_bytes_at(v->b, s->addr, s->size);

		if (!p || !q || (!marks[i] && !memcmp(p, q, s->size)))
			continue;
		if (v->nr_f && v->f[v->nr_f - 1].sym->addr == s->addr)
			continue;	/* an alias */
		v->f[v->nr_f].sym = s;
		v->f[v->nr_f].map = xmalloc(s->size * sizeof(uint32_t));
		memset(v->f[v->nr_f].map, 0xff, s->size * sizeof(uint32_t));
		v->f[v->nr_f].olen = xcalloc(s->size, 1);
		v->f[v->nr_f].cover = xcalloc(s->size, 1);
		v->nr_f++;
	}
	free(marks);
}

static int cmp_entry_site(const void *x, const void *y)
{
	const struct kmeta_entry *a = x, *b = y;

	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	for (int i = 0; i < TABLE_MAX_FIELDS; i++)
		if (a->val[i] != b->val[i])
			return a->val[i] < b->val[i] ? -1 : 1;
	return 0;
}

static struct kmeta_entry *bsearch_site(struct kmeta_entry *e, size_t nr, uint64_t site)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].site < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nr && e[lo].site == site ? &e[lo] : NULL;
}

static const unsigned char *rela_bytes(struct kmeta_image *img, struct kmeta_sec *sec,
				       uint64_t *size)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(sec->scn, &sh) || sh.sh_offset + sh.sh_size > img->map_size ||
	    sh.sh_entsize != 24)
		return NULL;
	*size = sh.sh_size;
	return img->map + sh.sh_offset;
}

/* Are old and new the same place, modulo followed jmps? */
static bool equiv(struct verifier *v, uint64_t old, uint64_t new)
{
	struct vfunc *f = vfunc_containing(v, old);
	uint64_t jmps[MAX_FOLLOW], o, n;
	size_t nr;

	if (!f)
		return old == new;
	if (new < f->sym->addr || new >= f->sym->addr + f->sym->size)
		return false;
	o = follow(v, v->a, f, old, false, jmps, &nr);
	n = follow(v, v->b, f, new, true, jmps, &nr);
	return f->map[o - f->sym->addr] == n - f->sym->addr;
}

/* Walk (old, new) as a root unless old is already known to go there */
static size_t add_root(struct verifier *v, uint64_t old, uint64_t new)
{
	struct vfunc *f = vfunc_containing(v, old);
	size_t before = v->walked;

	if (!f) {
		if (old != new)
			fail(v, old, "referenced as %" PRIx64 " but not in rewritten code", new);
		return 0;
	}
	if (equiv(v, old, new))
		return 0;
	push(v, old, new);
	walk(v, f);
	return v->walked - before;
}

/* Code fields of tables whose slots correspond one to one */
static size_t roots_from_slots(struct verifier *v, struct kmeta_table *ta, struct kmeta_table *tb)
{
	struct kmeta_entry ea, eb;
	size_t n = 0;

	for (size_t k = 0; k < ta->nr_slots; k++) {
		if (table_read_entry(ta, k, &ea) || table_read_entry(tb, k, &eb))
			continue;
		for (unsigned int i = 0; i < TABLE_MAX_FIELDS && ta->layout->fields[i].name; i++)
			if (ta->layout->fields[i].role == FR_CODE)
				n += add_root(v, ea.val[i], eb.val[i]);
	}
	return n;
}

/* Sorted tables: an old entry's partner is the new one at its mapped site */
static size_t roots_from_sorted(struct verifier *v, struct kmeta_table *ta, struct kmeta_table *tb)
{
	struct kmeta_entry *eb = xcalloc(tb->nr_slots, sizeof(*eb)), ea;
	size_t n = 0;

	for (size_t k = 0; k < tb->nr_slots; k++)
		table_read_entry(tb, k, &eb[k]);
	sort_array(eb, tb->nr_slots, sizeof(*eb), cmp_entry_site);
	for (size_t k = 0; k < ta->nr_slots; k++) {
		struct kmeta_entry key;
		struct kmeta_entry *m;
		uint64_t site;

		if (table_read_entry(ta, k, &ea) || !vfunc_containing(v, ea.site) ||
		    !vmap(v, ea.site, &site))
			continue;
		memset(&key, 0, sizeof(key));
		key.site = site;
		m = bsearch_site(eb, tb->nr_slots, site);
		if (!m)
			continue;
		for (unsigned int i = 0; i < TABLE_MAX_FIELDS && ta->layout->fields[i].name; i++)
			if (ta->layout->fields[i].role == FR_CODE)
				n += add_root(v, ea.val[i], m->val[i]);
	}
	free(eb);
	return n;
}

/* Relocated pointers in data: computed-goto tables and the like */
static size_t roots_from_relocs(struct verifier *v)
{
	size_t n = 0;

	for (size_t i = 1; i < v->a->nr_secs; i++) {
		struct kmeta_sec *rsa = &v->a->secs[i], *target;
		const unsigned char *ra, *rb;
		uint64_t sa = 0, sb = 0;
		GElf_Shdr sh;

		if (rsa->type != SHT_RELA || !gelf_getshdr(rsa->scn, &sh) || !sh.sh_info ||
		    sh.sh_info >= v->a->nr_secs)
			continue;
		target = &v->a->secs[sh.sh_info];
		if (!(target->flags & SHF_ALLOC) || (target->flags & SHF_EXECINSTR) ||
		    !strcmp(target->name, ".orc_unwind_ip"))
			continue;
		ra = rela_bytes(v->a, rsa, &sa);
		rb = rela_bytes(v->b, &v->b->secs[i], &sb);
		for (uint64_t k = 0; ra && rb && sa == sb && k < sa / 24; k++) {
			uint64_t info = get_u64(ra + 24 * k + 8), s;

			if ((uint32_t)info == R_X86_64_NONE || (info >> 32) >= v->a->nr_syms)
				continue;
			s = v->a->syms[info >> 32].addr;
			n += add_root(v, s + get_u64(ra + 24 * k + 16), s + get_u64(rb + 24 * k + 16));
		}
	}
	return n;
}

/* Branches and %rip operands of code that is not rewritten, old and new side by side */
static size_t roots_from_range(struct verifier *v, uint64_t start, uint64_t end)
{
	const unsigned char *p = kmeta_bytes_at(v->a, start, end - start);
	const unsigned char *q = kmeta_bytes_at(v->b, start, end - start);
	struct kmeta_insn *ia, j;
	size_t na, n = 0;
	uint64_t bad;

	if (end <= start || !p || !q ||
	    kmeta_insn_decode_range(v->a, start, end, &ia, &na, &bad))
		return 0;
	for (size_t k = 0; k < na; k++) {
		const struct kmeta_insn *i = &ia[k];
		uint64_t off = i->addr - start;

		if (!memcmp(p + off, q + off, i->len)) {	/* the same instruction */
			if (i->rel_size && vfunc_containing(v, i->target))
				n += add_root(v, i->target, i->target);
			continue;
		}
		/* re-targeted: only its displacement may differ */
		if (kmeta_insn_decode(v->b, i->addr, &j) || j.len != i->len ||
		    j.rel_off != i->rel_off || j.rel_size != i->rel_size || !i->rel_size ||
		    memcmp(p + off, q + off, i->rel_off) ||
		    memcmp(p + off + i->rel_off + i->rel_size, q + off + i->rel_off + i->rel_size,
			   i->len - i->rel_off - i->rel_size)) {
			fail(v, i->addr, "code outside rewritten functions changed");
			break;
		}
		n += add_root(v, i->target, j.target);
	}
	free(ia);
	return n;
}

/* Alternative replacements, .altinstr_aux and every function left as it was */
static size_t roots_from_unmoved(struct verifier *v)
{
	const struct table_desc *d = table_find_desc("alternatives");
	struct kmeta_table *t = d ? table_get(v->a, d) : NULL;
	struct kmeta_sec *aux = kmeta_find_sec_by_name(v->a, ".altinstr_aux");
	struct kmeta_entry e;
	size_t n = 0;

	for (size_t k = 0; t && t->present && k < t->nr_slots; k++)
		if (!table_read_entry(t, k, &e))
			n += roots_from_range(v, e.val[1], e.val[1] + e.val[4]);
	if (aux && aux->data)
		n += roots_from_range(v, aux->addr, aux->addr + aux->size);
	for (size_t i = 0; i < v->a->nr_funcs; i++) {
		struct kmeta_sym *s = v->a->funcs[i];

		if (!vfunc_containing(v, s->addr) && (!i || v->a->funcs[i - 1]->addr != s->addr))
			n += roots_from_range(v, s->addr, s->addr + s->size);
	}
	return n;
}

static void walk_all(struct verifier *v)
{
	size_t n;

	for (size_t k = 0; k < v->nr_f; k++) {
		push(v, v->f[k].sym->addr, v->f[k].sym->addr);
		walk(v, &v->f[k]);
	}
	roots_from_unmoved(v);
	do {	/* roots can reach code that makes more roots resolvable */
		n = roots_from_relocs(v);
		for (size_t k = 0; k < v->nr_ext; k++)	/* branches between functions */
			n += add_root(v, v->ext[k].old, v->ext[k].new);
		for (unsigned int d = 0; d < nr_table_descs; d++) {
			struct kmeta_table *ta = table_get(v->a, table_descs[d]);
			struct kmeta_table *tb = table_get(v->b, table_descs[d]);

			if (!ta || !tb || !ta->present || ta->nr_slots != tb->nr_slots ||
			    !strcmp(ta->desc->name, "orc"))
				continue;
			n += ta->desc->sorted ? roots_from_sorted(v, ta, tb)
					      : roots_from_slots(v, ta, tb);
		}
	} while (n);
}

static bool is_padding_insn(struct kmeta_image *img, uint64_t addr, unsigned int *len)
{
	struct kmeta_insn in;
	const unsigned char *p;

	if (kmeta_insn_decode(img, addr, &in))
		return false;
	*len = in.len;
	p = kmeta_bytes_at(img, addr, 1);
	return (in.flags & KIF_NOP) || (p && p[0] == 0xcc);
}

/* Every old instruction reached or padding; every new byte reached or int3 */
static void check_coverage(struct verifier *v)
{
	for (size_t k = 0; k < v->nr_f; k++) {
		struct vfunc *f = &v->f[k];
		const struct kmeta_func_insns *fi = kmeta_func_decode(v->a, f->sym);
		const unsigned char *q = kmeta_bytes_at(v->b, f->sym->addr, f->sym->size);

		for (uint32_t i = 0; fi && i < fi->nr; i++) {
			uint32_t off = fi->off[i];
			unsigned int len;

			if (f->map[off] != UNMAPPED || f->olen[off] ||
			    kmeta_is_inside_patch_site(v->a, f->sym->addr + off))
				continue;
			if (!is_padding_insn(v->a, f->sym->addr + off, &len))
				fail(v, f->sym->addr + off, "old instruction not found in the new code");
		}
		for (uint64_t off = 0; off < f->sym->size; off++)
			if (!f->cover[off] && q[off] != 0xcc)
				fail(v, f->sym->addr, "new byte at +0x%" PRIx64 " is neither a walked "
				     "instruction nor int3 fill", off);
	}
}

static void check_ext(struct verifier *v)
{
	for (size_t k = 0; k < v->nr_ext; k++) {
		if (!equiv(v, v->ext[k].old, v->ext[k].new))
			fail(v, v->ext[k].old, "referenced as %" PRIx64 " in the new code", v->ext[k].new);
	}
}

/* Old state at every mapped old byte that starts an insn (or sits in a unit) */
static void check_orc(struct verifier *v)
{
	size_t nr_b = v->nr_orc;

	if (!v->orc_a || !v->orc_b)
		return;
	for (size_t k = 0; k < v->nr_f; k++) {
		struct vfunc *f = &v->f[k];

		for (uint64_t off = 0; off < f->sym->size; off++) {
			uint64_t o = f->sym->addr + off, n;

			if (f->map[off] == UNMAPPED)
				continue;
			n = f->sym->addr + f->map[off];
			if (!same_state(state_at(v->orc_a, v->orc_ea, v->nr_orc, o),
					state_at(v->orc_b, v->orc_eb, v->nr_orc, n)))
				fail(v, o, "ORC state at its new place +0x%x differs", f->map[off]);
		}
	}
	/* outside rewritten functions, each old entry is still there */
	for (size_t k = 0; k < v->nr_orc; k++) {
		uint64_t ip = v->orc_a[k];

		if (vfunc_containing(v, ip))
			continue;
		if (!same_state(state_at(v->orc_a, v->orc_ea, v->nr_orc, ip),
				state_at(v->orc_b, v->orc_eb, nr_b, ip)))
			fail(v, ip, "ORC state changed outside rewritten code");
	}
}

/* The old entry's site through the map, as the new table should have it */
static bool map_site(struct verifier *v, struct kmeta_table *t, struct kmeta_entry *e)
{
	for (unsigned int i = 0; i < TABLE_MAX_FIELDS && t->layout->fields[i].name; i++) {
		if (t->layout->fields[i].role != FR_SITE || e->filler)
			continue;
		if (!vmap(v, e->val[i], &e->val[i]))
			return false;
		e->site = e->val[i];
	}
	return true;
}

/* Old entry a (its site already mapped) against new entry b */
static void check_entry(struct verifier *v, struct kmeta_table *t, const struct kmeta_entry *a,
			const struct kmeta_entry *b, size_t k)
{
	for (unsigned int i = 0; i < TABLE_MAX_FIELDS && t->layout->fields[i].name; i++) {
		const struct field *f = &t->layout->fields[i];
		bool ok;

		if (f->role == FR_CODE)
			ok = equiv(v, a->val[i], b->val[i]) && a->flags[i] == b->flags[i];
		else if (f->kind == FK_PCREL32 || f->kind == FK_PCREL64 || f->kind == FK_ABS64)
			ok = a->val[i] == b->val[i] && a->flags[i] == b->flags[i];
		else
			ok = a->raw[i] == b->raw[i];
		if (!ok) {
			fail(v, b->site, "%s: entry %zu: %s is not the old one mapped",
			     t->desc->name, k, f->name);
			return;
		}
	}
}

static void check_table(struct verifier *v, struct kmeta_table *ta, struct kmeta_table *tb)
{
	struct kmeta_entry *ea = xcalloc(ta->nr_slots, sizeof(*ea));
	struct kmeta_entry *eb = xcalloc(tb->nr_slots, sizeof(*eb));

	for (size_t k = 0; k < ta->nr_slots; k++) {
		if (table_read_entry(ta, k, &ea[k]) || table_read_entry(tb, k, &eb[k]))
			continue;
		if (!map_site(v, ta, &ea[k]))
			fail(v, ea[k].site, "%s: entry %zu: its site was not reached by the walk",
			     ta->desc->name, k);
	}
	if (ta->desc->sorted) {
		sort_array(ea, ta->nr_slots, sizeof(*ea), cmp_entry_site);
		sort_array(eb, tb->nr_slots, sizeof(*eb), cmp_entry_site);
	}
	for (size_t k = 0; k < ta->nr_slots; k++)
		check_entry(v, ta, &ea[k], &eb[k], k);
	free(ea);
	free(eb);
}

static void check_tables(struct verifier *v)
{
	for (unsigned int d = 0; d < nr_table_descs; d++) {
		struct kmeta_table *ta = table_get(v->a, table_descs[d]);
		struct kmeta_table *tb = table_get(v->b, table_descs[d]);

		if (!ta || !tb || !ta->present || !strcmp(ta->desc->name, "orc"))
			continue;
		if (ta->nr_slots != tb->nr_slots) {
			fail(v, 0, "%s: %zu entries, was %zu", ta->desc->name, tb->nr_slots,
			     ta->nr_slots);
			continue;
		}
		check_table(v, ta, tb);
	}
}

static bool in_sorted_table(struct verifier *v, uint64_t p)
{
	for (unsigned int d = 0; d < nr_table_descs; d++) {
		struct kmeta_table *t = table_get(v->a, table_descs[d]);

		if (!t || !t->present || !t->desc->sorted)
			continue;
		for (unsigned int r = 0; r < t->nr_ranges; r++)
			if (p >= t->ranges[r].addr && p < t->ranges[r].addr + t->ranges[r].size)
				return true;
	}
	return false;
}

static void check_rela_entry(struct verifier *v, struct kmeta_sec *target,
			     const unsigned char *ra, const unsigned char *rb)
{
	uint64_t pa = get_u64(ra), pb = get_u64(rb), info = get_u64(ra + 8);
	int64_t aa = (int64_t)get_u64(ra + 16), ab = (int64_t)get_u64(rb + 16);
	uint64_t s, pm, ref_a, ref_b;

	if (info != get_u64(rb + 8)) {
		fail(v, pa, "relocation's type or symbol changed");
		return;
	}
	if ((uint32_t)info == R_X86_64_NONE || (info >> 32) >= v->a->nr_syms)
		return;
	s = v->a->syms[info >> 32].addr;
	if (in_sorted_table(v, pa))
		return;		/* slots permuted by sorting: the table check covers them */
	if (!vmap_place(v, pa, &pm) || pm != pb) {
		fail(v, pa, "relocation not moved with its instruction");
		return;
	}
	ref_a = s + aa;
	ref_b = s + ab;
	if (target->flags & SHF_EXECINSTR) {
		/* pc-relative in code: the field's target moves, not S + A itself */
		if (ab - aa != 0 && !vfunc_containing(v, ref_a + 4) && !vfunc_containing(v, ref_a))
			fail(v, pa, "relocation addend changed for an unmoved target");
		return;
	}
	if (!equiv(v, ref_a, ref_b))
		fail(v, pa, "relocation target not moved with the code it points to");
}

/* The ORC table's relocations, regenerated: one per slot, to the slot's ip */
static void check_orc_relocs(struct verifier *v, struct kmeta_sec *rsb)
{
	struct kmeta_sec *ip = kmeta_find_sec_by_name(v->b, ".orc_unwind_ip");
	const unsigned char *rb;
	uint64_t size = 0;

	rb = rela_bytes(v->b, rsb, &size);
	if (!ip || !rb || !v->orc_b || size != v->nr_orc * 24) {
		fail(v, 0, "%s: not one relocation per ORC slot", rsb->name);
		return;
	}
	for (size_t k = 0; k < v->nr_orc; k++) {
		const unsigned char *r = rb + 24 * k;
		uint64_t info = get_u64(r + 8);

		if ((uint32_t)info != R_X86_64_PC32 || (info >> 32) >= v->b->nr_syms ||
		    get_u64(r) != ip->addr + 4 * k ||
		    v->b->syms[info >> 32].addr + get_u64(r + 16) != v->orc_b[k]) {
			fail(v, v->orc_b[k], "%s: relocation %zu does not describe ORC slot %zu",
			     rsb->name, k, k);
			return;
		}
	}
}

static void check_relocs(struct verifier *v)
{
	for (size_t i = 1; i < v->a->nr_secs; i++) {
		struct kmeta_sec *rsa = &v->a->secs[i], *rsb = &v->b->secs[i], *target;
		const unsigned char *ra, *rb;
		uint64_t sa = 0, sb = 0;
		GElf_Shdr sh;

		if (rsa->type != SHT_RELA || !gelf_getshdr(rsa->scn, &sh) || !sh.sh_info ||
		    sh.sh_info >= v->a->nr_secs)
			continue;
		target = &v->a->secs[sh.sh_info];
		if (!(target->flags & SHF_ALLOC))
			continue;
		if (!strcmp(target->name, ".orc_unwind_ip")) {
			if (v->nr_f)
				check_orc_relocs(v, rsb);
			continue;
		}
		ra = rela_bytes(v->a, rsa, &sa);
		rb = rela_bytes(v->b, rsb, &sb);
		if (!ra || !rb || sa != sb) {
			fail(v, 0, "%s: cannot compare", rsa->name);
			continue;
		}
		for (uint64_t k = 0; k < sa / 24; k++)
			check_rela_entry(v, target, ra + 24 * k, rb + 24 * k);
	}
}

static void verifier_free(struct verifier *v)
{
	for (size_t k = 0; k < v->nr_f; k++) {
		free(v->f[k].map);
		free(v->f[k].olen);
		free(v->f[k].cover);
	}
	free(v->f);
	free(v->work);
	free(v->ext);
	free(v->orc_a);
	free(v->orc_b);
	for (int i = 0; i < 2; i++) {
		for (int k = 0; k < SITES_NR; k++) {
			free(site_sets[i][k].v);
			site_sets[i][k] = (struct site_set){ 0 };
		}
	}
	kmeta_close(v->a);
	kmeta_close(v->b);
}

int kbolt_verify(const char *orig, const char *new, const struct verify_report *rep)
{
	struct verifier v = { .quiet = false };
	size_t nr_orc_b = 0;
	int err;

	v.a = kmeta_open(orig);
	v.b = v.a ? kmeta_open(new) : NULL;
	if (!v.b || kmeta_patch_sites(v.a, &v.sites_a, &v.nr_sites_a) ||
	    kmeta_patch_sites(v.b, &v.sites_b, &v.nr_sites_b) || kmeta_index_relocs(v.a)) {
		verifier_free(&v);
		return 1;
	}
	if (read_orc(v.a, &v.orc_a, &v.orc_ea, &v.nr_orc) ||
	    read_orc(v.b, &v.orc_b, &v.orc_eb, &nr_orc_b) || nr_orc_b != v.nr_orc)
		fail(&v, 0, "the ORC tables are missing or of different sizes");
	find_rewritten(&v);
	walk_all(&v);
	check_ext(&v);
	check_coverage(&v);
	check_orc(&v);
	check_tables(&v);
	check_relocs(&v);
	if (v.errors > MAX_REPORTS)
		pr_err(new, "verify: %zu more problems not shown", v.errors - MAX_REPORTS);
	if (!rep->quiet || v.errors)
		printf("%s: %zu rewritten functions, %zu instructions walked, %zu jmps added: %s\n",
		       new, v.nr_f, v.walked, v.added_jmps, v.errors ? "FAILED" : "verified");
	err = v.errors ? 1 : 0;
	verifier_free(&v);
	return err;
}
