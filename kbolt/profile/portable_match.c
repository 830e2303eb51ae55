// SPDX-License-Identifier: GPL-2.0
/*
 * A portable profile (portable.c) matched onto a build: each of its functions is found
 * by name and source file (cu_path.h), its blocks by their hashes (func_hash.c), and
 * its records become address records of the build, for the optimizer and
 * check-profile as if recorded there.  Documentation/profile-format.rst, "Matching",
 * gives the rules:
 *
 *   1. a function of the same name and file whose hash is equal: matched exactly, its
 *      blocks one for one;
 *   2. else one of the same name and file: matched by hash, its blocks by
 *      map_blocks(), each new block given to one old block at most;
 *   3. else a clone of it (foo.isra.2 for foo.isra.1: the numbers of GCC's .isra,
 *      .constprop, .part clones shift between builds), the same hash first, else the
 *      one with the most blocks in common, its blocks as in 2;
 *   4. else another form of it (foo.part.0 for foo, foo for foo.isra.0: whether GCC
 *      clones a function changes between builds too), chosen as in 3;
 *   5. else, where one side does not know the function's file (a global symbol of a
 *      build without DWARF, which a static one of the other build is not), 1 to 4
 *      again among the functions of any file;
 *   6. else the function is dropped, and every record with an end in it.
 *
 * Each function of the build is given to one function of the profile at most, the
 * exact matches first.  Candidates are hashed in parallel; the rest is sequential, in
 * the profile's order, so the result does not depend on the threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../lib/parallel.h"
#include "check_profile.h"
#include "cu_path.h"
#include "func_hash.h"
#include "portable.h"

enum match_kind { MATCH_NONE, MATCH_EXACT, MATCH_HASH, MATCH_CLONE };

/* A function of the build under its key: a hash of its root name */
struct name_entry {
	uint64_t key;
	struct kmeta_sym *sym;
};

struct matcher {
	struct kmeta_image *img;
	struct portable *pp;
	struct hash_ctx ctx;
	struct cu_paths *cus;
	struct name_entry *names;
	size_t nr_names;
	struct kmeta_sym **cands;	/* every candidate, by address, once */
	struct hash_func *hfs;		/* parallel to cands */
	bool *taken;			/* parallel to cands */
	size_t nr_cands;
	size_t *cand_first, *cand_list;	/* pp's function i: cand_list[cand_first[i]..[i+1]) */
	long *assigned;			/* per pp function: its candidate, -1 none */
	unsigned char *kind;		/* per pp function: enum match_kind */
	long **block_map;		/* per pp function and block: the build's block, -1 */
	bool *same;			/* per pp function: its candidate hashes equal */
	struct kmeta_range *patched;	/* check_profile.h's, for records of changed code */
	size_t nr_patched;
};

/*
 * The base name: name without its ".N" parts (foo.constprop.0.isra.0 ->
 * foo.constprop.isra), so that a clone is found whatever GCC numbered it, into buf
 */
static const char *base_name(const char *name, char *buf, size_t size)
{
	size_t n = 0;

	for (const char *s = name; *s && n + 1 < size; ) {
		if (s[0] == '.' && s[1] >= '0' && s[1] <= '9') {
			const char *e = s + 1;

			while (*e >= '0' && *e <= '9')
				e++;
			if (*e == '\0' || *e == '.') {
				s = e;
				continue;
			}
		}
		buf[n++] = *s++;
	}
	buf[n] = '\0';
	return buf;
}

/*
 * The root name: the name before its first '.' part, and ".cold" for a cold part
 * (foo.part.0.cold -> foo.cold): every clone of foo, and foo, have the same
 */
static const char *root_name(const char *name, char *buf, size_t size)
{
	size_t n = strcspn(name, ".");

	snprintf(buf, size, "%.*s%s", (int)n, name, strstr(name + n, ".cold") ? ".cold" : "");
	return buf;
}

/* The index's key: the root name (the file is compared after, file_relation()) */
static uint64_t name_key(const char *name)
{
	char buf[512];

	root_name(name, buf, sizeof(buf));
	return func_hash_bytes(FUNC_HASH_BASIS, buf, strlen(buf));
}

static const char *sym_file(const struct matcher *m, const struct kmeta_sym *sym)
{
	return cu_func_file(m->cus, m->img, sym);
}

enum file_relation { FILE_SAME, FILE_UNKNOWN, FILE_OTHER };

