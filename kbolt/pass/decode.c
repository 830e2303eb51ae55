// SPDX-License-Identifier: GPL-2.0
/*
 * Decoding every function into ops.  An op is one instruction, or one whole alternative
 * or paravirt site: the kernel overwrites those bytes at boot with code of its own
 * length, so they move as a unit and only the displacements of their original branches
 * are re-targeted (kept as fixes).  Functions kbolt must not touch are marked here:
 * code in areas with a fixed layout, undecodable bytes, symbols in the middle.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../lib/parallel.h"
#include "../model/opt.h"
#include "decode.h"

static bool matches_any(const char *name, const char **globs, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		if (!fnmatch(globs[i], name, 0))
			return true;
	return false;
}

static uint64_t sym_addr(struct kmeta_image *img, const char *name)
{
	struct kmeta_sym *s = kmeta_find_sym_by_name(img, name);

	return s ? s->addr : 0;
}

/* Code whose layout the kernel depends on, or that runs before it is itself */
#define NR_FIXED_AREAS 4

static void find_fixed_areas(struct opt *opt, struct kmeta_range area[NR_FIXED_AREAS])
{
	static const char *const bounds[][2] = {
		{ "__entry_text_start", "__entry_text_end" },
		{ "__static_call_text_start", "__static_call_text_end" },
		{ "__indirect_thunk_start", "__indirect_thunk_end" },
	};
	struct kmeta_image *img = opt->img;

	for (size_t i = 0; i < ARRAY_SIZE(bounds); i++) {
		uint64_t a = sym_addr(img, bounds[i][0]), b = sym_addr(img, bounds[i][1]);

		area[i] = a && b ? (struct kmeta_range){ a, b } : (struct kmeta_range){ 0, 0 };
	}
	area[ARRAY_SIZE(bounds)] = (struct kmeta_range){ img->text_start, opt->head_end };
}

static bool in_fixed_area(const struct kmeta_range area[NR_FIXED_AREAS], uint64_t addr)
{
	for (size_t i = 0; i < NR_FIXED_AREAS; i++)
		if (addr >= area[i].start && addr < area[i].end)
			return true;
	return false;
}

static void add_fix(struct func *f, const struct fix *x)
{
	GROW(f->fixes, f->fixes_cap, f->nr_fixes + 1);
	f->fixes[f->nr_fixes++] = *x;
}

static void op_from_insn(struct op *op, const struct kmeta_insn *in, uint64_t start)
{
	memset(op, 0, sizeof(*op));
	op->off = in->addr - start;
	op->len = in->len;
	op->kind = in->kind;
	op->target = in->target;
	op->rel_off = in->rel_off;
	op->rel_size = in->rel_size;
	op->insn_flags = in->flags;
}

/*
 * Turn the instructions of [r->start, r->end) into one unit op; their displacements
 * become fixes.  Returns the index of the first instruction after it, or 0 if the site
 * does not end on an instruction boundary inside the function.
 */
static size_t make_unit(struct func *f, const struct kmeta_insn *insns, size_t i, size_t nr,
			const struct kmeta_range *r)
{
	uint64_t start = f->sym->addr;
	struct op *op = &f->ops[f->nr_ops];

	if (r->end - r->start > 255 || r->end > start + f->sym->size)
		return 0;
	op_from_insn(op, &insns[i], start);
	op->kind = KI_OTHER;
	op->target = 0;
	op->rel_off = op->rel_size = 0;
	op->len = r->end - r->start;
	op->flags = OP_UNIT;
	for (; i < nr && insns[i].addr < r->end; i++) {
		const struct kmeta_insn *in = &insns[i];
		struct fix x = {
			.op = f->nr_ops, .field_off = in->addr - r->start + in->rel_off,
			.size = in->rel_size, .next_off = in->addr + in->len - r->start,
			.pcrel = true, .target = in->target,
		};

		if (in->rel_size)
			add_fix(f, &x);
	}
	if (i == nr ? insns[nr - 1].addr + insns[nr - 1].len != r->end : insns[i].addr != r->end)
		return 0;
	f->nr_ops++;
	return i;
}

/* First patch site ending after addr */
static size_t first_site_after(const struct kmeta_range *r, size_t nr, uint64_t addr)
{
	return upper_bound_u64(r, nr, sizeof(*r), offsetof(struct kmeta_range, end), addr);
}

static bool build_ops(struct opt *opt, struct func *f, const struct kmeta_insn *insns,
		      size_t nr)
{
	const struct kmeta_range *sites;
	size_t nr_sites, s, i = 0;

	if (kmeta_patch_sites(opt->img, &sites, &nr_sites))
		nr_sites = 0;
	s = first_site_after(sites, nr_sites, f->sym->addr);
	f->ops = xcalloc(nr, sizeof(*f->ops));
	while (i < nr) {
		const struct kmeta_insn *in = &insns[i];

		while (s < nr_sites && sites[s].end <= in->addr)
			s++;
		if (s < nr_sites && sites[s].start < in->addr + in->len &&
		    sites[s].start != in->addr) {
			skip_func(opt, f, SKIP_SPLIT_SITE, sites[s].start);
			return false;
		}
		if (s < nr_sites && sites[s].start == in->addr) {
			i = make_unit(f, insns, i, nr, &sites[s]);
			if (!i) {
				skip_func(opt, f, SKIP_SPLIT_SITE, sites[s].start);
				return false;
			}
			continue;
		}
		op_from_insn(&f->ops[f->nr_ops++], in, f->sym->addr);
		i++;
	}
	return true;
}

