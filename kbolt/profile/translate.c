// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt profile translate: a profile recorded on kbolt's output turned into one of its
 * input, through the output's translation table (.kbolt.bat, lib/bat.h).  An address
 * in a moved function goes to the old instruction it was emitted from (the same byte
 * of it); any other address is the same in both.  The kinds follow the old code: a
 * jcc whose condition the layout inverted was taken where the old one fell through,
 * and the other way round; a jmp the layout added is the old fall-through it stands
 * for; a fall-through over a jmp the layout removed is, in the old code, a
 * fall-through into that jmp and the jmp taken.  Documentation/profile-format.rst,
 * "The translation table".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../lib/bat.h"
#include "profile_match.h"
#include "translate.h"

/* A function of the table, its entries also by old offset */
struct tfunc {
	const struct bat_func *bf;
	uint32_t *by_old;	/* indices of entries, by old_off */
};

struct translator {
	struct bat bat;
	struct tfunc *funcs;
	struct prof *out;
	size_t nr_added, nr_removed, nr_inverted;
};

static const struct bat_func *cmp_base;

static int cmp_old(const void *a, const void *b)
{
	uint32_t x = cmp_base->entries[*(const uint32_t *)a].old_off;
	uint32_t y = cmp_base->entries[*(const uint32_t *)b].old_off;

	return (x > y) - (x < y);
}

static const struct tfunc *find_func(const struct translator *t, uint64_t addr)
{
	size_t lo = 0, hi = t->bat.nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->bat.funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= t->bat.funcs[lo - 1].addr + t->bat.funcs[lo - 1].size)
		return NULL;
	return &t->funcs[lo - 1];
}

