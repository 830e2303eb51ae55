// SPDX-License-Identifier: GPL-2.0
/*
 * The portable profile (Documentation/profile-format.rst, "The portable profile"):
 * written by kbolt profile portable from an address profile of one build, read back by
 * prof_read() like any other format and matched onto another build by
 * portable_match.c.
 *
 *   # comment
 *   kbolt-portable 2                      1: FILE a basename (STT_FILE's), read still
 *   build-id HEX | -          of the build it was made from: informational
 *   release RELEASE | -
 *   recorder NAME
 *   function NAME FILE HASH SIZE NR_BLOCKS    FILE: cu_path.h's, "-" if unknown
 *   block OFF NR_INSNS STRICT LOOSE           NR_BLOCKS of them, by offset
 *   B FROM TO COUNT KIND                      FROM, TO: F.B.I[+D], decimal: function,
 *   F FROM TO COUNT                           block, instruction, byte in it
 *
 * Everything is written in one order (functions by address in the build, records by
 * address, as merge.c sorts them), so the same inputs give the same bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../lib/outfile.h"
#include "../lib/parallel.h"
#include "cu_path.h"
#include "func_hash.h"
#include "portable.h"

#define BLANKS " \t"
#define MAX_FIELDS 7

static void portable_free(struct portable *pp)
{
	if (!pp)
		return;
	for (size_t i = 0; i < pp->nr_funcs; i++) {
		free(pp->funcs[i].name);
		free(pp->funcs[i].file);
		free(pp->funcs[i].blocks);
	}
	free(pp->funcs);
	free(pp->recs);
	free(pp);
}

/* The writer's view of the build: the functions the records touch, hashed */
struct source {
	struct kmeta_image *img;
	struct hash_ctx ctx;
	struct cu_paths *cus;
	struct kmeta_sym **syms;	/* by address, each once */
	struct hash_func *hfs;		/* parallel to syms */
	size_t nr;
	uint32_t *index;		/* parallel: its number in the file, or UINT32_MAX */
};

static void hash_item(void *arg, size_t i, unsigned int worker)
{
	struct source *s = arg;

	func_hash_compute(s->img, &s->ctx, s->syms[i]->addr, kmeta_elf_size(s->syms[i]),
			  &s->hfs[i]);
}

/* Every function an end of a record lies in, each once, hashed (in parallel) */
static void collect_funcs(struct source *s, const struct prof *p)
{
	size_t cap = 0, n = 0;

	for (size_t i = 0; i < p->nr_edges; i++) {
		uint64_t ends[2] = { p->edges[i].from, p->edges[i].to };

		for (int k = 0; k < 2; k++) {
			struct kmeta_sym *f = kmeta_find_func_containing(s->img, ends[k]);

			if (!f)
				continue;
			GROW(s->syms, cap, s->nr + 1);
			s->syms[s->nr++] = f;
		}
	}
	sort_array(s->syms, s->nr, sizeof(*s->syms), func_hash_cmp_sym);
	for (size_t i = 0; i < s->nr; i++)
		if (!n || s->syms[n - 1] != s->syms[i])
			s->syms[n++] = s->syms[i];
	s->nr = n;
	s->hfs = xcalloc(n ? n : 1, sizeof(*s->hfs));
	s->index = xcalloc(n ? n : 1, sizeof(*s->index));
	parallel_for(n, hash_item, s);
}

/* addr as a place of the build: false if no decoded function code holds it */
static bool find_place(struct source *s, uint64_t addr, struct portable_place *pl)
{
	struct kmeta_sym *f = kmeta_find_func_containing(s->img, addr);
	struct kmeta_sym **at;
	const struct hash_func *hf;
	const struct hash_block *bb;
	uint32_t off;
	long b;

	if (!f)
		return false;
	at = search_array(&f, s->syms, s->nr, sizeof(*s->syms), func_hash_cmp_sym);
	hf = &s->hfs[at - s->syms];
	off = addr - f->addr;
	b = func_hash_block_at(hf, off);
	if (b < 0)
		return false;
	bb = &hf->blocks[b];
	pl->func = at - s->syms;
	pl->block = b;
	pl->insn = 0;
	for (uint32_t k = bb->first; k < bb->first + bb->nr_insns && hf->insn_off[k] <= off; k++)
		pl->insn = k - bb->first;
	pl->delta = off - hf->insn_off[bb->first + pl->insn];
	return true;
}

