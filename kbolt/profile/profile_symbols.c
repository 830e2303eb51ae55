// SPDX-License-Identifier: GPL-2.0
/*
 * The records of a symbolic profile (BOLT's fdata: function names and offsets) made
 * addresses of the image, for profile_match().  A name is a function symbol of the
 * image: a global one by its name; a local one as BOLT names it, NAME/N, the Nth local
 * function symbol called NAME in address order (BOLT's NameResolver numbers the local
 * symbols of one name in the order it discovers them, by address).  A record whose
 * FROM is a jcc or any instruction that falls through, and whose TO is the next
 * instruction, is a fall-through (as perf2bolt writes them); any other a branch.
 * And the other way, profile_write_fdata(): a profile of addresses as fdata.
 */
#include <errno.h>
#include <elf.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "profile_match.h"

static int cmp_by_name(const void *a, const void *b)
{
	const struct kmeta_sym *x = *(struct kmeta_sym *const *)a, *y = *(struct kmeta_sym *const *)b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->addr > y->addr) - (x->addr < y->addr);
}

/* strcmp() of sym_name and the first len characters of name */
static int cmp_name_len(const char *sym_name, const char *name, size_t len)
{
	int c = strncmp(sym_name, name, len);

	return c ? c : sym_name[len] != '\0';
}

/* The first of the nr functions sorted by name that is not before name[0..len) */
static size_t first_named(struct kmeta_sym **by_name, size_t nr, const char *name, size_t len)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_name_len(by_name[mid]->name, name, len) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The function a BOLT name names, NULL if none */
static struct kmeta_sym *find_bolt_name(struct kmeta_sym **by_name, size_t nr, const char *name)
{
	const char *slash = strrchr(name, '/');
	size_t len = strlen(name), nth = 0;
	struct kmeta_sym *global = NULL;

	if (slash && slash[1] && strspn(slash + 1, "0123456789") == strlen(slash + 1)) {
		len = slash - name;
		nth = strtoul(slash + 1, NULL, 10);
	}
	for (size_t i = first_named(by_name, nr, name, len);
	     i < nr && !cmp_name_len(by_name[i]->name, name, len); i++) {
		if (nth && by_name[i]->bind == STB_LOCAL && !--nth)
			return by_name[i];
		if (!nth && by_name[i]->bind != STB_LOCAL && !global)
			global = by_name[i];
	}
	return global;
}

/*
 * A symbol of any type that a name names: NAME, or NAME/1 for a local one (BOLT
 * numbers NOTYPE labels of assembly too): the first symbol of that name
 */
static struct kmeta_sym *find_any_sym(struct kmeta_image *img, const char *name)
{
	const char *slash = strrchr(name, '/');
	struct kmeta_sym *s;
	char *base;

	if (!slash || strcmp(slash, "/1"))
		return kmeta_find_sym_by_name(img, name);
	base = xstrdup(name);
	base[slash - name] = '\0';
	s = kmeta_find_sym_by_name(img, base);
	free(base);
	return s;
}

unsigned int profile_edge_kind(struct kmeta_image *img, const struct prof_edge *e)
{
	struct kmeta_insn in;

	if (e->kind == PK_SAMPLE || kmeta_insn_decode(img, e->from, &in))
		return e->kind;
	return e->to == in.addr + in.len && !kmeta_insn_ends_flow(&in) ? PK_FALLTHROUGH : e->kind;
}

struct kmeta_sym **profile_funcs_by_name(struct kmeta_image *img)
{
	struct kmeta_sym **by_name = xmalloc((img->nr_funcs + 1) * sizeof(*by_name));

	memcpy(by_name, img->funcs, img->nr_funcs * sizeof(*by_name));
	sort_array(by_name, img->nr_funcs, sizeof(*by_name), cmp_by_name);
	return by_name;
}

struct kmeta_sym *profile_find_bolt_func(struct kmeta_image *img, struct kmeta_sym **by_name,
					 const char *name)
{
	struct kmeta_sym *s = find_bolt_name(by_name, img->nr_funcs, name);

	/* code without a sized function symbol: __x86_indirect_thunk_*, entry code */
	return s ? s : find_any_sym(img, name);
}

