// SPDX-License-Identifier: GPL-2.0
/*
 * The walk of kbolt verify: each rewritten function in both images at once, from its
 * entry and from every root (targets of tables, of relocated data, of code that was
 * not rewritten), instruction against instruction modulo plain jmps, building the
 * old -> new map; then coverage of both sides.  See verify.c for the whole proof.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../kmeta/table.h"
#include "../lib/parallel.h"
#include "internal.h"

static void walk_push(struct walker *w, uint64_t old, uint64_t new)
{
	GROW(w->work, w->work_cap, w->nr_work + 1);
	w->work[w->nr_work++] = (struct pair){ old, new };
}

/*
 * Where f's old code ends: its ELF end.  The padding after it (kmeta_claim_padding())
 * is room for the new code only: the old code never runs into it.
 */
static uint64_t old_end(const struct vfunc *f)
{
	return f->sym->addr + kmeta_elf_size(f->sym);
}

/* A target: walked if inside the same function, checked at the end otherwise */
static void push_target(struct walker *w, struct vfunc *f, uint64_t old, uint64_t new)
{
	if (old >= f->sym->addr && old < old_end(f)) {
		walk_push(w, old, new);
		return;
	}
	GROW(w->ext, w->ext_cap, w->nr_ext + 1);
	w->ext[w->nr_ext++] = (struct pair){ old, new };
}

static const struct kmeta_range *site_at(const struct kmeta_range *r, size_t nr, uint64_t addr)
{
	size_t i = lower_bound_u64(r, nr, sizeof(*r), offsetof(struct kmeta_range, start), addr);

	return i < nr && r[i].start == addr ? &r[i] : NULL;
}

static int cond_of(struct kmeta_image *img, const struct kmeta_insn *in)
{
	const unsigned char *p = kmeta_bytes_at(img, in->addr, in->len);

	return p ? kmeta_jcc_cond(p, in->len) : -1;
}

static void mark_new(struct vfunc *f, uint64_t new, unsigned int len)
{
	uint64_t off = new - f->sym->addr;

	for (unsigned int k = 0; k < len && off + k < f->sym->size; k++)
		f->cover[off + k] = k ? 2 : 1;
}

/* An absolute address: relocated pointers in data (computed-goto tables), push $label */
static bool is_abs_reloc(uint32_t type)
{
	return type == R_X86_64_64 || type == R_X86_64_32 || type == R_X86_64_32S;
}

static unsigned int abs_reloc_width(const struct kmeta_reloc *r)
{
	return r->type == R_X86_64_64 ? 8 : 4;
}

/*
 * The offset in i of the absolute relocation whose field holds byte k, -1 if none: the
 * new address may share its first bytes with the old one (a label moved by a multiple
 * of 256), so the first byte that differs can be inside the field
 */
static int abs_reloc_covering(struct kmeta_image *img, const struct kmeta_insn *i,
			      unsigned int k, struct kmeta_reloc *r)
{
	for (int s = k; s >= 0 && s + 8 > (int)k; s--)
		if (kmeta_reloc_at(img, i->addr + s, r) && is_abs_reloc(r->type) &&
		    s + abs_reloc_width(r) > k)
			return s;
	return -1;
}

/*
 * Same instruction up to the displacement: the bytes outside the rel field equal, the
 * targets corresponding (pushed to be checked).  Abs fields that differ must be
 * relocated in the old image and map too.
 */