static const char *file_name(const struct source *s, const struct kmeta_sym *f)
{
	return prof_or_dash(cu_func_file(s->cus, s->img, f));
}

static void write_place(FILE *f, const struct source *s, const struct portable_place *pl)
{
	fprintf(f, "%u.%u.%u", s->index[pl->func], pl->block, pl->insn);
	if (pl->delta)
		fprintf(f, "+%u", pl->delta);
}

struct writing {
	struct source *s;
	const struct prof *p;
	struct portable_rec *recs;	/* places in s->syms order, until renumbered */
	size_t nr_recs, dropped;
};

static void write_funcs(FILE *f, const struct writing *w)
{
	const struct source *s = w->s;

	for (size_t i = 0; i < s->nr; i++) {
		const struct hash_func *hf = &s->hfs[i];

		if (s->index[i] == UINT32_MAX)
			continue;
		fprintf(f, "function %s %s %016" PRIx64 " %u %u\n", s->syms[i]->name,
			file_name(s, s->syms[i]), hf->hash, hf->size, hf->nr_blocks);
		for (uint32_t b = 0; b < hf->nr_blocks; b++)
			fprintf(f, "block %u %u %016" PRIx64 " %016" PRIx64 "\n", hf->blocks[b].off,
				hf->blocks[b].nr_insns, hf->blocks[b].strict, hf->blocks[b].loose);
	}
}

static int write_portable(FILE *f, const void *arg)
{
	const struct writing *w = arg;
	const struct prof *p = w->p;

	fprintf(f, "# kbolt portable profile\nkbolt-portable 2\nbuild-id %s\nrelease %s\n"
		"recorder %s\n", prof_or_dash(p->build_id), prof_or_dash(p->release),
		prof_or_dash(p->recorder));
	fprintf(f, "# %zu records, %zu left out: an end outside the code of any function\n",
		w->nr_recs + w->dropped, w->dropped);
	write_funcs(f, w);
	for (size_t i = 0; i < w->nr_recs; i++) {
		const struct portable_rec *r = &w->recs[i];

		fputs(r->kind == PK_FALLTHROUGH ? "F " : "B ", f);
		write_place(f, w->s, &r->from);
		fputc(' ', f);
		write_place(f, w->s, &r->to);
		fprintf(f, " %" PRIu64, r->count);
		if (r->kind != PK_FALLTHROUGH)
			fprintf(f, " %s", prof_kind_name(r->kind));
		fputc('\n', f);
	}
	return 0;
}

/* Names written as words: a blank in one would make another file of it */
static int check_names(const struct source *s, const char *path)
{
	for (size_t i = 0; i < s->nr; i++) {
		if (s->index[i] == UINT32_MAX || (!strpbrk(s->syms[i]->name, BLANKS) &&
						  !strpbrk(file_name(s, s->syms[i]), BLANKS)))
			continue;
		pr_err(path, "function '%s' (file '%s'): a blank in the name, which the portable "
		       "format cannot hold", s->syms[i]->name, file_name(s, s->syms[i]));
		return -EINVAL;
	}
	return 0;
}

int portable_write(struct kmeta_image *img, const struct prof *p, const char *out)
{
	struct cu_paths cus;
	struct source s = { .img = img, .cus = &cus };
	struct writing w = { .s = &s, .p = p };
	uint32_t next = 0;
	int err;

	err = cu_paths_read(img, &cus);
	if (err)
		return err;
	func_hash_init(img, &s.ctx);
	collect_funcs(&s, p);
	w.recs = xcalloc(p->nr_edges ? p->nr_edges : 1, sizeof(*w.recs));
	for (size_t i = 0; i < s.nr; i++)
		s.index[i] = UINT32_MAX;
	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_edge *e = &p->edges[i];
		struct portable_rec *r = &w.recs[w.nr_recs];

		if (!find_place(&s, e->from, &r->from) || !find_place(&s, e->to, &r->to)) {
			w.dropped++;
			continue;
		}
		r->count = e->count;
		r->kind = e->kind;
		s.index[r->from.func] = s.index[r->to.func] = 0;	/* used */
		w.nr_recs++;
	}
	for (size_t i = 0; i < s.nr; i++)	/* numbered by address, the used ones only */
		if (s.index[i] != UINT32_MAX)
			s.index[i] = next++;
	err = check_names(&s, out);	/* asks every function's file first */
	if (!err)
		err = cu_paths_check(&cus, img);
	if (!err && !w.nr_recs) {
		pr_err(p->path, "none of its %zu records lies in %s's functions: nothing to write",
		       p->nr_edges, img->path);
		err = -EINVAL;
	}
	if (!err)
		err = outfile_write(out, write_portable, &w);
	for (size_t i = 0; i < s.nr; i++)
		func_hash_free(&s.hfs[i]);
	free(s.hfs);
	free(s.syms);
	free(s.index);
	free(w.recs);
	cu_paths_free(&cus);
	return err;
}