int profile_resolve_symbols(struct kmeta_image *img, struct prof *p, bool force)
{
	struct kmeta_sym **by_name = profile_funcs_by_name(img);
	struct kmeta_sym **sym = xcalloc(p->nr_names + 1, sizeof(*sym));
	size_t n = 0, missed = 0, first_missed = 0;

	for (size_t i = 0; i < p->nr_names; i++)
		sym[i] = profile_find_bolt_func(img, by_name, p->names[i]);
	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_symloc *l = &p->symlocs[i];
		struct prof_edge e = p->edges[i];

		if (!sym[l->from_name] || !sym[l->to_name]) {
			if (!missed++)
				first_missed = i;
			continue;
		}
		e.from = sym[l->from_name]->addr + l->from_off;
		e.to = sym[l->to_name]->addr + l->to_off;
		e.kind = profile_edge_kind(img, &e);
		p->edges[n++] = e;
	}
	if (missed) {
		const struct prof_symloc *l = &p->symlocs[first_missed];
		const char *name = p->names[sym[l->from_name] ? l->to_name : l->from_name];

		if (force)
			pr_warn(p->path, "%zu records name functions %s does not have, such as %s "
				"(line %zu): left out (--force)", missed, img->path, name, l->lineno);
		else
			pr_err(p->path, "line %zu: no function %s in %s: a profile of another kernel "
			       "(--force leaves out the %zu records of such names)", l->lineno, name,
			       img->path, missed);
	}
	free(by_name);
	free(sym);
	if (missed && !force)
		return -EINVAL;
	p->nr_edges = n;
	free(p->symlocs);
	p->symlocs = NULL;
	return 0;
}

size_t profile_bolt_local_nth(struct kmeta_image *img, struct kmeta_sym **by_name,
			       const struct kmeta_sym *func)
{
	size_t nth = 1;

	if (func->bind != STB_LOCAL)
		return 0;
	for (size_t i = first_named(by_name, img->nr_funcs, func->name, strlen(func->name));
	     by_name[i] != func; i++)
		nth += by_name[i]->bind == STB_LOCAL;
	return nth;
}

/* "1 NAME OFF" of addr as BOLT names it (NAME/N for a local function); false if none */
static bool print_loc(FILE *f, struct kmeta_image *img, struct kmeta_sym **by_name,
		      uint64_t addr)
{
	struct kmeta_sym *func = kmeta_find_func_containing(img, addr);
	size_t nth;

	if (!func)
		return false;
	nth = profile_bolt_local_nth(img, by_name, func);
	if (nth)
		fprintf(f, "1 %s/%zu %" PRIx64, func->name, nth, addr - func->addr);
	else
		fprintf(f, "1 %s %" PRIx64, func->name, addr - func->addr);
	return true;
}

static void print_record(FILE *f, struct kmeta_image *img, struct kmeta_sym **by_name,
			 uint64_t from, uint64_t to, uint64_t count, size_t *nr)
{
	if (!kmeta_find_func_containing(img, from) || !kmeta_find_func_containing(img, to))
		return;		/* code of no function: BOLT has no name for it either */
	print_loc(f, img, by_name, from);
	fputc(' ', f);
	print_loc(f, img, by_name, to);
	fprintf(f, " 0 %" PRIu64 "\n", count);
	++*nr;
}

/*
 * A fall-through range as BOLT's fall-through edges: each jcc it runs through, its
 * first instruction included, not taken, to the instruction after it.  Other
 * instructions fall through inside a block of BOLT's CFG: an edge from one of them
 * (the QEMU plugin's F records after stac, clac) would make llvm-bolt call the
 * function's profile stale.
 */
static void print_range(FILE *f, struct kmeta_image *img, struct kmeta_sym **by_name,
			const struct prof_edge *e, size_t *nr)
{
	struct kmeta_insn in;

	for (uint64_t at = e->from; at < e->to && !kmeta_insn_decode(img, at, &in);
	     at = in.addr + in.len)
		if (in.kind == KI_JCC)
			print_record(f, img, by_name, in.addr, in.addr + in.len, e->count, nr);
}

size_t profile_write_fdata(struct kmeta_image *img, const struct prof *p, FILE *f)
{
	struct kmeta_sym **by_name = profile_funcs_by_name(img);
	bool no_lbr = true;
	size_t nr = 0;

	for (size_t i = 0; i < p->nr_edges; i++)
		no_lbr = no_lbr && !prof_is_transfer(&p->edges[i]);
	if (no_lbr)
		fprintf(f, "no_lbr%s%s\n", p->event[0] ? " " : "", p->event);
	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_edge *e = &p->edges[i];

		if (no_lbr) {
			if (print_loc(f, img, by_name, e->from)) {
				fprintf(f, " %" PRIu64 "\n", e->count);
				nr++;
			}
		} else if (e->kind == PK_FALLTHROUGH) {
			print_range(f, img, by_name, e, &nr);
		} else if (e->kind != PK_INT && e->kind != PK_SAMPLE) {
			print_record(f, img, by_name, e->from, e->to, e->count, &nr);
		}
	}
	free(by_name);
	return nr;
}
