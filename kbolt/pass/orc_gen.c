// SPDX-License-Identifier: GPL-2.0
/*
 * The ORC table regenerated for moved code.  The unwinder takes, for an address, the
 * last entry at or below it, so an entry describes the stack from its ip to the next
 * entry's.  For each emitted instruction of a moved function the state is the one its
 * old address had (an added jmp: the state where it jumps to, which is where the block
 * used to fall); an entry is written where the state changes, entries inside patch-site
 * units are copied at their offsets, and one more entry at the function's end keeps
 * whatever follows it described as before.  The table has a fixed number of slots:
 * functions whose new entries would overflow it keep their old code, and unused slots
 * repeat the last entry (same ip, same state: the lookup result does not change).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../model/opt.h"
#include "orc_gen.h"

#define ORC_SIZE KMETA_ORC_SIZE

struct orc_out {
	uint64_t ip;
	const unsigned char *e;
	size_t seq;	/* insertion order: entries at one ip keep theirs */
};

struct orc_list {
	struct orc_out *v;
	size_t nr, cap;
	const unsigned char *last;	/* state of the last entry added */
};

int orc_read(struct opt *opt)
{
	if (kmeta_orc_read(opt->img, &opt->orc_ips, &opt->orc_entries, &opt->nr_orc)) {
		pr_err(opt->img->path, "no ORC table (.orc_unwind_ip, .orc_unwind): kbolt needs "
		       "CONFIG_UNWINDER_ORC to rewrite a kernel");
		return -ENOENT;
	}
	for (size_t k = 1; k < opt->nr_orc; k++) {
		if (opt->orc_ips[k] < opt->orc_ips[k - 1]) {
			pr_err(opt->img->path, "orc: entry %zu is out of order: the table is "
			       "not sorted", k);
			return -EINVAL;
		}
	}
	return 0;
}

/* Index of the first old entry with ip >= addr */
static size_t orc_lower(const struct opt *opt, uint64_t addr)
{
	return lower_bound_u64(opt->orc_ips, opt->nr_orc, sizeof(*opt->orc_ips), 0, addr);
}

/* The old state at addr, NULL if no entry covers it */
static const unsigned char *old_state(const struct opt *opt, uint64_t addr)
{
	return kmeta_orc_state(opt->orc_ips, opt->orc_entries, opt->nr_orc, addr);
}

static void add_entry(struct orc_list *l, uint64_t ip, const unsigned char *e, bool always)
{
	if (!e || (!always && l->last && !memcmp(l->last, e, ORC_SIZE)))
		return;
	GROW(l->v, l->cap, l->nr + 1);
	l->v[l->nr] = (struct orc_out){ ip, e, l->nr };
	l->nr++;
	l->last = e;
}

/* The entries of f's new code, into l */
static void gen_func(const struct opt *opt, const struct func *f, struct orc_list *l)
{
	uint64_t start = f->sym->addr, end = start + f->sym->size;

	l->last = NULL;
	for (uint32_t k = 0; k < f->nr_items; k++) {
		const struct item *it = &f->items[k];
		const struct op *op = &f->ops[it->op];
		uint64_t old = start + op->off;

		add_entry(l, start + it->new_off, old_state(opt, old), false);
		if (!(op->flags & OP_UNIT) || it->type != ITEM_OP)
			continue;
		for (size_t i = orc_lower(opt, old + 1); i < opt->nr_orc &&
		     opt->orc_ips[i] < old + op->len; i++)
			add_entry(l, start + it->new_off + (opt->orc_ips[i] - old),
				  opt->orc_entries + i * ORC_SIZE, false);
	}
	{
		size_t i = orc_lower(opt, end);

		if (i == opt->nr_orc || opt->orc_ips[i] != end)
			add_entry(l, end, old_state(opt, end), false);
	}
}

int orc_count_func(struct opt *opt, struct func *f)
{
	struct orc_list l = { 0 };
	uint64_t start = f->sym->addr;

	gen_func(opt, f, &l);
	f->orc_new = l.nr;
	f->orc_old = orc_lower(opt, start + f->sym->size) - orc_lower(opt, start);
	free(l.v);
	return 0;
}

static int cmp_delta(const void *a, const void *b)
{
	const struct func *x = *(struct func *const *)a, *y = *(struct func *const *)b;
	int64_t dx = (int64_t)x->orc_new - x->orc_old, dy = (int64_t)y->orc_new - y->orc_old;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x->sym->addr < y->sym->addr ? -1 : x->sym->addr > y->sym->addr;
}

/*
 * With a profile, the weight is what to keep: the functions that need extra entries
 * go least weight per extra entry first (a knapsack's greedy order).
 */
static int cmp_weight_per_entry(const void *a, const void *b)
{
	const struct func *x = *(struct func *const *)a, *y = *(struct func *const *)b;
	int64_t dx = (int64_t)x->orc_new - x->orc_old, dy = (int64_t)y->orc_new - y->orc_old;
	double kx, ky;

	if ((dx > 0) != (dy > 0))
		return dx > 0 ? -1 : 1;
	if (dx <= 0)
		return cmp_delta(a, b);
	kx = (double)x->weight / dx;
	ky = (double)y->weight / dy;
	if (kx != ky)
		return kx < ky ? -1 : 1;
	return cmp_delta(a, b);
}

static size_t table_size(struct opt *opt);

/*
 * At most the new table's size, from orc_count_func()'s counts: the old entries
 * outside moved functions and the new ones inside (drop_redundant() only takes some
 * away).  When it fits, the table need not be built to know that it does.
 */