static void decode_func(struct opt *opt, struct func *f)
{
	struct kmeta_insn *insns;
	uint64_t bad;
	size_t nr;

	if (kmeta_insn_decode_range(opt->img, f->sym->addr, f->sym->addr + f->sym->size,
				    &insns, &nr, &bad) || bad || !nr) {
		skip_func(opt, f, SKIP_UNDECODABLE, bad ? bad : f->sym->addr);
		free(insns);
		return;
	}
	f->decoded = build_ops(opt, f, insns, nr);
	if (!f->decoded) {
		free(f->ops);
		f->ops = NULL;
		f->nr_ops = 0;
	}
	free(insns);
}

/* Any symbol (a label, an object, another function) strictly inside a function */
static void mark_symbols_inside(struct opt *opt)
{
	struct kmeta_image *img = opt->img;

	for (size_t i = 0; i < img->nr_sorted; i++) {
		struct kmeta_sym *s = img->sorted[i];
		struct func *f;

		if (s->type == STT_SECTION || s->type == STT_FILE || s->undefined_stub)
			continue;
		f = find_func_containing(opt, s->addr);
		if (f && s->addr != f->sym->addr)
			skip_func(opt, f, SKIP_SYM_INSIDE, s->addr);
	}
}

/* A function that decoded and may be rewritten (an owner, not an alias) */
static bool is_decoded_rewritable(const struct func *f)
{
	return f->decoded && !f->alias && f->skip == SKIP_NONE;
}

/*
 * The first pass: the scan for bytes that may point into the functions of todo[], in
 * parts, then their decoding.  The scan cannot know which of them will decode, so it
 * records every hit; keep_hits() keeps those into functions that did.
 */
struct first_pass {
	struct opt *opt;
	struct func **todo;
	size_t nr_todo;
	struct kmeta_range *ranges;	/* of todo's functions that may be rewritten */
	size_t nr_ranges;
	struct kmeta_range *hits;	/* at (start) -> target (end) */
	size_t nr_hits, cap_hits;
	int scan_err;
};

static void record_hit(void *ctx, uint64_t at, uint64_t target)
{
	struct first_pass *p = ctx;

	GROW(p->hits, p->cap_hits, p->nr_hits + 1);
	p->hits[p->nr_hits++] = (struct kmeta_range){ at, target };
}

static void decode_item(void *arg, size_t i, unsigned int worker)
{
	struct first_pass *p = arg;

	decode_func(p->opt, p->todo[i]);
}

/*
 * The hits that matter: into a function that decoded and may be rewritten, from bytes
 * whose references are not known exactly (not a decoded function, not a replacement).
 * Lite: the functions they are in are decoded too.
 */
static void keep_hits(struct first_pass *p)
{
	struct opt *opt = p->opt;
	size_t n = 0, nr_want = 0;

	for (size_t k = 0; k < p->nr_hits; k++) {
		struct func *f = find_func_containing(opt, p->hits[k].end);
		struct func *g = find_func_containing(opt, p->hits[k].start);

		if (!f || !is_decoded_rewritable(f) || (g && g->decoded) ||
		    (!g && kmeta_is_alt_code(opt->img, p->hits[k].start)))
			continue;
		if (opt->lite && g && !g->want_decode) {
			g->want_decode = true;
			p->todo[nr_want++] = g;
		}
		p->hits[n++] = p->hits[k];
	}
	p->nr_hits = n;
	p->nr_todo = nr_want;
}

/*
 * Code that may point into a function to be rewritten and was not decoded as a whole
 * (an assembler symbol, a function with bytes capstone does not know after the
 * reference), unless a sweep of it shows it does not: the function it points into stays
 */
static void skip_undecoded_refs(struct first_pass *p)
{
	for (size_t k = 0; k < p->nr_hits; k++) {
		struct func *g = find_func_containing(p->opt, p->hits[k].start);
		struct func *f = find_func_containing(p->opt, p->hits[k].end);

		if ((!g || !g->decoded) && f &&
		    kmeta_swept_may_ref(p->opt->img, p->hits[k].start, p->hits[k].end))
			skip_func(p->opt, f, SKIP_UNDECODED_REF, p->hits[k].end);
	}
}

/*
 * Scan for code that may point into the functions that todo() picks and decode them,
 * each in parallel; then, in lite mode, decode that code too (the functions it is in);
 * where it cannot be (bytes outside any function, or undecodable), the function it may
 * point into is left alone.
 */