static bool same_insn(struct walker *w, struct vfunc *f, const struct kmeta_insn *i,
		      const struct kmeta_insn *j)
{
	struct verifier *v = w->v;
	const unsigned char *p = kmeta_bytes_at(v->a, i->addr, i->len);
	const unsigned char *q = kmeta_bytes_at(v->b, j->addr, j->len);

	if (!p || !q || i->len != j->len || i->rel_off != j->rel_off || i->rel_size != j->rel_size)
		return false;
	for (unsigned int k = 0; k < i->len; k++) {
		struct kmeta_reloc r;
		uint64_t to;
		int s;

		if (i->rel_size && k >= i->rel_off && k < i->rel_off + i->rel_size)
			continue;
		if (p[k] == q[k])
			continue;
		/* an absolute address of code (push $label): where it leads must correspond */
		s = abs_reloc_covering(v->a, i, k, &r);
		if (s < 0 || get_u32(p + s) != (uint32_t)r.target)
			return false;
		if (r.type == R_X86_64_64)
			to = get_u64(q + s);
		else if (r.type == R_X86_64_32S)
			to = (uint64_t)(int64_t)(int32_t)get_u32(q + s);
		else
			to = get_u32(q + s);
		push_target(w, f, r.target, to);
		k = s + abs_reloc_width(&r) - 1;
	}
	if (i->rel_size)
		push_target(w, f, i->target, j->target);
	return true;
}

/*
 * A direct jmp is e9 or eb after prefixes (cs, ds, operand size, REX): decode only
 * those.  Most instructions start with a REX prefix, so the byte after counts too.
 */
static bool may_be_jmp(struct kmeta_image *img, uint64_t addr)
{
	for (int k = 0; k < 4; k++) {
		const unsigned char *p = kmeta_bytes_at(img, addr + k, 1);

		if (!p)
			return false;
		if (*p == 0xe9 || *p == 0xeb)
			return true;
		if (*p != 0x2e && *p != 0x3e && *p != 0x66 && (*p & 0xf0) != 0x40)
			return false;
	}
	return true;	/* four prefixes: let the decoder say */
}

/*
 * Where control goes from addr of img (inside f) once plain jmps are followed: jmps
 * are what a layout adds and removes, so the walk compares code modulo them.  A jmp at
 * a table site, relocated, or leaving f is code, not layout.  Followed jmps are marked
 * in mark (new: cover) and, for the new image, returned in jmps[] for the ORC check.
 * (Relocations are looked up in the old image only: a relocated jmp inside its own
 * function does not occur, and if it did the two sides would disagree, not pass.)
 */