/* The last part of path, without its extension: its length, from *start */
static size_t stem(const char *path, const char **start)
{
	const char *slash = strrchr(path, '/'), *dot;

	*start = slash ? slash + 1 : path;
	dot = strrchr(*start, '.');
	return dot && dot != *start ? (size_t)(dot - *start) : strlen(*start);
}

/*
 * Is a the file b?  Two paths (of compile units) compare whole; a path and a basename
 * (a build without DWARF, a profile of format 1), or two basenames, by their last
 * part without its extension (the STT_FILE symbol of an assembly file names its
 * object: head_64.o for arch/x86/kernel/head_64.S); a file one side does not know
 * ("": a global symbol of a build without DWARF) may be any, and is the other side's
 * if it knows none either
 */
static enum file_relation file_relation(const char *a, const char *b)
{
	const char *sa, *sb;
	size_t na, nb;

	if (!a[0] || !b[0])
		return a[0] || b[0] ? FILE_UNKNOWN : FILE_SAME;
	if (strchr(a, '/') && strchr(b, '/'))
		return strcmp(a, b) ? FILE_OTHER : FILE_SAME;
	na = stem(a, &sa);
	nb = stem(b, &sb);
	return na == nb && !memcmp(sa, sb, na) ? FILE_SAME : FILE_OTHER;
}

/* Every function symbol of the build by key, each key's in address order */
static void index_names(struct matcher *m)
{
	struct kmeta_image *img = m->img;

	m->names = xcalloc(img->nr_funcs ? img->nr_funcs : 1, sizeof(*m->names));
	for (size_t i = 0; i < img->nr_funcs; i++) {
		struct kmeta_sym *sym = img->funcs[i];

		m->names[m->nr_names++] = (struct name_entry){ name_key(sym->name), sym };
	}
	sort_by_u64_key(m->names, m->nr_names, sizeof(*m->names),
			offsetof(struct name_entry, key));
}

/* Is sym a form of the function f: the same root name, and the file not another? */
static bool same_root(const struct matcher *m, const struct kmeta_sym *sym,
		      const struct portable_func *f)
{
	char a[512], b[512];

	return file_relation(sym_file(m, sym), f->file) != FILE_OTHER &&
	       !strcmp(root_name(sym->name, a, sizeof(a)), root_name(f->name, b, sizeof(b)));
}

/* ... and a clone of it: the same base name too */
static bool same_base(const struct kmeta_sym *sym, const struct portable_func *f)
{
	char a[512], b[512];

	return !strcmp(base_name(sym->name, a, sizeof(a)), base_name(f->name, b, sizeof(b)));
}

static long cand_index(const struct matcher *m, struct kmeta_sym *sym)
{
	struct kmeta_sym **at = search_array(&sym, m->cands, m->nr_cands, sizeof(*m->cands),
					func_hash_cmp_sym);

	return at - m->cands;
}

/* Each profile function's candidates: the build's functions of its root name and file */
static void find_candidates(struct matcher *m)
{
	const struct portable *pp = m->pp;
	size_t cap = 0, n = 0, nr_list = 0;
	struct kmeta_sym **all = NULL;

	m->cand_first = xcalloc(pp->nr_funcs + 1, sizeof(*m->cand_first));
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < pp->nr_funcs; i++) {
			const struct portable_func *f = &pp->funcs[i];
			uint64_t key = name_key(f->name);
			size_t k = lower_bound_u64(m->names, m->nr_names, sizeof(*m->names),
						   offsetof(struct name_entry, key), key);

			if (pass)
				m->cand_first[i] = nr_list;
			for (; k < m->nr_names && m->names[k].key == key; k++) {
				if (!same_root(m, m->names[k].sym, f))
					continue;
				if (!pass) {
					GROW(all, cap, n + 1);
					all[n++] = m->names[k].sym;
				} else {
					m->cand_list[nr_list++] = cand_index(m, m->names[k].sym);
				}
			}
		}
		if (pass)
			break;
		sort_array(all, n, sizeof(*all), func_hash_cmp_sym);
		m->cands = all;
		for (size_t i = 0; i < n; i++)
			if (!m->nr_cands || all[m->nr_cands - 1] != all[i])
				all[m->nr_cands++] = all[i];
		m->cand_list = xcalloc(n ? n : 1, sizeof(*m->cand_list));
	}
	m->cand_first[pp->nr_funcs] = nr_list;
}