static int decode_and_scan(struct opt *opt, bool (*todo)(const struct func *f))
{
	struct first_pass p = { .opt = opt };
	const struct kmeta_range *sites;
	size_t nr_sites;

	p.todo = xmalloc(opt->nr_funcs * sizeof(*p.todo));
	p.ranges = xmalloc(opt->nr_funcs * sizeof(*p.ranges));
	for (size_t i = 0; i < opt->nr_funcs; i++) {
		struct func *f = &opt->funcs[i];

		if (!todo(f))
			continue;
		p.todo[p.nr_todo++] = f;
		if (f->skip == SKIP_NONE)
			p.ranges[p.nr_ranges++] = (struct kmeta_range){
				f->sym->addr, f->sym->addr + f->sym->size };
	}
	kmeta_patch_sites(opt->img, &sites, &nr_sites);	/* built once, before the threads */
	p.scan_err = parallel_scan_rel_refs(opt->img, p.ranges, p.nr_ranges, record_hit, &p);
	parallel_for(p.nr_todo, decode_item, &p);
	if (p.scan_err) {
		pr_err(opt->img->path, "cannot scan the code for references: %s",
		       strerror(-p.scan_err));
	} else {
		keep_hits(&p);
		parallel_for(p.nr_todo, decode_item, &p);
		skip_undecoded_refs(&p);
	}
	free(p.todo);
	free(p.ranges);
	free(p.hits);
	return p.scan_err;
}

/* Lite: the functions with profile weight (the others cannot matter to the rewrite) */
static bool has_weight(const struct func *f)
{
	return !f->alias && f->skip == SKIP_NONE && f->weight;
}

/* Every function that can be decoded is, skipped or not: its branches may point into others */
static bool is_owner(const struct func *f)
{
	return !f->alias;
}

static bool is_endbr64(struct kmeta_image *img, uint64_t addr)
{
	static const unsigned char endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	const unsigned char *p = kmeta_bytes_at(img, addr, sizeof(endbr64));

	return p && !memcmp(p, endbr64, sizeof(endbr64));
}

/*
 * Head text ends where the first function with an ftrace call site starts: at +0, or
 * at +4 after the endbr64 of an IBT kernel (6.2+).
 */
static uint64_t find_head_end(struct kmeta_image *img)
{
	struct kmeta_sym *s = kmeta_find_sym_by_name(img, "__fentry__");
	uint64_t best = 0;

	for (size_t i = 0; s && i < img->nr_funcs; i++) {
		struct kmeta_insn in;
		uint64_t a = img->funcs[i]->addr;

		if (a < img->text_start)
			continue;
		if (is_endbr64(img, a))		/* IBT: the fentry call follows endbr64 */
			a += 4;
		if (!kmeta_insn_decode(img, a, &in) && in.kind == KI_CALL && in.target == s->addr) {
			best = img->funcs[i]->addr;
			break;
		}
	}
	return best;
}

/* The functions, their aliases, and the ones never to touch (options, areas, symbols) */
void decode_init_funcs(struct opt *opt)
{
	struct kmeta_image *img = opt->img;
	const struct opt_options *o = opt->o;
	struct kmeta_range area[NR_FIXED_AREAS];

	opt->nr_funcs = img->nr_funcs;
	opt->funcs = xcalloc(img->nr_funcs, sizeof(*opt->funcs));
	opt->func_span = xcalloc(img->nr_funcs, sizeof(*opt->func_span));
	opt->head_end = find_head_end(img);
	for (size_t i = 0; i < img->nr_funcs; i++) {
		struct func *f = &opt->funcs[i];

		f->sym = img->funcs[i];
		if (i && f->sym->addr == img->funcs[i - 1]->addr) {
			f->alias = true;
			if (f->sym->size != img->funcs[i - 1]->size)
				skip_func(opt, f - 1, SKIP_SYM_INSIDE, f->sym->addr);
		}
		/* aliases follow the function they repeat, and stand for it */
		opt->func_span[i].owner = f->alias ? opt->func_span[i - 1].owner : i;
		opt->func_span[i].start = f->sym->addr;
		opt->func_span[i].end = opt->funcs[opt->func_span[i].owner].sym->addr +
					opt->funcs[opt->func_span[i].owner].sym->size;
	}
	find_fixed_areas(opt, area);
	for (size_t i = 0; i < opt->nr_funcs; i++) {
		struct func *f = &opt->funcs[i];
		const char *name = f->sym->name;

		if (f->alias)
			continue;
		/* __pfx_/__cfi_ (kmeta_is_padding_sym()): not functions, their bytes stay */
		if (kmeta_is_padding_sym(name)) {
			f->pad = true;
			skip_func(opt, f, SKIP_PADDING, f->sym->addr);
		} else if ((o->nr_funcs && !matches_any(name, o->funcs, o->nr_funcs)) ||
		    matches_any(name, o->skip_funcs, o->nr_skip_funcs))
			skip_func(opt, f, SKIP_FILTERED, f->sym->addr);
		else if (in_fixed_area(area, f->sym->addr) || !strcmp(name, "pvh_start_xen"))
			skip_func(opt, f, SKIP_AREA, f->sym->addr);
	}
	mark_symbols_inside(opt);
}

int decode_funcs(struct opt *opt)
{
	return decode_and_scan(opt, opt->lite ? has_weight : is_owner);
}