static uint64_t follow(struct verifier *v, struct kmeta_image *img, struct vfunc *f,
		       uint64_t addr, bool new, bool mark, uint64_t *jmps, size_t *nr_jmps)
{
	uint64_t end = f->sym->addr + f->sym->size;

	*nr_jmps = 0;
	for (int k = 0; k < MAX_FOLLOW; k++) {
		struct kmeta_reloc r;
		struct kmeta_insn in;

		if (!may_be_jmp(img, addr))
			return addr;
		if (kmeta_insn_decode(img, addr, &in) || in.kind != KI_JMP ||
		    in.target < f->sym->addr || in.target >= end || in.target == addr ||
		    in_set(sites_of(v, new), SITES_ANY, addr) ||
		    (!new && kmeta_reloc_at(img, addr + in.rel_off, &r)))
			return addr;
		if (mark && new)
			mark_new(f, addr, in.len);
		else if (mark)
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

/*
 * A jump-label site stays what arch_jump_label_transform() expects to find: the
 * kernel's 2- or 5-byte nop, or a jmp of 2 or 5 bytes (eb, e9), as it was; a nop may
 * widen from 2 to 5 bytes (a layout that moves the target out of rel8's reach), never
 * narrow.  A jmp's target is checked as a branch's (step()).
 */
static bool same_jump_label(struct verifier *v, const struct kmeta_insn *i,
			    const struct kmeta_insn *j)
{
	static const unsigned char nop2[] = { 0x66, 0x90 };
	static const unsigned char nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };
	const unsigned char *q = kmeta_bytes_at(v->b, j->addr, j->len);

	if (!q || j->len < i->len || (j->len != 2 && j->len != 5))
		return false;
	if (i->kind == KI_JMP)
		return j->kind == KI_JMP && (q[0] == 0xeb || q[0] == 0xe9);
	return j->kind != KI_JMP && !memcmp(q, j->len == 2 ? nop2 : nop5, j->len);
}

/* One step of the walk: the old code at o against the new code at n */
static void step(struct walker *w, struct vfunc *f, uint64_t o, uint64_t n)
{
	struct verifier *v = w->v;
	uint64_t end = f->sym->addr + f->sym->size, off, jo[MAX_FOLLOW], jn[MAX_FOLLOW];
	uint64_t oend = old_end(f);
	const struct kmeta_range *ra, *rb;
	struct kmeta_insn i, j;
	struct kmeta_reloc r;
	size_t nr_jo, nr_jn;
	int ci, cj;

	if (n < f->sym->addr || n >= end) {
		verify_fail(v, o, "continues outside its function in the new code, at 0x%" PRIx64, n);
		return;
	}
	o = follow(v, v->a, f, o, false, true, jo, &nr_jo);
	n = follow(v, v->b, f, n, true, true, jn, &nr_jn);
	for (size_t k = 0; k < nr_jn; k++)
		if (!same_state(orc_state(v, true, jn[k]), orc_state(v, false, o)))
			verify_fail(v, o, "ORC state at the jmp at new +0x%" PRIx64 " differs",
			     jn[k] - f->sym->addr);
	off = o - f->sym->addr;
	if (f->map[off] != UNMAPPED) {
		if (f->sym->addr + f->map[off] != n)
			verify_fail(v, o, "reached at two new places, +0x%x and +0x%" PRIx64,
			     f->map[off], n - f->sym->addr);
		return;
	}
	if (kmeta_insn_decode(v->a, o, &i) || decode_new(v, &i, n, &j)) {
		verify_fail(v, o, "no instruction at its new place 0x%" PRIx64, n);
		return;
	}
	ra = site_at(v->sites_a, v->nr_sites_a, o);
	if (ra) {	/* a patch site: the same unit, its branches re-targeted */
		rb = site_at(v->sites_b, v->nr_sites_b, n);
		if (!rb || rb->end - rb->start != ra->end - ra->start) {
			verify_fail(v, o, "patch site not found at its new place");
			return;
		}
		for (uint64_t k = 0; k < ra->end - ra->start; k++) {
			f->map[off + k] = n - f->sym->addr + k;
			f->olen[off + k] = ra->end - ra->start - k;
		}
		w->walked++;
		for (uint64_t a = o; a < ra->end; a += i.len) {
			if (kmeta_insn_decode(v->a, a, &i) ||
			    kmeta_insn_decode(v->b, n + (a - o), &j) || !same_insn(w, f, &i, &j)) {
				verify_fail(v, a, "patch site content differs");
				return;
			}
		}
		mark_new(f, n, ra->end - ra->start);
		if (ra->end < oend)
			walk_push(w, ra->end, n + (ra->end - ra->start));
		return;
	}
	f->map[off] = n - f->sym->addr;
	f->olen[off] = i.len;
	w->walked++;
	mark_new(f, n, j.len);
	if (in_set(&v->sets_a, SITES_JL, o)) {	/* nop or jmp, 2 or 5 bytes; target: table */
		if (!in_set(&v->sets_b, SITES_JL, n) || !same_jump_label(v, &i, &j))
			verify_fail(v, o, "jump-label site differs");
		else if (o + i.len < oend)
			walk_push(w, o + i.len, n + j.len);
		if (i.kind == KI_JMP && j.kind == KI_JMP)	/* it runs as it is until toggled */
			push_target(w, f, i.target, j.target);
		return;
	}
	ci = i.kind == KI_JCC ? cond_of(v->a, &i) : -1;
	cj = j.kind == KI_JCC ? cond_of(v->b, &j) : -1;
	if (ci >= 0 && i.target >= f->sym->addr && i.target < oend && cj >= 0 &&
	    !kmeta_reloc_at(v->a, o + i.rel_off, &r)) {
		if (ci != cj && (ci ^ 1) != cj) {
			verify_fail(v, o, "conditional branch differs");
			return;
		}
		walk_push(w, ci == cj ? i.target : o + i.len, j.target);
		walk_push(w, ci == cj ? o + i.len : i.target, n + j.len);
		return;
	}
	if (!same_insn(w, f, &i, &j)) {
		verify_fail(v, o, "instruction differs from the old one");
		return;
	}
	if (verify_insn_never_resumes(kmeta_bytes_at(v->a, o, i.len), i.len,
				      in_set(&v->sets_a, SITES_WARN, o)))
		return;	/* the verifier's own rule: whatever may resume is followed */
	if (o + i.len < oend)
		walk_push(w, o + i.len, n + j.len);
}

static void walk(struct walker *w, struct vfunc *f)
{
	while (w->nr_work) {
		struct pair p = w->work[--w->nr_work];

		step(w, f, p.old, p.new);
	}
}

/* The slot of the first key at site, -1 if none */
static long slot_at_site(const struct slot_key *k, size_t nr, uint64_t site)
{
	size_t i = lower_bound_u64(k, nr, sizeof(*k), offsetof(struct slot_key, site), site);

	return i < nr && k[i].site == site ? (long)k[i].slot : -1;
}

/*
 * Are old and new the same place, modulo followed jmps?  While the walk runs (mark),
 * the jmps followed count as reached for verify_coverage().
 */
static bool same_place(struct verifier *v, uint64_t old, uint64_t new, bool mark)
{
	struct vfunc *f = vfunc_containing(v, old);
	uint64_t jmps[MAX_FOLLOW], o, n;
	size_t nr;

	if (!f)
		return old == new;
	if (new < f->sym->addr || new >= f->sym->addr + f->sym->size)
		return false;
	o = follow(v, v->a, f, old, false, mark, jmps, &nr);
	n = follow(v, v->b, f, new, true, mark, jmps, &nr);
	return f->map[o - f->sym->addr] == n - f->sym->addr;
}

bool equiv(struct verifier *v, uint64_t old, uint64_t new)
{
	return same_place(v, old, new, false);
}

/* Walk (old, new) as a root unless old is already known to go there */
static size_t add_root(struct verifier *v, uint64_t old, uint64_t new)
{
	struct vfunc *f = vfunc_containing(v, old);
	size_t before = v->walk.walked;

	if (!f) {
		if (old != new)
			verify_fail(v, old, "referenced as 0x%" PRIx64 " but not in rewritten code", new);
		return 0;
	}
	if (same_place(v, old, new, true))
		return 0;
	walk_push(&v->walk, old, new);
	walk(&v->walk, f);
	return v->walk.walked - before;
}

/* Root candidates, gathered once: pairs of old and new code addresses */
struct roots {
	struct pair *v;
	size_t nr, cap;
	/* sorted tables: old entries into rewritten code, new slots by site */
	struct sorted_roots {
		struct kmeta_table *ta, *tb;
		struct kmeta_entry *old;
		struct slot_key *new;	/* whole entries would take 140 bytes a slot */
		size_t nr_old, nr_new;
	} *sorted;
	size_t nr_sorted;
};

static void add_pair(struct verifier *v, struct roots *r, uint64_t old, uint64_t new)
{
	if (!vfunc_containing(v, old))
		return;		/* verify_tables() and verify_relocs() check those */
	GROW(r->v, r->cap, r->nr + 1);
	r->v[r->nr++] = (struct pair){ old, new };
}

/* Code fields of tables whose slots correspond one to one */
static void pairs_from_slots(struct verifier *v, struct roots *r, struct kmeta_table *ta,
			     struct kmeta_table *tb)
{
	struct kmeta_entry ea, eb;

	for (size_t k = 0; k < ta->nr_slots; k++) {
		if (kmeta_table_read_entry(ta, k, &ea) || kmeta_table_read_entry(tb, k, &eb))
			continue;
		for (unsigned int i = 0; i < TABLE_MAX_FIELDS && ta->layout->fields[i].name; i++)
			if (ta->layout->fields[i].role == FR_CODE)
				add_pair(v, r, ea.val[i], eb.val[i]);
	}
}

/* Sorted tables: the old entries in rewritten code, and all new ones by site */
static void entries_of_sorted(struct verifier *v, struct roots *r, struct kmeta_table *ta,
			      struct kmeta_table *tb)
{
	struct sorted_roots *s;
	struct kmeta_entry e;

	r->sorted = xrealloc(r->sorted, (r->nr_sorted + 1) * sizeof(*r->sorted));
	s = &r->sorted[r->nr_sorted++];
	*s = (struct sorted_roots){ .ta = ta, .tb = tb,
				    .new = xcalloc(tb->nr_slots, sizeof(*s->new)),
				    .old = xcalloc(ta->nr_slots, sizeof(e)) };
	for (size_t k = 0; k < tb->nr_slots; k++)
		if (!kmeta_table_read_entry(tb, k, &e))
			s->new[s->nr_new++] = (struct slot_key){ e.site, k };
	sort_by_u64_key(s->new, s->nr_new, sizeof(*s->new), offsetof(struct slot_key, site));
	for (size_t k = 0; k < ta->nr_slots; k++)
		if (!kmeta_table_read_entry(ta, k, &e) && vfunc_containing(v, e.site))
			s->old[s->nr_old++] = e;
}

/* An old entry's partner is the new one at its mapped site, once the walk knows it */
static size_t roots_from_sorted(struct verifier *v, const struct sorted_roots *s)
{
	const struct layout *l = s->ta->layout;
	size_t n = 0;

	for (size_t k = 0; k < s->nr_old; k++) {
		const struct kmeta_entry *ea = &s->old[k];
		struct kmeta_entry m;
		uint64_t site;
		long slot;

		if (!vmap(v, ea->site, &site))
			continue;
		slot = slot_at_site(s->new, s->nr_new, site);
		if (slot < 0 || kmeta_table_read_entry(s->tb, slot, &m))
			continue;
		for (unsigned int i = 0; i < TABLE_MAX_FIELDS && l->fields[i].name; i++)
			if (l->fields[i].role == FR_CODE)
				n += add_root(v, ea->val[i], m.val[i]);
	}
	return n;
}

/*
 * Relocated pointers to code: in data (computed-goto tables and the like), and in code
 * the absolute ones (push $label, mov $label), whose address the walk follows only
 * where the instruction's bytes changed: sync_core()'s "push $1f; iretq; 1:" keeps
 * them when 1: does not move, and nothing else reaches 1: (pc-relative fields are the
 * walk's: branches and %rip operands)
 */
static void pairs_from_rela(struct verifier *v, struct kmeta_sec *rsb, struct kmeta_sec *target,
			    const unsigned char *ra, const unsigned char *rb, uint64_t nr,
			    void *arg)
{
	bool code = target->flags & SHF_EXECINSTR;

	/* a runtime constant's slot points at the immediate inside its instruction: no
	 * code starts there (verify_relocs() checks that it moved with its instruction) */
	if (is_own_pass_sec(v, target) || (v->sec_rewrite[target->idx] & TR_SITE_IN_INSN))
		return;
	for (uint64_t k = 0; k < nr; k++) {
		uint64_t info = get_u64(ra + 24 * k + 8), s, old;

		if ((uint32_t)info == R_X86_64_NONE || (info >> 32) >= v->a->nr_syms ||
		    (code && !is_abs_reloc((uint32_t)info)))
			continue;
		s = v->a->syms[info >> 32].addr;
		old = s + get_u64(ra + 24 * k + 16);
		if (!vfunc_containing(v, old))
			continue;	/* verify_tables() and verify_relocs() check those */
		/* stale (a table sorted after linking): says nothing of the code */
		if (!kmeta_reloc_holds(v->a, (uint32_t)info, old, get_u64(ra + 24 * k)))
			continue;
		add_pair(v, arg, old, s + get_u64(rb + 24 * k + 16));
	}
}

static void pairs_from_relocs(struct verifier *v, struct roots *r)
{
	for_each_rela_pair(v, pairs_from_rela, r);
}

static void gather_roots(struct verifier *v, struct roots *r)
{
	pairs_from_relocs(v, r);
	for (unsigned int d = 0; d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *ta = kmeta_table_get(v->a, kmeta_table_descs[d]);
		struct kmeta_table *tb = kmeta_table_get(v->b, kmeta_table_descs[d]);

		if (!ta || !tb || !ta->present || ta->nr_slots != tb->nr_slots ||
		    kmeta_table_has(ta, TR_OWN_PASS))
			continue;
		if (kmeta_table_sorted(ta))
			entries_of_sorted(v, r, ta, tb);
		else
			pairs_from_slots(v, r, ta, tb);
	}
}

static void roots_free(struct roots *r)
{
	for (size_t k = 0; k < r->nr_sorted; k++) {
		free(r->sorted[k].old);
		free(r->sorted[k].new);
	}
	free(r->sorted);
	free(r->v);
}

/* A range of old code that is not rewritten, decoded ahead (in parallel) */
struct decoded_range {
	uint64_t start, end;
	struct kmeta_insn *insns;
	size_t nr;
	int err;
};

struct decode_ahead {
	struct kmeta_image *img;
	struct decoded_range *r;
};

static void decode_ahead_item(void *arg, size_t k, unsigned int worker)
{
	struct decode_ahead *d = arg;
	struct decoded_range *r = &d->r[k];
	uint64_t bad;

	r->err = kmeta_insn_decode_range(d->img, r->start, r->end, &r->insns, &r->nr, &bad);
}

/* Branches and %rip operands of code that is not rewritten, old and new side by side */
static size_t roots_from_range(struct verifier *v, const struct decoded_range *r)
{
	uint64_t start = r->start, end = r->end;
	const unsigned char *p = kmeta_bytes_at(v->a, start, end - start);
	const unsigned char *q = kmeta_bytes_at(v->b, start, end - start);
	struct kmeta_insn j;
	size_t n = 0;

	if (end <= start || !p || !q || r->err)
		return 0;
	for (size_t k = 0; k < r->nr; k++) {
		const struct kmeta_insn *i = &r->insns[k];
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
			verify_fail(v, i->addr, "code outside rewritten functions changed");
			break;
		}
		n += add_root(v, i->target, j.target);
	}
	return n;
}