static void hash_item(void *arg, size_t i, unsigned int worker)
{
	struct matcher *m = arg;

	func_hash_compute(m->img, &m->ctx, m->cands[i]->addr, kmeta_elf_size(m->cands[i]),
			  &m->hfs[i]);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* How many of f's blocks the candidate has: twice those of equal strict hash, plus loose */
static size_t block_score(const struct portable_func *f, const struct hash_func *hf)
{
	uint64_t *strict = xcalloc(hf->nr_blocks + 1, sizeof(*strict));
	uint64_t *loose = xcalloc(hf->nr_blocks + 1, sizeof(*loose));
	size_t score = 0;

	for (uint32_t b = 0; b < hf->nr_blocks; b++) {
		strict[b] = hf->blocks[b].strict;
		loose[b] = hf->blocks[b].loose;
	}
	qsort(strict, hf->nr_blocks, sizeof(*strict), cmp_u64);
	qsort(loose, hf->nr_blocks, sizeof(*loose), cmp_u64);
	for (uint32_t b = 0; b < f->nr_blocks; b++) {
		score += 2 * !!search_array(&f->blocks[b].strict, strict, hf->nr_blocks, 8, cmp_u64);
		score += !!search_array(&f->blocks[b].loose, loose, hf->nr_blocks, 8, cmp_u64);
	}
	free(strict);
	free(loose);
	return score;
}

/* How a candidate is related to the profile's function (all have its root name) */
enum relation { SAME_NAME, SAME_BASE, SAME_ROOT };

static enum relation relation(const struct kmeta_sym *sym, const struct portable_func *f)
{
	if (!strcmp(sym->name, f->name))
		return SAME_NAME;
	return same_base(sym, f) ? SAME_BASE : SAME_ROOT;
}

/*
 * The best untaken candidate of function i so related, its file so related: the one of
 * equal hash first, else the one with the best block score (above 0); -1 if none
 */
static long best_candidate(const struct matcher *m, size_t i, enum relation rel,
			   enum file_relation file, bool hash_only)
{
	const struct portable_func *f = &m->pp->funcs[i];
	size_t best_score = 0;
	long best = -1;

	for (size_t k = m->cand_first[i]; k < m->cand_first[i + 1]; k++) {
		size_t c = m->cand_list[k], score;

		if (m->taken[c] || relation(m->cands[c], f) != rel || !m->hfs[c].nr_blocks ||
		    file_relation(sym_file(m, m->cands[c]), f->file) != file)
			continue;
		if (m->hfs[c].hash == f->hash)
			return c;
		if (hash_only)
			continue;
		score = block_score(f, &m->hfs[c]);
		if (score > best_score) {
			best_score = score;
			best = c;
		}
	}
	return best;
}

/*
 * Functions to candidates: exact matches, then by hash, then clones, then other forms,
 * all of the same file; then all four again where one side does not know the file
 */
static void assign(struct matcher *m)
{
	static const struct { unsigned char rel; bool hash_only; unsigned char kind; } passes[] = {
		{ SAME_NAME, true, MATCH_EXACT }, { SAME_NAME, false, MATCH_HASH },
		{ SAME_BASE, false, MATCH_CLONE }, { SAME_ROOT, false, MATCH_CLONE },
	};

	for (size_t q = 0; q < 2 * ARRAY_SIZE(passes); q++) {
		size_t p = q % ARRAY_SIZE(passes);
		enum file_relation file = q < ARRAY_SIZE(passes) ? FILE_SAME : FILE_UNKNOWN;

		for (size_t i = 0; i < m->pp->nr_funcs; i++) {
			long c;

			if (m->assigned[i] >= 0)
				continue;
			c = best_candidate(m, i, passes[p].rel, file, passes[p].hash_only);
			if (c < 0)
				continue;
			m->assigned[i] = c;
			m->taken[c] = true;
			m->kind[i] = passes[p].kind;
		}
	}
}

/*
 * The untaken new block nearest in offset to old block ob (the first of two as near)
 * of its loose hash and number of instructions, and of its strict hash if strict; -1
 */
static long match_block(const struct portable_block *ob, const struct hash_func *hf,
			const bool *taken, bool strict)
{
	uint64_t best_dist = UINT64_MAX;
	long best = -1;

	for (uint32_t b = 0; b < hf->nr_blocks; b++) {
		const struct hash_block *nb = &hf->blocks[b];
		uint64_t dist = nb->off > ob->off ? nb->off - ob->off : ob->off - nb->off;

		if (taken[b] || nb->loose != ob->loose || nb->nr_insns != ob->nr_insns ||
		    (strict && nb->strict != ob->strict))
			continue;
		if (dist < best_dist) {
			best_dist = dist;
			best = b;
		}
	}
	return best;
}

/*
 * Function i's blocks onto its candidate's, one for one: all of them if the hashes are
 * equal; else each new block given to one old block at most, first by strict hash,
 * then by loose hash, the old blocks in order each taking match_block()'s.  A strict
 * block match is marked by adding nr_blocks.
 */
static void map_blocks(struct matcher *m, size_t i)
{
	const struct portable_func *f = &m->pp->funcs[i];
	const struct hash_func *hf = &m->hfs[m->assigned[i]];
	struct portable_report *r = &m->pp->report;
	bool same = hf->hash == f->hash && hf->nr_blocks == f->nr_blocks;
	long *map = xmalloc(f->nr_blocks * sizeof(*map));
	bool *taken;

	m->same[i] = same;
	m->block_map[i] = map;
	for (uint32_t b = 0; b < f->nr_blocks; b++)
		map[b] = same ? (long)(b + hf->nr_blocks) : -1;
	if (same)
		return;
	taken = xcalloc(hf->nr_blocks + 1, sizeof(*taken));
	for (int strict = 1; strict >= 0; strict--) {
		for (uint32_t b = 0; b < f->nr_blocks; b++) {
			long nb = map[b] < 0 ? match_block(&f->blocks[b], hf, taken, strict) : -1;

			if (nb < 0)
				continue;
			taken[nb] = true;
			map[b] = strict ? nb + hf->nr_blocks : nb;
		}
	}
	free(taken);
	for (uint32_t b = 0; b < f->nr_blocks; b++) {
		if (map[b] < 0)
			r->blocks_dropped++;
		else if (map[b] >= hf->nr_blocks)
			r->blocks_exact++;
		else
			r->blocks_loose++;
	}
}

/* The address of a place in the build, false if its function or block was dropped */
static bool place_addr(const struct matcher *m, const struct portable_place *pl, uint64_t *addr)
{
	long c = m->assigned[pl->func], nb;
	const struct hash_func *hf;
	const struct hash_block *bb;
	uint32_t k;

	if (c < 0 || (nb = m->block_map[pl->func][pl->block]) < 0)
		return false;
	hf = &m->hfs[c];
	/* a byte inside an instruction only where the block is the same code */
	if (nb < hf->nr_blocks && pl->delta)
		return false;
	bb = &hf->blocks[nb % hf->nr_blocks];
	if (pl->insn >= bb->nr_insns)
		return false;
	k = bb->first + pl->insn;
	if (pl->delta && hf->insn_off[k] + pl->delta >= (k + 1 < hf->nr_insns ?
							 hf->insn_off[k + 1] : hf->size))
		return false;
	*addr = m->cands[c]->addr + hf->insn_off[k] + pl->delta;
	return true;
}

/*
 * A record of code that changed must still be one of its code: a jcc whose target
 * moved to another block, a fall-through into a block that is no longer next, are
 * dropped (profile_edge_verdict(), as check-profile judges)
 */
static bool agrees(struct matcher *m, const struct portable_rec *rec,
		   const struct prof_edge *e)
{
	const char *why;

	if (m->same[rec->from.func] && m->same[rec->to.func])
		return true;
	if (!m->patched && profile_patched_ranges(m->img, &m->patched, &m->nr_patched))
		return true;	/* said; the check then judges the records */
	return profile_edge_verdict(m->img, e, m->patched, m->nr_patched, &why) != EDGE_DISAGREES;
}

static void map_records(struct matcher *m, struct prof *p)
{
	struct portable_report *r = &m->pp->report;

	for (size_t i = 0; i < m->pp->nr_recs; i++) {
		const struct portable_rec *rec = &m->pp->recs[i];
		uint64_t from, to;

		r->records++;
		r->weight += rec->count;
		if (!place_addr(m, &rec->from, &from) || !place_addr(m, &rec->to, &to))
			continue;
		if (!agrees(m, rec, &(struct prof_edge){ from, to, rec->count, rec->kind })) {
			r->records_disagree++;
			continue;
		}
		r->records_matched++;
		r->weight_matched += rec->count;
		prof_add_edge(p, from, to, rec->count, rec->kind);
	}
}

static void matcher_free(struct matcher *m)
{
	for (size_t i = 0; i < m->nr_cands; i++)
		func_hash_free(&m->hfs[i]);
	for (size_t i = 0; m->block_map && i < m->pp->nr_funcs; i++)
		free(m->block_map[i]);
	free(m->block_map);
	free(m->same);
	free(m->patched);
	free(m->hfs);
	free(m->taken);
	free(m->cands);
	free(m->cand_first);
	free(m->cand_list);
	free(m->assigned);
	free(m->kind);
	free(m->names);
	cu_paths_free(m->cus);
}

int portable_match(struct kmeta_image *img, struct prof *p)
{
	struct cu_paths cus;
	struct matcher m = { .img = img, .pp = p->portable, .cus = &cus };
	struct portable_report *r = &m.pp->report;
	size_t nr = m.pp->nr_funcs;
	int err;

	if (cu_paths_read(img, &cus))
		return -EINVAL;
	func_hash_init(img, &m.ctx);
	index_names(&m);
	find_candidates(&m);
	m.hfs = xcalloc(m.nr_cands + 1, sizeof(*m.hfs));
	m.taken = xcalloc(m.nr_cands + 1, sizeof(*m.taken));
	parallel_for(m.nr_cands, hash_item, &m);
	m.assigned = xmalloc((nr + 1) * sizeof(*m.assigned));
	m.kind = xcalloc(nr + 1, sizeof(*m.kind));
	m.block_map = xcalloc(nr + 1, sizeof(*m.block_map));
	m.same = xcalloc(nr + 1, sizeof(*m.same));
	for (size_t i = 0; i < nr; i++)
		m.assigned[i] = -1;
	assign(&m);
	memset(r, 0, sizeof(*r));
	snprintf(r->release, sizeof(r->release), "%s", p->release);
	snprintf(r->build_id, sizeof(r->build_id), "%s", p->build_id);
	r->funcs = nr;
	for (size_t i = 0; i < nr; i++) {
		r->exact += m.kind[i] == MATCH_EXACT;
		r->by_hash += m.kind[i] == MATCH_HASH;
		r->clones += m.kind[i] == MATCH_CLONE;
		r->dropped += m.kind[i] == MATCH_NONE;
		if (m.assigned[i] >= 0)
			map_blocks(&m, i);
	}
	map_records(&m, p);
	p->need_match = false;
	err = cu_paths_check(&cus, img);	/* of every unit asked for, since the start */
	matcher_free(&m);
	if (err)
		return err;
	if (!r->records_matched) {
		pr_err(p->path, "none of its %zu records matched %s's functions: a profile of "
		       "another kernel", r->records, img->path);
		return -EINVAL;
	}
	return 0;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

void portable_print_report(const struct portable_report *r, FILE *f)
{
	fprintf(f, "portable profile of %s: %zu functions: %zu matched exactly, %zu by "
		"block hash, %zu as clones, %zu dropped; blocks of those by hash: %zu same, %zu "
		"loosely, %zu dropped; %zu of %zu records matched (%.2f%% of the weight), %zu "
		"dropped for disagreeing with the code\n", prof_or_dash(r->release),
		r->funcs, r->exact, r->by_hash, r->clones, r->dropped, r->blocks_exact,
		r->blocks_loose, r->blocks_dropped, r->records_matched, r->records,
		pct(r->weight_matched, r->weight), r->records_disagree);
}

void portable_report_json(const struct portable_report *r, struct json *j)
{
	json_obj_open(j);
	json_member_str(j, "release", r->release);
	json_member_str(j, "build_id", r->build_id);
	json_member_u64(j, "functions", r->funcs);
	json_member_u64(j, "exact", r->exact);
	json_member_u64(j, "by_hash", r->by_hash);
	json_member_u64(j, "clones", r->clones);
	json_member_u64(j, "dropped", r->dropped);
	json_member_u64(j, "blocks_exact", r->blocks_exact);
	json_member_u64(j, "blocks_loose", r->blocks_loose);
	json_member_u64(j, "blocks_dropped", r->blocks_dropped);
	json_member_u64(j, "records", r->records);
	json_member_u64(j, "records_matched", r->records_matched);
	json_member_u64(j, "records_disagree", r->records_disagree);
	json_member_u64(j, "weight", r->weight);
	json_member_u64(j, "weight_matched", r->weight_matched);
	json_obj_close(j);
}
