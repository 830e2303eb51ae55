// SPDX-License-Identifier: GPL-2.0
/*
 * fix-sites: point the return and retpoline site lists of a kernel that another tool
 * rewrote back at their instructions.  llvm-bolt-19 moves blocks inside functions but
 * leaves .return_sites and .retpoline_sites as they were; at boot the kernel then
 * patches whatever lies at the old offsets, and panics.  Repaired, its output can be
 * booted and measured beside kbolt's (scripts/evaluate).
 *
 * The kernel does not care in which order a site list names its sites, only that it
 * names each qualifying instruction once.  So in every function where some entry no
 * longer passes kmeta's check, the function's entries are given, in slot order, the
 * function's qualifying instructions in address order: those the table's own check
 * hook accepts.  Counts that differ mean the tool added or removed such instructions;
 * that is reported and nothing is written.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/util.h"
#include "../../kmeta/check.h"
#include "../../kmeta/kmeta.h"
#include "../../kmeta/table.h"
#include "../lib/output.h"
#include "../version.h"
#include "fix_sites.h"

static const char *const site_lists[] = { "return_sites", "retpoline_sites" };

struct site_entry {
	uint64_t slot;			/* address of the entry */
	uint64_t site;
	struct kmeta_sym *func;		/* func_of() */
	bool ok;
};

static void count_only(struct check_ctx *c, uint64_t addr, const char *msg)
{
	(void)c, (void)addr, (void)msg;
}

/* Would t's check hook accept an entry naming site? */
static bool site_qualifies(struct kmeta_table *t, uint64_t site)
{
	struct kmeta_entry e = { .site = site };
	struct check_ctx c = { .t = t, .e = &e, .report = count_only };

	t->desc->check(t, &e, &c);
	return !c.nr_violations;
}