struct scan_hits {
	struct verifier *v;
	/*
	 * Per function of the old image: where the code that may point in ends (the
	 * last hit's instruction, at most 15 bytes long, ends before), 0 if none
	 */
	uint64_t *upto;
	/*
	 * at (old) -> target (old): the hits outside any function, and those inside one,
	 * which its decode covers unless bytes capstone does not know stop it first
	 */
	struct pair *orphans;
	size_t nr_orphans, cap;
};

/* Bytes at `at` may encode a reference into rewritten code: decode what holds them */
static void scan_hit(void *ctx, uint64_t at, uint64_t target)
{
	struct scan_hits *h = ctx;
	struct verifier *v = h->v;
	long g;

	if (vfunc_containing(v, at) || kmeta_is_alt_code(v->a, at))
		return;		/* walked, or decoded whole */
	g = func_index(v->a, at);
	if (g >= 0 && at + 16 > h->upto[g])
		h->upto[g] = at + 16;
	GROW(h->orphans, h->cap, h->nr_orphans + 1);
	h->orphans[h->nr_orphans++] = (struct pair){ at, target };
}

/*
 * Is the hit at `at` in code a decode of its whole function covers (roots_from_range()
 * follows what it points at)?  Not in bytes outside any function, nor past bytes of a
 * function that capstone does not know.
 */