/* Reading */

static bool portable_probe(const char *first_line)
{
	return !strncmp(first_line, "# kbolt portable", 16) ||
	       !strncmp(first_line, "kbolt-portable ", 15);
}

static int parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;
	int err = prof_parse_number(s, 10, UINT32_MAX, &x);

	*v = x;
	return err;
}

static int parse_hash(const char *s, uint64_t *v)
{
	return strlen(s) == 16 ? prof_parse_number(s, 16, UINT64_MAX, v) : -EINVAL;
}

/* "F.B.I" or "F.B.I+D", decimal, a place the functions above have */
static int parse_place(const struct portable *pp, const char *s, struct portable_place *pl)
{
	char buf[64], *plus, *dot1, *dot2;
	const struct portable_func *f;

	snprintf(buf, sizeof(buf), "%s", s);
	pl->delta = 0;
	plus = strchr(buf, '+');
	if (plus) {
		*plus = '\0';
		if (parse_u32(plus + 1, &pl->delta) || !pl->delta)
			return -EINVAL;
	}
	dot1 = strchr(buf, '.');
	dot2 = dot1 ? strchr(dot1 + 1, '.') : NULL;
	if (!dot2 || strchr(dot2 + 1, '.'))
		return -EINVAL;
	*dot1 = *dot2 = '\0';
	if (parse_u32(buf, &pl->func) || parse_u32(dot1 + 1, &pl->block) ||
	    parse_u32(dot2 + 1, &pl->insn))
		return -EINVAL;
	if (pl->func >= pp->nr_funcs)
		return -ERANGE;
	f = &pp->funcs[pl->func];
	if (pl->block >= f->nr_blocks || pl->insn >= f->blocks[pl->block].nr_insns)
		return -ERANGE;
	return 0;
}

static int parse_record(struct portable *pp, char **field, int nr)
{
	struct portable_rec r = { 0 };
	int k = PK_FALLTHROUGH, err;

	if (strlen(field[0]) != 1 || nr != (field[0][0] == 'B' ? 5 : 4))
		return -EINVAL;
	if (field[0][0] == 'B' && (k = prof_kind_from_name(field[4])) <= PK_FALLTHROUGH)
		return -EINVAL;
	err = parse_place(pp, field[1], &r.from);
	if (!err)
		err = parse_place(pp, field[2], &r.to);
	if (!err && prof_parse_number(field[3], 10, UINT64_MAX, &r.count))
		err = -EINVAL;
	if (err)
		return err;
	r.kind = k;
	GROW(pp->recs, pp->cap_recs, pp->nr_recs + 1);
	pp->recs[pp->nr_recs++] = r;
	return 0;
}

/* The last function has all its blocks */
static bool func_complete(const struct portable *pp, uint32_t nr_read)
{
	return !pp->nr_funcs || nr_read == pp->funcs[pp->nr_funcs - 1].nr_blocks;
}

static int parse_function(struct portable *pp, char **field, int nr)
{
	struct portable_func f = { 0 };

	if (nr != 6 || parse_hash(field[3], &f.hash) || parse_u32(field[4], &f.size) ||
	    parse_u32(field[5], &f.nr_blocks) || !f.nr_blocks)
		return -EINVAL;
	f.name = xstrdup(field[1]);
	f.file = xstrdup(strcmp(field[2], "-") ? field[2] : "");
	f.blocks = xcalloc(f.nr_blocks, sizeof(*f.blocks));
	GROW(pp->funcs, pp->cap_funcs, pp->nr_funcs + 1);
	pp->funcs[pp->nr_funcs++] = f;
	return 0;
}

