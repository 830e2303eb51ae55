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
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kmeta/table.h"
#include "../kmeta/util.h"
#include "parallel.h"
#include "verify.h"
#include "verify_internal.h"

void verify_fail(struct verifier *v, uint64_t addr, const char *fmt, ...)
{
	char where[KMETA_ADDR_STR_SIZE], msg[512];
	va_list ap;

	if (v->errors++ >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!addr)	/* the image as a whole: address 0 would read as a per-cpu symbol */
		pr_err(v->b->path, "verify: %s", msg);
	else
		pr_err(v->b->path, "verify: %s: %s",
		       kmeta_addr_str(v->a, addr, where, sizeof(where)), msg);
}

struct vfunc *vfunc_containing(struct verifier *v, uint64_t addr)
{
	size_t past = upper_bound_u64(v->spans, v->nr_f, sizeof(*v->spans),
				      offsetof(struct kmeta_range, start), addr);

	return past && addr < v->spans[past - 1].end ? &v->f[past - 1] : NULL;
}

/* Old address -> new, through the walks; identity outside rewritten functions */
bool vmap(struct verifier *v, uint64_t addr, uint64_t *out)
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
bool vmap_place(struct verifier *v, uint64_t addr, uint64_t *out)
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

bool same_state(const unsigned char *x, const unsigned char *y)
{
	return x == y || (x && y && !memcmp(x, y, ORC_SIZE));
}

const unsigned char *orc_state(struct verifier *v, bool new, uint64_t addr)
{
	if (!v->orc_a || !v->orc_b)
		return NULL;
	return new ? kmeta_orc_state(v->orc_b, v->orc_eb, v->nr_orc, addr)
		   : kmeta_orc_state(v->orc_a, v->orc_ea, v->nr_orc, addr);
}

static void add_site(struct site_set *s, uint64_t site)
{
	GROW(s->v, s->cap, s->nr + 1);
	s->v[s->nr++] = site;
}

/* One pass over the tables (but ORC, whose sites are every instruction) for all kinds */
static void build_sets(struct site_sets *ss, struct kmeta_image *img)
{
	for (unsigned int d = 0; d < nr_table_descs; d++) {
		struct kmeta_table *t = table_get(img, table_descs[d]);
		bool jl = !strcmp(table_descs[d]->name, "jump_table");
		bool bug = !strcmp(table_descs[d]->name, "bug_table");
		struct kmeta_entry e;

		if (!t || !t->present || !strcmp(table_descs[d]->name, "orc"))
			continue;
		for (size_t k = 0; k < t->nr_slots; k++) {
			if (table_read_entry(t, k, &e) || e.filler)
				continue;
			add_site(&ss->kind[SITES_ANY], e.site);
			if (jl)
				add_site(&ss->kind[SITES_JL], e.site);
			if (bug && (e.val[3] & 1))	/* BUGFLAG_WARNING: execution goes on */
				add_site(&ss->kind[SITES_WARN], e.site);
		}
	}
	for (int k = 0; k < SITES_NR; k++)
		sort_by_u64_key(ss->kind[k].v, ss->kind[k].nr, sizeof(uint64_t), 0);
}

static void free_sets(struct site_sets *ss)
{
	for (int k = 0; k < SITES_NR; k++)
		free(ss->kind[k].v);
}

bool in_set(const struct site_sets *ss, enum site_kind kind, uint64_t addr)
{
	const struct site_set *s = &ss->kind[kind];
	size_t i = lower_bound_u64(s->v, s->nr, sizeof(*s->v), 0, addr);

	return i < s->nr && s->v[i] == addr;
}

const struct site_sets *sites_of(const struct verifier *v, bool new)
{
	return new ? &v->sets_b : &v->sets_a;
}

/* Index in img->funcs of the function containing addr, -1 if none */
long func_index(struct kmeta_image *img, uint64_t addr)
{
	long i = kmeta_func_at_or_before(img, addr);

	if (i < 0 || addr >= img->funcs[i]->addr + img->funcs[i]->size)
		return -1;
	return i;
}

void for_each_rela_pair(struct verifier *v, rela_pair_fn fn, void *arg)
{
	for (size_t i = 1; i < v->a->nr_secs; i++) {
		struct kmeta_sec *rsa = &v->a->secs[i], *target = kmeta_rela_target(v->a, rsa);
		const unsigned char *ra, *rb;
		uint64_t sa = 0, sb = 0;

		if (!target)
			continue;
		ra = rela_bytes(v->a, rsa, &sa);
		rb = rela_bytes(v->b, &v->b->secs[i], &sb);
		if (!ra || !rb || (sa != sb && strcmp(target->name, ".orc_unwind_ip"))) {
			verify_fail(v, 0, "%s: cannot compare", rsa->name);
			continue;
		}
		fn(v, &v->b->secs[i], target, ra, rb, sa / 24, arg);
		/* each pass streams through them: hold none of them in memory between */
		kmeta_release_sec(v->a, rsa);
		kmeta_release_sec(v->b, &v->b->secs[i]);
		kmeta_release_sec(v->a, target);
		kmeta_release_sec(v->b, &v->b->secs[target->idx]);
	}
}

static void mark_moved(struct verifier *v, struct kmeta_sec *rsb, struct kmeta_sec *target,
		       const unsigned char *ra, const unsigned char *rb, uint64_t nr, void *arg)
{
	unsigned char *marks = arg;

	if (!(target->flags & SHF_EXECINSTR))
		return;
	for (uint64_t k = 0; k < nr; k++) {
		uint64_t p = get_u64(ra + 24 * k);
		long f;

		if (p != get_u64(rb + 24 * k) && (f = func_index(v->a, p)) >= 0)
			marks[f] = 1;
	}
}

