// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier's model, what its passes share (internal.h): reporting a failure at an
 * old address, the rewritten functions and their old -> new maps, ORC states of both
 * images, the sites of each kind, and the pairs of relocation sections.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../kmeta/table.h"
#include "internal.h"

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

/* One pass over the tables (but ORC, whose sites are every instruction: TR_OWN_PASS) */
void build_sets(struct site_sets *ss, struct kmeta_image *img)
{
	for (unsigned int d = 0; d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *t = kmeta_table_get(img, kmeta_table_descs[d]);
		struct kmeta_entry e;

		if (!t || !t->present || kmeta_table_has(t, TR_OWN_PASS))
			continue;
		for (size_t k = 0; k < t->nr_slots; k++) {
			if (kmeta_table_read_entry(t, k, &e) || e.filler)
				continue;
			add_site(&ss->kind[SITES_ANY], e.site);
			if (kmeta_table_has(t, TR_JUMP_LABEL))
				add_site(&ss->kind[SITES_JL], e.site);
			if (kmeta_table_entry_resumes(t, &e))	/* a WARN: execution goes on */
				add_site(&ss->kind[SITES_WARN], e.site);
		}
	}
	for (int k = 0; k < SITES_NR; k++)
		sort_by_u64_key(ss->kind[k].v, ss->kind[k].nr, sizeof(uint64_t), 0);
}

void free_sets(struct site_sets *ss)
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
		if (!ra || !rb || (sa != sb && !is_own_pass_sec(v, target))) {
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

/* Code read whole, for now (the walk reads back what it needs) */
void release_code(struct kmeta_image *img)
{
	for (size_t i = 1; i < img->nr_secs; i++)
		if (img->secs[i].flags & SHF_EXECINSTR)
			kmeta_release_sec(img, &img->secs[i]);
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

bool is_own_pass_sec(const struct verifier *v, const struct kmeta_sec *sec)
{
	return v->sec_rewrite[sec->idx] & TR_OWN_PASS;
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
