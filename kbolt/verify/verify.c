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
 * 2. Old code the walk did not map that stayed where it was (alignment padding nothing
 *    reaches, plain jmps it followed) is mapped to itself (in_place.c).  Every old
 *    instruction of a rewritten function that is not padding must have been reached,
 *    every new byte must be an instruction reached, int3 fill or padding left in place.
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

#include "../../common/util.h"
#include "../../kmeta/table.h"
#include "../lib/parallel.h"
#include "internal.h"
#include "verify.h"

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
	free(v->sec_rewrite);
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
	v->sec_rewrite = kmeta_table_flags_by_sec(v->a);
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
	const char *name = rep->name ? rep->name : new;
	size_t nr_orc_b = 0, dw_funcs = 0, dw_insns = 0;
	int err;

	v->b = kmeta_open(new);
	v->b_file = new;
	if (v->b && rep->name) {	/* optimize's output, under the name it will have */
		free(v->b->path);
		v->b->path = xstrdup(rep->name);
	}
	if (v->b && kmeta_claim_padding_like(v->b, v->a)) {
		pr_err(name, "verify: its function symbols are not those of %s", v->a->path);
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
	verify_in_place(v);	/* before anything reads the map */
	checks.rc = verify_relocs_plan(v);
	parallel_for(1 + verify_relocs_nr(checks.rc), check_with_map, &checks);
	verify_relocs_free(checks.rc);
	if (rep->debug_info && verify_dwarf(v, rep->debug_info, &dw_funcs, &dw_insns))
		v->errors++;	/* said: the DWARF could not be read */
	if (rep->debug_info && kmeta_find_sec_by_name(v->a, ".debug_info") &&
	    verify_dwarf_tree(v))
		v->errors++;
	if (v->errors > MAX_REPORTS)
		pr_err(name, "verify: %zu more problems not shown", v->errors - MAX_REPORTS);
	if (!rep->quiet && rep->debug_info)
		printf("%s: %zu rewritten functions, %zu instructions walked, debug info of "
		       "%zu instructions in %zu functions compared: %s\n", name, v->nr_f,
		       v->walk.walked, dw_insns, dw_funcs, v->errors ? "FAILED" : "verified");
	else if (!rep->quiet)
		printf("%s: %zu rewritten functions, %zu instructions walked: %s\n",
		       name, v->nr_f, v->walk.walked, v->errors ? "FAILED" : "verified");
	else if (v->errors)	/* optimize's: an error like the others, JSON with -j */
		pr_err(name, "verify: %zu rewritten functions, %zu instructions walked: FAILED, "
		       "nothing written", v->nr_f, v->walk.walked);
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