static bool decoded_whole(struct verifier *v, uint64_t at)
{
	struct kmeta_sym *g = kmeta_find_func_containing(v->a, at);
	const struct kmeta_func_insns *fi = g ? kmeta_func_decode(v->a, g) : NULL;

	return fi && (!fi->bad_addr || at < fi->bad_addr);
}

/*
 * Code no decode of a whole function covers (an assembler symbol such as
 * ret_from_fork_asm, bytes past what capstone knows, bytes no symbol covers) may point
 * at what moved.  A linear sweep from the start of the symbol that holds it may show
 * it does not: the hit inside an instruction, or an instruction that leads elsewhere.
 * Otherwise, or where nothing says where instructions start, what it may point at
 * must not have moved.
 */
static void check_orphans(struct verifier *v, const struct scan_hits *h)
{
	for (size_t k = 0; k < h->nr_orphans; k++) {
		uint64_t at = h->orphans[k].old, target = h->orphans[k].new, to;

		if (decoded_whole(v, at) || !kmeta_swept_may_ref(v->a, at, target))
			continue;
		/* into the middle of an old instruction: not a reference after all */
		if (kmeta_is_insn_boundary(v->a, target) == 0)
			continue;
		if (!vmap(v, target, &to) || to != target)
			verify_fail(v, target, "may be referenced from code that no function's "
				    "decode covers, at 0x%" PRIx64, at);
	}
}