/* Functions with relocations that moved: their bytes may still be equal (equal blocks) */
static void mark_moved_relocs(struct verifier *v, unsigned char *marks)
{
	for_each_rela_pair(v, mark_moved, marks);
}

/* Code read whole, for now (the walk reads back what it needs) */
void release_code(struct kmeta_image *img)
{
	for (size_t i = 1; i < img->nr_secs; i++)
		if (img->secs[i].flags & SHF_EXECINSTR)
			kmeta_release_sec(img, &img->secs[i]);
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
	v->spans = xmalloc((v->nr_f + 1) * sizeof(*v->spans));
	for (size_t k = 0; k < v->nr_f; k++)
		v->spans[k] = (struct kmeta_range){ v->f[k].sym->addr,
						    v->f[k].sym->addr + v->f[k].sym->size };
	free(marks);
	release_code(v->a);
	release_code(v->b);
}

int cmp_entry_site(const void *x, const void *y)
{
	const struct kmeta_entry *a = x, *b = y;

	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	for (int i = 0; i < TABLE_MAX_FIELDS; i++)
		if (a->val[i] != b->val[i])
			return a->val[i] < b->val[i] ? -1 : 1;
	return 0;
}

const unsigned char *rela_bytes(struct kmeta_image *img, struct kmeta_sec *sec,
				       uint64_t *size)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(sec->scn, &sh) || sh.sh_offset + sh.sh_size > img->map_size ||
	    sh.sh_entsize != 24)
		return NULL;
	*size = sh.sh_size;
	return img->map + sh.sh_offset;
}

void verifier_free(struct verifier *v)
{
	if (!v)
		return;
	for (size_t k = 0; k < v->nr_f; k++) {
		free(v->f[k].map);
		free(v->f[k].olen);
		free(v->f[k].cover);
	}
	free(v->f);
	free(v->spans);
	free(v->walk.work);
	free(v->walk.ext);
	free(v->orc_a);
	free(v->orc_b);
	free_sets(&v->sets_a);
	free_sets(&v->sets_b);
	kmeta_close(v->a);
	kmeta_close(v->b);
	free(v);
}

/*
 * What the proof needs of the original alone: it depends on nothing the optimizer
 * does, so kbolt optimize has it made while it works (another thread, other memory).
 */
struct verifier *verify_prepare(const char *orig)
{
	struct verifier *v = xcalloc(1, sizeof(*v));

	v->walk.v = v;
	v->a = kmeta_open(orig);
	if (v->a)
		kmeta_claim_padding(v->a);	/* as optimize did: functions may fill it */
	if (!v->a || kmeta_patch_sites(v->a, &v->sites_a, &v->nr_sites_a)) {
		verifier_free(v);
		return NULL;
	}
	v->orc_a_missing = kmeta_orc_read(v->a, &v->orc_a, &v->orc_ea, &v->nr_orc) != 0;
	build_sets(&v->sets_a, v->a);
	return v;
}

/*
 * The checks that need the walk's whole map, all only reading it: item 0 the coverage,
 * values, ORC and tables (verify_values() decodes the original through kmeta's cache,
 * which is not for threads: no other item may use it), each other item a run of
 * relocations
 */
struct map_checks {
	struct verifier *v;
	struct reloc_checks *rc;
};

static void check_with_map(void *arg, size_t k, unsigned int worker)
{
	struct map_checks *c = arg;

	if (k) {
		verify_relocs_chunk(c->rc, k - 1);
		return;
	}
	verify_coverage(c->v);
	verify_values(c->v);
	verify_orc(c->v);
	verify_tables(c->v);
}

int verify_run(struct verifier *v, const char *new, const struct verify_report *rep)
{
	struct map_checks checks = { .v = v };
	size_t nr_orc_b = 0;
	int err;

	v->b = kmeta_open(new);
	if (v->b && kmeta_claim_padding_like(v->b, v->a)) {
		pr_err(new, "verify: its function symbols are not those of %s", v->a->path);
		verifier_free(v);
		return 1;
	}
	if (!v->b || kmeta_patch_sites(v->b, &v->sites_b, &v->nr_sites_b)) {
		verifier_free(v);
		return 1;
	}
	if (v->orc_a_missing || kmeta_orc_read(v->b, &v->orc_b, &v->orc_eb, &nr_orc_b) ||
	    nr_orc_b != v->nr_orc) {
		verify_fail(v, 0, "the ORC tables are missing or of different sizes");
		free(v->orc_b);	/* the checks read both tables with v->nr_orc slots */
		v->orc_b = NULL;
	}
	build_sets(&v->sets_b, v->b);
	find_rewritten(v);
	verify_walk(v);
	verify_branches(v);	/* the last to mark code reached */
	checks.rc = verify_relocs_plan(v);
	parallel_for(1 + verify_relocs_nr(checks.rc), check_with_map, &checks);
	verify_relocs_free(checks.rc);
	if (v->errors > MAX_REPORTS)
		pr_err(new, "verify: %zu more problems not shown", v->errors - MAX_REPORTS);
	if (!rep->quiet || v->errors)
		printf("%s: %zu rewritten functions, %zu instructions walked: %s\n",
		       new, v->nr_f, v->walk.walked, v->errors ? "FAILED" : "verified");
	err = v->errors ? 1 : 0;
	if (!err && rep->verified)
		rep->verified(v, rep->arg);
	verifier_free(v);
	return err;
}

int kbolt_verify(const char *orig, const char *new, const struct verify_report *rep)
{
	struct verifier *v = verify_prepare(orig);

	return v ? verify_run(v, new, rep) : 1;
}