static int64_t table_size_bound(const struct opt *opt)
{
	int64_t nr = (int64_t)opt->nr_orc;

	for (size_t i = 0; i < opt->nr_funcs; i++)
		if (opt->funcs[i].moved)
			nr += (int64_t)opt->funcs[i].orc_new - (int64_t)opt->funcs[i].orc_old;
	return nr;
}

/*
 * Functions whose new code needs more entries than the table has room for keep their
 * old code until the table fits: with a random layout those that need the most extra
 * entries first (most functions stay rewritten), with a profile those with the least
 * weight per extra entry (most weight stays in rewritten code).
 */
int orc_fit_budget(struct opt *opt)
{
	struct func **moved = xmalloc(opt->nr_funcs * sizeof(*moved));
	size_t nr = 0, next = 0, size;

	for (size_t i = 0; i < opt->nr_funcs; i++)
		if (opt->funcs[i].moved)
			moved[nr++] = &opt->funcs[i];
	qsort(moved, nr, sizeof(*moved),
	      opt->o->layout == LAYOUT_RANDOM ? cmp_delta : cmp_weight_per_entry);
	while (table_size_bound(opt) > (int64_t)opt->nr_orc &&
	       (size = table_size(opt)) > opt->nr_orc && next < nr) {
		int64_t excess = size - opt->nr_orc;

		while (excess > 0 && next < nr) {
			struct func *f = moved[next++];

			excess -= (int64_t)f->orc_new - f->orc_old;
			f->moved = false;
			skip_func(opt, f, SKIP_ORC_BUDGET, f->sym->addr);
		}
	}
	free(moved);
	return 0;
}

static int cmp_out(const void *a, const void *b)
{
	const struct orc_out *x = a, *y = b;

	if (x->ip != y->ip)
		return x->ip < y->ip ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Entries that change no lookup go: one followed by another at the same ip, one with
 * the state of the entry before it.
 */
static size_t drop_redundant(struct orc_out *v, size_t nr)
{
	size_t out = 0;

	for (size_t k = 0; k < nr; k++) {
		if (k + 1 < nr && v[k + 1].ip == v[k].ip)
			continue;
		if (out && !memcmp(v[out - 1].e, v[k].e, ORC_SIZE))
			continue;
		v[out++] = v[k];
	}
	return out;
}

/*
 * v[0, mid) and v[mid, nr) in cmp_out() order, as one: merged when the second run is
 * sorted too (it is: functions in address order, each one's entries in its new
 * order), sorted whole otherwise.  The result is qsort()'s either way, cmp_out()
 * being a total order (seq is unique).
 */
static void sort_runs(struct orc_out *v, size_t mid, size_t nr)
{
	size_t nr_b = nr - mid, a = mid, b = nr_b, k = nr;
	struct orc_out *second;

	for (size_t i = mid + 1; i < nr; i++) {
		if (cmp_out(&v[i - 1], &v[i]) > 0) {
			qsort(v, nr, sizeof(*v), cmp_out);
			return;
		}
	}
	/* from the back, in place: only the second run (the new entries) is copied */
	second = xmalloc(nr_b * sizeof(*second) + 1);
	memcpy(second, v + mid, nr_b * sizeof(*second));
	while (b)
		v[--k] = a && cmp_out(&v[a - 1], &second[b - 1]) > 0 ? v[--a] : second[--b];
	free(second);
}

/* Old entries outside moved functions, new ones inside, sorted; NULL on overflow */
static struct orc_out *build_table(struct opt *opt, size_t *nr, bool quiet)
{
	struct orc_list l = { 0 };
	size_t nr_old;

	for (size_t k = 0; k < opt->nr_orc; k++) {
		struct func *f = find_func_containing(opt, opt->orc_ips[k]);

		if (!f || !f->moved)
			add_entry(&l, opt->orc_ips[k], opt->orc_entries + k * ORC_SIZE, true);
	}
	nr_old = l.nr;	/* in order: the old ips are sorted */
	for (size_t i = 0; i < opt->nr_funcs; i++)
		if (opt->funcs[i].moved)
			gen_func(opt, &opt->funcs[i], &l);
	sort_runs(l.v, nr_old, l.nr);
	l.nr = drop_redundant(l.v, l.nr);
	*nr = l.nr;
	if (l.nr > opt->nr_orc) {
		if (!quiet)
			pr_err(opt->img->path, "orc: %zu entries do not fit the table's %zu slots",
			       l.nr, opt->nr_orc);
		free(l.v);
		return NULL;
	}
	return l.v;
}

static size_t table_size(struct opt *opt)
{
	struct orc_out *v;
	size_t nr;

	v = build_table(opt, &nr, true);
	free(v);
	return nr;
}

int orc_write(struct opt *opt)
{
	struct kmeta_sec *ip = kmeta_find_sec_by_name(opt->img, ".orc_unwind_ip");
	struct kmeta_sec *orc = kmeta_find_sec_by_name(opt->img, ".orc_unwind");
	unsigned char *entries = xmalloc(opt->nr_orc * ORC_SIZE);
	struct orc_out *v;
	size_t nr;

	v = build_table(opt, &nr, false);
	if (!v) {
		free(entries);
		return -ENOSPC;
	}
	for (size_t k = 0; k < opt->nr_orc; k++) {
		const struct orc_out *o = &v[k < nr ? k : nr - 1];
		uint64_t slot = ip->addr + 4 * k;

		put_u32(ip->data + 4 * k, (uint32_t)(o->ip - slot));
		memcpy(entries + k * ORC_SIZE, o->e, ORC_SIZE);
	}
	/* the entries point into the old table: copy last */
	memcpy(orc->data, entries, opt->nr_orc * ORC_SIZE);
	for (size_t k = 0; k < opt->nr_orc; k++)
		opt->orc_ips[k] = v[k < nr ? k : nr - 1].ip;
	free(entries);
	free(v);
	return 0;
}