/* The placed entry holding new offset off, -1 if none (the int3 fill after the code) */
static long entry_at(const struct bat_func *bf, uint32_t off)
{
	size_t lo = 0, hi = bf->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (!(bf->entries[mid].flags & BAT_REMOVED) && bf->entries[mid].new_off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? (long)lo - 1 : -1;
}

/* The entry of the old op at old offset off, not an added jmp; NULL if none */
static const struct bat_entry *old_entry(const struct tfunc *tf, uint32_t off)
{
	const struct bat_func *bf = tf->bf;
	uint32_t end = off;
	size_t lo = 0, hi = bf->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (bf->entries[tf->by_old[mid]].old_off < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < bf->nr; lo++) {
		const struct bat_entry *e = &bf->entries[tf->by_old[lo]];

		if (e->old_off != end)
			return NULL;
		if (!(e->flags & BAT_ADDED))
			return e;
	}
	return NULL;
}

/* The entry of the old op right after entry k in the old code, NULL if none */
static const struct bat_entry *old_next(const struct tfunc *tf, long k)
{
	return old_entry(tf, tf->bf->entries[k].old_off + tf->bf->entries[k].old_len);
}

/* A jmp the layout removed at old address addr of tf, NULL if none */
static const struct bat_entry *removed_jmp_at(const struct tfunc *tf, uint64_t addr)
{
	const struct bat_entry *e = addr >= tf->bf->addr && addr < tf->bf->addr + tf->bf->size ?
				    old_entry(tf, addr - tf->bf->addr) : NULL;

	return e && (e->flags & BAT_REMOVED) && e->old_len ? e : NULL;
}

/* The old address of new address addr; *k its entry (-1: not in a moved function) */
static uint64_t old_addr(const struct translator *t, uint64_t addr, const struct tfunc **tf,
			 long *k)
{
	const struct bat_entry *e;

	*tf = find_func(t, addr);
	*k = *tf ? entry_at((*tf)->bf, addr - (*tf)->bf->addr) : -1;
	if (*k < 0)
		return addr;
	e = &(*tf)->bf->entries[*k];
	if (e->flags & BAT_ADDED)	/* stands for the fall-through to its target */
		return (*tf)->bf->addr + e->old_off;
	return (*tf)->bf->addr + e->old_off + (addr - (*tf)->bf->addr - e->new_off);
}

static void emit(struct translator *t, uint64_t from, uint64_t to, uint64_t count,
		 unsigned int kind)
{
	prof_add_edge(t->out, from, to, count, kind);
}

/* A transfer that leaves entry k of a moved function, in the old code's terms */
static void translate_local(struct translator *t, const struct tfunc *tf, long k,
			    uint64_t from, uint64_t to, const struct prof_edge *e)
{
	const struct bat_func *bf = tf->bf;
	const struct bat_entry *en = &bf->entries[k], *next;
	uint64_t end = bf->addr + en->old_off + en->old_len;

	if (en->flags & BAT_ADDED) {	/* the jmp stands for the fall-through before it */
		long p = k;

		while (--p >= 0 && (bf->entries[p].flags & BAT_ADDED))
			;
		t->nr_added++;
		if (p >= 0)
			emit(t, bf->addr + bf->entries[p].old_off, to, e->count, PK_FALLTHROUGH);
		return;
	}
	if (to > from && to < end) {	/* inside the op: a site patched at boot */
		emit(t, from, to, e->count, e->kind);
	} else if ((en->flags & BAT_JCC) && to == en->target && to != end) {
		t->nr_inverted += e->kind == PK_FALLTHROUGH;
		emit(t, from, to, e->count, PK_JCC);
	} else if ((en->flags & BAT_JCC) && to != end && removed_jmp_at(tf, en->target)) {
		/* taken to a block that was only a jmp, which the layout removed */
		t->nr_removed++;
		emit(t, from, en->target, e->count, PK_JCC);
		emit(t, en->target, to, e->count, PK_JMP);
	} else if (to == end) {
		t->nr_inverted += e->kind == PK_JCC;
		emit(t, from, to, e->count, PK_FALLTHROUGH);
	} else if ((next = old_next(tf, k)) && (next->flags & BAT_REMOVED) &&
		   next->old_len && e->kind == PK_FALLTHROUGH) {
		/* fell into what was a jmp: into the jmp, then the jmp */
		t->nr_removed++;
		emit(t, from, bf->addr + next->old_off, e->count, PK_FALLTHROUGH);
		emit(t, bf->addr + next->old_off, to, e->count, PK_JMP);
	} else {
		emit(t, from, to, e->count, e->kind);
	}
}

static void translate_edge(struct translator *t, const struct prof_edge *e)
{
	const struct tfunc *ftf, *ttf;
	long fk, tk;
	uint64_t from = old_addr(t, e->from, &ftf, &fk);
	uint64_t to = old_addr(t, e->to, &ttf, &tk);

	/*
	 * Into a function's entry from elsewhere: its entry did not move, but its first
	 * op may have been a jmp the layout removed, which then ran before what the
	 * output has there
	 */
	if (ttf && e->to == ttf->bf->addr && ftf != ttf && to != e->to) {
		emit(t, from, e->to, e->count, e->kind);
		if (removed_jmp_at(ttf, e->to))
			emit(t, e->to, to, e->count, PK_JMP);
		t->nr_removed++;
		return;
	}
	/* the local transfers: those a layout changes (calls and returns it does not) */
	if (fk >= 0 && (e->kind == PK_FALLTHROUGH || e->kind == PK_JCC || e->kind == PK_JMP ||
			e->kind == PK_BRANCH))
		translate_local(t, ftf, fk, from, to, e);
	else
		emit(t, from, to, e->count, e->kind);
}

int prof_translate(struct kmeta_image *img, struct prof *p, struct prof_translation *res)
{
	struct kmeta_sec *sec = kmeta_find_sec_by_name(img, BAT_SEC_NAME);
	struct translator t = { .out = p };
	struct prof_edge *edges = p->edges;
	size_t nr = p->nr_edges;

	if (!sec || !sec->data) {
		pr_err(img->path, "no %s section: not an output of kbolt optimize, or of a "
		       "version without translation tables", BAT_SEC_NAME);
		return -EINVAL;
	}
	if (bat_decode(sec->data, sec->size, &t.bat)) {
		pr_err(img->path, "%s: not a translation table kbolt reads", BAT_SEC_NAME);
		return -EINVAL;
	}
	t.funcs = xcalloc(t.bat.nr + 1, sizeof(*t.funcs));
	for (size_t i = 0; i < t.bat.nr; i++) {
		struct tfunc *tf = &t.funcs[i];

		tf->bf = &t.bat.funcs[i];
		tf->by_old = xmalloc((tf->bf->nr + 1) * sizeof(*tf->by_old));
		for (uint32_t k = 0; k < tf->bf->nr; k++)
			tf->by_old[k] = k;
		cmp_base = tf->bf;
		qsort(tf->by_old, tf->bf->nr, sizeof(*tf->by_old), cmp_old);
	}
	p->edges = NULL;
	p->nr_edges = p->cap = 0;
	for (size_t i = 0; i < nr; i++)
		translate_edge(&t, &edges[i]);
	free(edges);
	snprintf(p->build_id, sizeof(p->build_id), "%s", t.bat.build_id);
	res->funcs = t.bat.nr;
	res->added = t.nr_added;
	res->removed = t.nr_removed;
	res->inverted = t.nr_inverted;
	for (size_t i = 0; i < t.bat.nr; i++)
		free(t.funcs[i].by_old);
	free(t.funcs);
	bat_free(&t.bat);
	return prof_aggregate(p);
}