/*
 * Alternative replacements and .altinstr_aux, decoded whole; and of the functions left
 * as they were, those that scan_unmoved() found may point into rewritten code, from
 * their start to their last such place (their bytes are the same in both images: one
 * decoding serves both).  Aliases are one function: a hit names the last of them.
 */
static size_t roots_from_unmoved(struct verifier *v, struct scan_hits *h)
{
	struct decode_ahead d = { .img = v->a };
	struct kmeta_range *alt;
	size_t n = 0, nr_alt = 0, nr = 0;

	if (kmeta_alt_code_ranges(v->a, &alt, &nr_alt))
		verify_fail(v, 0, "cannot read the alternatives' replacements");
	d.r = xcalloc(nr_alt + v->a->nr_funcs + 1, sizeof(*d.r));
	for (size_t k = 0; k < nr_alt; k++)
		d.r[nr++] = (struct decoded_range){ .start = alt[k].start, .end = alt[k].end };
	for (size_t i = 0, j; i < v->a->nr_funcs; i = j) {
		uint64_t start = v->a->funcs[i]->addr, end = 0, upto = 0;

		for (j = i; j < v->a->nr_funcs && v->a->funcs[j]->addr == start; j++) {
			if (start + v->a->funcs[j]->size > end)
				end = start + v->a->funcs[j]->size;
			if (h->upto[j] > upto)
				upto = h->upto[j];
		}
		if (upto)
			d.r[nr++] = (struct decoded_range){ .start = start,
							    .end = upto < end ? upto : end };
	}
	parallel_for(nr, decode_ahead_item, &d);
	release_code(v->a);
	for (size_t k = 0; k < nr; k++) {
		n += roots_from_range(v, &d.r[k]);
		free(d.r[k].insns);
	}
	free(d.r);
	free(alt);
	return n;
}