static int parse_block(struct portable *pp, char **field, int nr, uint32_t *nr_read)
{
	struct portable_func *f = pp->nr_funcs ? &pp->funcs[pp->nr_funcs - 1] : NULL;
	struct portable_block b;

	if (!f || *nr_read >= f->nr_blocks || nr != 5 || parse_u32(field[1], &b.off) ||
	    parse_u32(field[2], &b.nr_insns) || parse_hash(field[3], &b.strict) ||
	    parse_hash(field[4], &b.loose) || !b.nr_insns || b.off >= f->size ||
	    (*nr_read ? b.off <= f->blocks[*nr_read - 1].off : b.off != 0))
		return -EINVAL;
	f->blocks[(*nr_read)++] = b;
	return 0;
}

static int parse_header(struct prof *p, char **field, int nr, bool *seen_version)
{
	char *dest = NULL;
	size_t size = 0;

	if (nr < 2)
		return -EINVAL;
	if (!strcmp(field[0], "kbolt-portable")) {
		*seen_version = true;
		/* 1 wrote a basename for FILE, 2 a path: portable_match.c compares either */
		return strcmp(field[1], "1") && strcmp(field[1], "2") ? -EPROTO : 0;
	}
	if (!strcmp(field[0], "build-id"))
		dest = p->build_id, size = sizeof(p->build_id);
	else if (!strcmp(field[0], "release"))
		dest = p->release, size = sizeof(p->release);
	else if (!strcmp(field[0], "recorder"))
		dest = p->recorder, size = sizeof(p->recorder);
	else
		return -EINVAL;
	snprintf(dest, size, "%s", strcmp(field[1], "-") ? field[1] : "");
	return 0;
}

static int parse_line(struct prof *p, char *line, bool *seen_version, uint32_t *nr_read)
{
	struct portable *pp = p->portable;
	char copy[512], *field[MAX_FIELDS];
	int nr;

	snprintf(copy, sizeof(copy), "%s", line);
	nr = prof_split_fields(copy, BLANKS, field, MAX_FIELDS);
	if (!nr || nr > MAX_FIELDS)
		return -EINVAL;
	if (!strcmp(field[0], "block"))
		return *seen_version ? parse_block(pp, field, nr, nr_read) : -EINVAL;
	if (!func_complete(pp, *nr_read))
		return -EINVAL;		/* fewer blocks than the function said */
	if (!strcmp(field[0], "function")) {
		*nr_read = 0;
		return *seen_version ? parse_function(pp, field, nr) : -EINVAL;
	}
	if (!strcmp(field[0], "B") || !strcmp(field[0], "F"))
		return *seen_version ? parse_record(pp, field, nr) : -EINVAL;
	return parse_header(p, field, nr, seen_version);
}

static int portable_read(struct prof *p, FILE *f)
{
	char line[512];
	bool seen_version = false;
	uint32_t nr_read = 0;
	size_t lineno = 0;
	int err;

	p->portable = xcalloc(1, sizeof(*p->portable));
	p->need_match = true;
	while ((err = prof_read_line(p, f, line, sizeof(line), &lineno)) > 0) {
		if (line[0] == '#' || line[0] == '\0')
			continue;
		err = parse_line(p, line, &seen_version, &nr_read);
		if (err) {
			pr_err(p->path, "line %zu: %s: %s", lineno,
			       err == -EPROTO ? "unsupported format version" :
			       err == -ERANGE ? "a place not in the functions above" : "malformed",
			       line);
			return err;
		}
	}
	if (!err && !seen_version) {
		pr_err(p->path, "no 'kbolt-portable' version line: not a portable profile");
		err = -EINVAL;
	} else if (!err && !func_complete(p->portable, nr_read)) {
		pr_err(p->path, "line %zu: the last function has fewer blocks than it says", lineno);
		err = -EINVAL;
	}
	return err;
}

static void portable_release(struct prof *p)
{
	portable_free(p->portable);
	p->portable = NULL;
}

const struct prof_format prof_format_portable = {
	.name = "portable",
	.probe = portable_probe,
	.read = portable_read,
	.release = portable_release,
};