static int cmp_by_func(const void *a, const void *b)
{
	const struct site_entry *x = a, *y = b;
	uint64_t fx = x->func ? x->func->addr : 0, fy = y->func ? y->func->addr : 0;

	if (fx != fy)
		return fx < fy ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/*
 * The function an entry belongs to: the one containing its site, else for a stale
 * entry the last one starting before it (a tool that rewrote a function may have
 * given it a smaller size: llvm-bolt does).  A good entry outside every function is
 * left alone.
 */
static struct kmeta_sym *func_of(struct kmeta_image *img, uint64_t site, bool ok)
{
	struct kmeta_sym *f = kmeta_find_func_containing(img, site);
	long i;

	if (f || ok)
		return f;
	i = kmeta_func_at_or_before(img, site);
	return i < 0 ? NULL : img->funcs[i];
}

/* t's entries with their functions, by function then slot; NULL on error */
static struct site_entry *read_sites(struct kmeta_table *t, size_t *nr)
{
	struct site_entry *s = xcalloc(t->nr_slots + 1, sizeof(*s));
	struct kmeta_entry e;

	*nr = 0;
	for (size_t i = 0; i < t->nr_slots; i++) {
		if (kmeta_table_read_entry(t, i, &e)) {
			pr_err(t->img->path, "%s: entry %zu cannot be read", t->desc->name, i);
			free(s);
			return NULL;
		}
		if (e.filler)
			continue;
		s[*nr] = (struct site_entry){ e.addr, e.site, NULL, site_qualifies(t, e.site) };
		s[*nr].func = func_of(t->img, e.site, s[*nr].ok);
		(*nr)++;
	}
	qsort(s, *nr, sizeof(*s), cmp_by_func);
	return s;
}

/* Give the n entries of s (all in one function) the function's qualifying insns */
static int fix_func(struct kmeta_table *t, struct site_entry *s, size_t n)
{
	const struct kmeta_func_insns *fi = kmeta_func_decode(t->img, s->func);
	char where[KMETA_ADDR_STR_SIZE];
	size_t found = 0;
	uint64_t *q = xcalloc(n, sizeof(*q));
	int err = 0;

	for (uint32_t k = 0; fi && !fi->bad_addr && k < fi->nr; k++) {
		uint64_t addr = fi->start + fi->off[k];

		if (site_qualifies(t, addr) && found++ < n)
			q[found - 1] = addr;
	}
	if (!fi || fi->bad_addr) {
		kmeta_addr_str(t->img, fi ? fi->bad_addr : s->site, where, sizeof(where));
		pr_err(t->img->path, "%s: %s: cannot decode the function", t->desc->name, where);
		err = -EINVAL;
	} else if (found != n) {
		pr_err(t->img->path, "%s: %s: %zu entries, but %zu instructions qualify",
		       t->desc->name, s->func->name, n, found);
		err = -EINVAL;
	}
	for (size_t k = 0; !err && k < n; k++)
		err = kmeta_table_write_field(t, s[k].slot, 0, q[k]);
	free(q);
	return err;
}

/*
 * Fix every function of t with a stale entry; *funcs and *fixed count them and their
 * entries.  Every function that cannot be fixed is reported before the error returns.
 */
static int fix_table(struct kmeta_table *t, size_t *funcs, size_t *fixed)
{
	char where[KMETA_ADDR_STR_SIZE];
	struct site_entry *s;
	size_t nr, i, j, k;
	int err = 0;

	s = read_sites(t, &nr);
	if (!s)
		return -EINVAL;
	for (i = 0; i < nr; i = j) {
		bool stale = false;

		for (j = i; j < nr && s[j].func == s[i].func; j++)
			stale |= !s[j].ok;
		if (!stale)
			continue;
		if (!s[i].func) {
			for (k = i; k < j; k++) {
				if (s[k].ok)
					continue;
				kmeta_addr_str(t->img, s[k].site, where, sizeof(where));
				pr_err(t->img->path, "%s: %s: stale entry outside any function",
				       t->desc->name, where);
			}
			err = -EINVAL;
			continue;
		}
		if (fix_func(t, &s[i], j - i))
			err = -EINVAL;
		(*funcs)++;
		*fixed += j - i;
	}
	free(s);
	return err;
}

/* After the fix, every entry must pass the check: the proof before anything is written */
static int check_fixed(struct kmeta_table *t)
{
	struct check_ctx c = { .report = count_only };
	int err = kmeta_check_table(&c, t);

	if (!err && c.nr_violations) {
		pr_err(t->img->path, "%s: %zu entries still fail kmeta check", t->desc->name,
		       c.nr_violations);
		err = -EINVAL;
	}
	return err;
}

static int fix_all(struct kmeta_image *img)
{
	int err = 0;

	for (size_t k = 0; k < ARRAY_SIZE(site_lists); k++) {
		struct kmeta_table *t = kmeta_table_get(img, kmeta_table_find_desc(site_lists[k]));
		size_t funcs = 0, fixed = 0;

		if (!t)
			return -EINVAL;
		if (!t->present)
			continue;
		if (fix_table(t, &funcs, &fixed) || check_fixed(t)) {
			err = -EINVAL;
			continue;
		}
		pr_info(img->path, "%s: %zu entries in %zu functions pointed again at their "
				"instructions", t->desc->name, fixed, funcs);
	}
	return err;
}

int kbolt_fix_sites(const char *in, const char *out)
{
	struct kmeta_image *img;
	struct outfile of;
	struct stat st;
	uint64_t digest;
	char *record;
	int err = outfile_check_dir(out);

	if (err)
		return 1;
	img = kmeta_open(in);
	if (!img)
		return 1;
	err = fix_all(img);
	if (!err && (stat(in, &st) || digest_file(in, &digest)))
		err = -errno;
	if (!err)
		err = outfile_create(&of, out, st.st_mode);
	if (!err) {
		record = xasprintf("kbolt %s; fix-sites of %016" PRIx64, KBOLT_VERSION_STRING,
				   digest);
		err = outfile_finish(&of, output_write(img, &of, record, NULL, false));
		free(record);
	}
	kmeta_close(img);
	return err ? 1 : 0;
}