/* What the scan says may point into rewritten code, in h: its parts in parallel */
static void scan_unmoved(struct verifier *v, struct scan_hits *h)
{
	int err = parallel_scan_rel_refs(v->a, v->spans, v->nr_f, scan_hit, h);

	if (err)
		verify_fail(v, 0, "cannot scan the code for references: %s", strerror(-err));
}

struct entry_walks {
	struct verifier *v;
	struct walker *w;	/* one per worker */
};

static void walk_entry(void *arg, size_t k, unsigned int worker)
{
	struct entry_walks *e = arg;
	struct walker *w = &e->w[worker];

	walk_push(w, e->v->f[k].sym->addr, e->v->f[k].sym->addr);
	walk(w, &e->v->f[k]);
}

static int cmp_pair(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;

	if (a->old != b->old)
		return a->old < b->old ? -1 : 1;
	return a->new < b->new ? -1 : a->new > b->new;
}

/*
 * Every rewritten function from its entry, in parallel: each walk writes only its
 * function's maps.  The targets they found outside their functions are gathered in
 * address order, whichever thread found them.
 */
static void walk_entries(struct verifier *v)
{
	unsigned int nr = parallel_nr_workers();
	struct entry_walks e = { .v = v, .w = xcalloc(nr, sizeof(*e.w)) };
	struct walker *all = &v->walk;

	for (unsigned int k = 0; k < nr; k++)
		e.w[k].v = v;
	parallel_for(v->nr_f, walk_entry, &e);
	for (unsigned int k = 0; k < nr; k++) {
		GROW(all->ext, all->ext_cap, all->nr_ext + e.w[k].nr_ext);
		if (e.w[k].nr_ext)	/* a worker that found none has no array */
			memcpy(all->ext + all->nr_ext, e.w[k].ext, e.w[k].nr_ext * sizeof(*all->ext));
		all->nr_ext += e.w[k].nr_ext;
		all->walked += e.w[k].walked;
		free(e.w[k].work);
		free(e.w[k].ext);
	}
	sort_array(all->ext, all->nr_ext, sizeof(*all->ext), cmp_pair);
	free(e.w);
}

void verify_walk(struct verifier *v)
{
	struct scan_hits h = { .v = v, .upto = xcalloc(v->a->nr_funcs + 1, sizeof(*h.upto)) };
	struct roots r = { 0 };
	size_t n;

	scan_unmoved(v, &h);
	walk_entries(v);
	roots_from_unmoved(v, &h);
	gather_roots(v, &r);
	do {	/* roots can reach code that makes more roots resolvable */
		n = 0;
		for (size_t k = 0; k < r.nr; k++)
			n += add_root(v, r.v[k].old, r.v[k].new);
		for (size_t k = 0; k < v->walk.nr_ext; k++)	/* branches between functions */
			n += add_root(v, v->walk.ext[k].old, v->walk.ext[k].new);
		for (size_t k = 0; k < r.nr_sorted; k++)
			n += roots_from_sorted(v, &r.sorted[k]);
	} while (n);
	check_orphans(v, &h);
	roots_free(&r);
	free(h.upto);
	free(h.orphans);
}

/*
 * Every old instruction reached by the walk, or padding, or inside a patch site, taken
 * in the order a linear sweep decodes them: the length of one the walk reached is the
 * walk's, so only the others are decoded again
 */
static void check_old_reached(struct verifier *v, const struct vfunc *f)
{
	for (uint64_t off = 0; off < f->sym->size;) {
		uint64_t at = f->sym->addr + off;
		const unsigned char *p;
		struct kmeta_insn in;

		if (f->olen[off]) {
			off += f->olen[off];
			continue;
		}
		p = kmeta_bytes_at(v->a, at, 1);
		if (kmeta_insn_decode(v->a, at, &in)) {
			verify_fail(v, at, "old code that does not decode, and the walk did not reach");
			return;
		}
		if (!(in.flags & KIF_NOP) && !(p && p[0] == 0xcc) &&
		    !kmeta_is_inside_patch_site(v->a, at))
			verify_fail(v, at, "old instruction not found in the new code");
		off += in.len;
	}
}

/*
 * Every old instruction reached or padding; every new byte reached or int3, or in the
 * padding after the function as it was (a function only re-targeted keeps its padding)
 */
void verify_coverage(struct verifier *v)
{
	for (size_t k = 0; k < v->nr_f; k++) {
		struct vfunc *f = &v->f[k];
		const unsigned char *p = kmeta_bytes_at(v->a, f->sym->addr, f->sym->size);
		const unsigned char *q = kmeta_bytes_at(v->b, f->sym->addr, f->sym->size);
		uint64_t body = kmeta_elf_size(f->sym);

		check_old_reached(v, f);
		for (uint64_t off = 0; off < f->sym->size; off++)
			if (!f->cover[off] && q[off] != 0xcc && (off < body || q[off] != p[off]))
				verify_fail(v, f->sym->addr, "new byte at +0x%" PRIx64 " is neither a walked "
				     "instruction nor int3 fill", off);
	}
}

void verify_branches(struct verifier *v)
{
	const struct walker *w = &v->walk;

	for (size_t k = 0; k < w->nr_ext; k++) {
		if (!same_place(v, w->ext[k].old, w->ext[k].new, true))
			verify_fail(v, w->ext[k].old, "referenced as 0x%" PRIx64 " in the new code",
				    w->ext[k].new);
	}
}
