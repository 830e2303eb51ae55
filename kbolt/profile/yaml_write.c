// SPDX-License-Identifier: GPL-2.0
/*
 * A profile of a vmlinux written as BOLT's YAML (bolt_yaml.h; Documentation/
 * profile-format.rst, "What kbolt writes"), for llvm-bolt -data with
 * -profile-ignore-hash.  Block ids index llvm-bolt's own CFG in address order
 * (dfs-order false), which is not kbolt's (pass/cfg.c): it is rebuilt here by the rules
 * of BOLT's BinaryFunction::buildCFG().  A block starts at the function's entry, at
 * the target of a direct branch inside the function, and after a jcc, jmp, ret,
 * indirect jump, ud2 (not in a kernel) or hlt, not after a call; but a jmp inside the
 * function right after a jcc joins the jcc's block (not after a conditional tail
 * call; a tail jump never joins).  So int3 padding after a ret is a block of its own.
 * In a kernel, llvm-bolt's Linux support adds jump labels and exception fixups, and
 * builds no CFG of some functions (has_no_cfg()): written with nblocks 0.  insns counts
 * every instruction, nops included, and a lock prefix as one of its own, as LLVM
 * decodes it.  Each record becomes a successor of its block (a fall-through range
 * one for each block boundary it crosses) or a call at an offset into its block; a
 * record with no place in these blocks (a branch from inside a block or into one, a
 * transfer into the middle of another function, code of no function) is left out
 * and counted in one warning.  Returns and interrupts have no record in BOLT's YAML,
 * nor has it in an LBR profile samples: those are left out unsaid, as BOLT's writer
 * leaves them out.  A block's hash holds its offset in its low 16 bits, as BOLT's
 * BlendedBlockHash does (which is how kbolt's reader, yaml_map.c, places it), and 0
 * above, where BOLT hashes LLVM opcode numbers kbolt does not have; function hashes are
 * 0 (llvm-bolt needs -profile-ignore-hash).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../kmeta/table.h"
#include "bolt_yaml.h"
#include "profile_match.h"

#define NO_ADDR UINT64_MAX
#define SUCC UINT32_MAX		/* wrec.off of a successor */
#define LABEL 1			/* bits of build_blocks()'s marks, per byte */
#define INSN_START 2

/* Reasons place_*() give for a record BOLT's YAML has no place for at all: said nowhere */
static const char SILENT[] = "a return or an interrupt";

/* A block of llvm-bolt's CFG */
struct wblock {
	uint64_t start, last;	/* addresses of its first and last instruction */
	uint64_t jcc, jcc_target;	/* "jcc; jmp" in one block: the jcc; else NO_ADDR */
	uint32_t nr_insns;	/* as LLVM counts them */
	bool falls_through;	/* into the next block */
	uint64_t in, out;	/* the counts of the successor records into it and out */
	uint64_t events;	/* a profile of samples: those in the block */
};

/*
 * A successor (off SUCC, to: its bid) or a call off bytes into the block (to: the
 * callee's index in img->funcs, or past those, img->nr_funcs + its index in wctx.ext)
 */
struct wrec {
	uint32_t bid, to, off;
	uint64_t count;
};

struct wfunc {
	struct kmeta_sym *sym;
	size_t idx;		/* in img->funcs */
	const char *why;	/* why its blocks are not known; NULL */
	bool no_cfg;		/* llvm-bolt builds no CFG of it: written with nblocks 0 */
	struct wblock *blocks;
	size_t nr_blocks;
	struct wrec *recs;
	size_t nr_recs, cap_recs;
	uint64_t exec;		/* entries: calls, tail calls, branches from code of no function */
	uint32_t fid;		/* from 1, once numbered; 0: not written */
};

/* A jump-label site (__jump_table): a nop or a jmp in the file, patched at run time */
struct wlabel {
	uint64_t site, target;
};

struct wctx {
	struct kmeta_image *img;
	const struct prof *p;
	bool kernel;		/* llvm-bolt takes img for a Linux kernel */
	struct wlabel *jls;	/* by site */
	size_t nr_jls;
	uint64_t *fixups;	/* __ex_table's fixups, sorted */
	size_t nr_fixups;
	uint64_t *split;	/* functions with a .cold part, by address */
	size_t nr_split;
	/*
	 * Callees written without a profile, named by fid only: code of no function
	 * symbol (the retpoline thunks), functions whose blocks are not known
	 */
	struct wext {
		struct kmeta_sym *sym;
		uint32_t fid;
	} *ext;
	size_t nr_ext, cap_ext;
	struct wfunc **funcs;	/* by index in img->funcs, made when a record needs one */
	bool samples;
	size_t dropped;
	uint64_t dropped_weight;
	const struct prof_edge *first;
	const char *first_why;
};

static int cmp_label(const void *a, const void *b)
{
	const struct wlabel *x = a, *y = b;

	return (x->site > y->site) - (x->site < y->site);
}

static int cmp_addr(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Entry e of t, if a jump label or an exception fixup, kept */
static void add_table_entry(struct wctx *c, struct kmeta_table *t, const struct kmeta_entry *e,
			    size_t *cap_jls, size_t *cap_fixups)
{
	if (kmeta_table_has(t, TR_JUMP_LABEL)) {
		GROW(c->jls, *cap_jls, c->nr_jls + 1);
		c->jls[c->nr_jls++] = (struct wlabel){ e->site, kmeta_table_rewrite_value(t, e) };
		return;
	}
	if (strcmp(t->desc->name, "ex_table"))
		return;
	for (unsigned int k = 0; k < TABLE_MAX_FIELDS && t->layout->fields[k].name; k++)
		if (t->layout->fields[k].role == FR_CODE) {	/* the fixup */
			GROW(c->fixups, *cap_fixups, c->nr_fixups + 1);
			c->fixups[c->nr_fixups++] = e->val[k];
		}
}

/*
 * What llvm-bolt's Linux support (LinuxKernelRewriter) changes in its CFG, sorted: each
 * jump-label site becomes a conditional branch to its target (printed "jit"), which
 * ends a block and starts one at its target; each exception fixup starts a block.
 * 0, or -EINVAL after kmeta reported an unreadable table.
 */
static int read_tables(struct wctx *c)
{
	size_t cap_jls = 0, cap_fixups = 0, cap_split = 0;

	for (unsigned int d = 0; c->kernel && d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *t = kmeta_table_get(c->img, kmeta_table_descs[d]);
		struct kmeta_entry e;

		if (!t)
			return -EINVAL;
		for (size_t k = 0; t->present && k < t->nr_slots; k++) {
			if (kmeta_table_read_entry(t, k, &e))
				return -EINVAL;
			if (!e.filler)
				add_table_entry(c, t, &e, &cap_jls, &cap_fixups);
		}
	}
	for (size_t i = 0; i < c->img->nr_funcs; i++)
		if (c->img->funcs[i]->parent) {
			GROW(c->split, cap_split, c->nr_split + 1);
			c->split[c->nr_split++] = c->img->funcs[i]->parent->addr;
		}
	sort_array(c->jls, c->nr_jls, sizeof(*c->jls), cmp_label);
	sort_array(c->fixups, c->nr_fixups, sizeof(*c->fixups), cmp_addr);
	sort_array(c->split, c->nr_split, sizeof(*c->split), cmp_addr);
	return 0;
}

/* in as llvm-bolt sees it: a jump-label site a jcc to the label's target */
static void as_bolt_sees(const struct wctx *c, struct kmeta_insn *in)
{
	struct wlabel key = { in->addr, 0 };
	const struct wlabel *l = search_array(&key, c->jls, c->nr_jls, sizeof(key), cmp_label);

	if (l) {
		in->kind = KI_JCC;
		in->target = l->target;
	}
}

/* hlt: LLVM's X86 BOLT takes it for a terminator (evaluate.rst, native_safe_halt) */
static bool is_hlt(struct kmeta_image *img, const struct kmeta_insn *in)
{
	const unsigned char *p = kmeta_bytes_at(img, in->addr, in->len);

	return in->kind == KI_OTHER && p && p[in->len - 1] == 0xf4 && in->len <= 2;
}

/*
 * Does in end a block in BOLT's CFG (MCPlusBuilder::isTerminator())?  ud2 does but in
 * a kernel, where llvm-bolt knows that BUG() and WARN() may resume.
 */
static bool is_terminator(const struct wctx *c, const struct kmeta_insn *in)
{
	if (in->kind == KI_TRAP && (in->flags & KIF_UD))
		return !c->kernel;
	if (in->kind == KI_TRAP)
		return !(in->flags & KIF_INT);	/* iret, sysret: not int3 */
	return in->kind != KI_OTHER && in->kind != KI_CALL && in->kind != KI_ICALL ?
	       true : is_hlt(c->img, in);
}

static bool is_inside(const struct kmeta_sym *sym, uint64_t addr)
{
	return addr >= sym->addr && addr < sym->addr + kmeta_elf_size(sym);
}

/*
 * Does x, after prev which ended a block, join prev's block?  BOLT's buildCFG() keeps
 * an unconditional jump to its own function (a tail jump is a call to BOLT) in the
 * block before it unless that ends in an indirect jump, such a jump, a conditional
 * tail call or a return.
 */
static bool joins(const struct kmeta_sym *sym, const struct kmeta_insn *prev,
		  const struct kmeta_insn *x)
{
	if (x->kind != KI_JMP || !is_inside(sym, x->target))
		return false;
	if (prev->kind == KI_JMP && is_inside(sym, prev->target))
		return false;
	if (prev->kind == KI_JCC && !is_inside(sym, prev->target))
		return false;
	return prev->kind != KI_IJMP && prev->kind != KI_RET;
}

/*
 * Each byte of the function: LABEL if a branch of it or an exception fixup goes there,
 * INSN_START; NULL if a label is inside an instruction
 */
static unsigned char *mark_labels(const struct wctx *c, const struct kmeta_sym *sym,
				  const struct kmeta_insn *in, size_t nr)
{
	uint64_t size = kmeta_elf_size(sym);
	unsigned char *mark = xcalloc(size + 1, 1);
	size_t lo = 0, hi = c->nr_fixups;

	mark[0] = LABEL;
	while (lo < hi) {	/* the first fixup at or after the function */
		size_t mid = lo + (hi - lo) / 2;

		if (c->fixups[mid] < sym->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < c->nr_fixups && is_inside(sym, c->fixups[lo]); lo++)
		mark[c->fixups[lo] - sym->addr] = LABEL;
	for (size_t i = 0; i < nr; i++) {
		mark[in[i].addr - sym->addr] |= INSN_START;
		if ((in[i].kind == KI_JCC || in[i].kind == KI_JMP) && is_inside(sym, in[i].target))
			mark[in[i].target - sym->addr] |= LABEL;
	}
	for (uint64_t off = 0; off < size; off++)
		if (mark[off] == LABEL) {
			free(mark);
			return NULL;
		}
	return mark;
}

/*
 * Does llvm-bolt-19 leave fn without a CFG ("could not disassemble function", or not
 * simple: written with nblocks 0, as perf2bolt-19 writes it)?  In a kernel, a function
 * split in two (foo and foo.cold) and one with a jump to code of no symbol (the
 * .altinstr_aux of static_cpu_has()) are such; so the 134 of the 6.1 proc profile's
 * functions that llvm-bolt-19 leaves without one are found but 2.
 */
static const char *has_no_cfg(const struct wctx *c, const struct wfunc *fn,
			      const struct kmeta_insn *in, size_t nr)
{
	uint64_t addr = fn->sym->addr;

	if (fn->sym->parent || search_array(&addr, c->split, c->nr_split, sizeof(addr), cmp_addr))
		return "a function llvm-bolt builds no CFG of (one of a .cold part)";
	for (size_t i = 0; c->kernel && i < nr; i++)
		if ((in[i].kind == KI_JMP || in[i].kind == KI_JCC) &&
		    !kmeta_find_func_containing(c->img, in[i].target) &&
		    !kmeta_find_sym_at(c->img, in[i].target))
			return "a function llvm-bolt builds no CFG of (a jump to code of no symbol)";
	return NULL;
}

/* fn's blocks as llvm-bolt builds them; why not */
static const char *build_blocks(struct wctx *c, struct wfunc *fn)
{
	const struct kmeta_sym *sym = fn->sym;
	const struct kmeta_insn *prev = NULL;
	struct kmeta_insn *in = NULL;
	uint64_t bad = 0;
	unsigned char *mark;
	size_t nr = 0, cap = 0;
	bool ended = false;

	if (kmeta_insn_decode_range(c->img, sym->addr, sym->addr + kmeta_elf_size(sym), &in,
				    &nr, &bad) || bad || !nr) {
		free(in);
		return "a function kbolt cannot decode whole";
	}
	for (size_t i = 0; i < nr; i++)
		as_bolt_sees(c, &in[i]);
	fn->why = has_no_cfg(c, fn, in, nr);
	if (fn->why) {
		fn->no_cfg = true;
		free(in);
		return fn->why;
	}
	mark = mark_labels(c, sym, in, nr);
	for (size_t i = 0; mark && i < nr; prev = &in[i++]) {
		struct wblock *b = fn->nr_blocks ? &fn->blocks[fn->nr_blocks - 1] : NULL;

		if (!b || (mark[in[i].addr - sym->addr] & LABEL) ||
		    (ended && !joins(sym, prev, &in[i]))) {
			GROW(fn->blocks, cap, fn->nr_blocks + 1);
			b = &fn->blocks[fn->nr_blocks++];
			*b = (struct wblock){ .start = in[i].addr, .jcc = NO_ADDR,
					      .jcc_target = NO_ADDR };
		} else if (ended) {
			b->jcc = prev->addr;	/* "jcc; jmp", or "ud2; jmp" */
			b->jcc_target = prev->kind == KI_JCC ? prev->target : NO_ADDR;
		}
		b->last = in[i].addr;
		b->nr_insns += yaml_llvm_insns(c->img, &in[i]);
		ended = is_terminator(c, &in[i]);
		b->falls_through = !ended || in[i].kind == KI_JCC;
	}
	free(in);
	free(mark);
	return fn->nr_blocks ? NULL : "a branch into the middle of an instruction";
}

/* The function of img->funcs that addr is in, its blocks built once; NULL if none */
static struct wfunc *func_of(struct wctx *c, uint64_t addr)
{
	long i = kmeta_func_at_or_before(c->img, addr);
	struct wfunc *fn;

	if (i < 0 || !is_inside(c->img->funcs[i], addr))
		return NULL;
	if (c->funcs[i])
		return c->funcs[i];
	fn = c->funcs[i] = xcalloc(1, sizeof(*fn));
	fn->sym = c->img->funcs[i];
	fn->idx = i;
	fn->why = build_blocks(c, fn);
	return fn;
}

/* May fn be written (with its blocks, or nblocks 0)? */
static bool is_listable(const struct wfunc *fn)
{
	return !fn->why || fn->no_cfg;
}

/* The block addr is in (fn's blocks known) */
static size_t find_block(const struct wfunc *fn, uint64_t addr)
{
	size_t lo = 0, hi = fn->nr_blocks;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (fn->blocks[mid].start <= addr)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

static void add_rec(struct wfunc *fn, size_t bid, uint32_t to, uint32_t off, uint64_t count)
{
	GROW(fn->recs, fn->cap_recs, fn->nr_recs + 1);
	fn->recs[fn->nr_recs++] = (struct wrec){ bid, to, off, count };
}

/* A fall-through range: a successor record for each block boundary it crosses */
static const char *place_range(struct wctx *c, const struct prof_edge *e)
{
	struct wfunc *fn = func_of(c, e->from);
	size_t first, last;

	if (!fn)
		return "a fall-through in code of no function";
	if (fn != func_of(c, e->to) || e->to < e->from)
		return "a fall-through that leaves its function";
	if (fn->why)
		return fn->why;
	first = find_block(fn, e->from);
	last = find_block(fn, e->to);
	for (size_t b = first; b < last; b++)
		if (!fn->blocks[b].falls_through)
			return "a fall-through across the end of a block that does not fall through";
	for (size_t b = first; b < last; b++)
		add_rec(fn, b, b + 1, SUCC, e->count);
	return NULL;
}

/* The index in c->ext of a callee without a profile, added if new */
static size_t ext_idx(struct wctx *c, struct kmeta_sym *sym)
{
	for (size_t k = 0; k < c->nr_ext; k++)
		if (c->ext[k].sym == sym)
			return k;
	GROW(c->ext, c->cap_ext, c->nr_ext + 1);
	c->ext[c->nr_ext] = (struct wext){ sym, 0 };
	return c->nr_ext++;
}

/*
 * A call or tail call from block bid of fn to the entry of to, or of a symbol that
 * is no function llvm-bolt gets a profile of: llvm-bolt counts the call all the same
 */
static const char *place_call(struct wctx *c, struct wfunc *fn, size_t bid,
			      const struct prof_edge *e, struct wfunc *to)
{
	uint32_t off = e->from - fn->blocks[bid].start;
	struct kmeta_sym *sym;

	if (to && e->to == to->sym->addr && is_listable(to)) {
		add_rec(fn, bid, to->idx, off, e->count);
		to->exec += e->count;
		return NULL;
	}
	sym = to ? (e->to == to->sym->addr ? to->sym : NULL) : kmeta_find_sym_at(c->img, e->to);
	if (!sym)
		return to ? "a call or jump into the middle of another function" :
		       "a call or tail call to an address no symbol names";
	add_rec(fn, bid, c->img->nr_funcs + ext_idx(c, sym), off, e->count);
	return NULL;
}

/* A return to a function's entry: a retpoline thunk's jump there, an entry */
static const char *place_return(struct wctx *c, const struct prof_edge *e)
{
	struct wfunc *to = func_of(c, e->to);

	if (to && e->to == to->sym->addr && is_listable(to))
		to->exec += e->count;
	return SILENT;
}

/* A branch inside fn: from the end of its block (or a "jcc; jmp" block's jcc) to a block */
static const char *place_branch(struct wfunc *fn, size_t bid, const struct prof_edge *e)
{
	const struct wblock *b = &fn->blocks[bid];
	size_t to = find_block(fn, e->to);

	if (b->last != e->from && (b->jcc != e->from || b->jcc_target != e->to))
		return "a branch from inside one of llvm-bolt's blocks";
	if (fn->blocks[to].start != e->to)
		return "a branch into the middle of one of llvm-bolt's blocks";
	add_rec(fn, bid, to, SUCC, e->count);
	return NULL;
}

static const char *place_transfer(struct wctx *c, const struct prof_edge *e)
{
	struct wfunc *from = func_of(c, e->from), *to = func_of(c, e->to);
	struct kmeta_insn in;
	size_t bid;

	/*
	 * An entry from code of no function, or of one without blocks: counted in the
	 * callee's exec (placed so when the record is kept, below)
	 */
	if ((!from || from->why) && to && to != from && e->to == to->sym->addr &&
	    is_listable(to))
		to->exec += e->count;
	if (!from && to && e->to == to->sym->addr && is_listable(to))
		return NULL;
	if (!from)
		return "a transfer from code of no function";
	if (from->why)
		return from->why;
	if (kmeta_insn_decode(c->img, e->from, &in))
		return "a transfer from no instruction";
	as_bolt_sees(c, &in);
	bid = find_block(from, e->from);
	if (in.kind == KI_RET)
		return place_return(c, e);
	if (in.kind == KI_CALL || in.kind == KI_ICALL)
		return place_call(c, from, bid, e, to);
	if (in.kind != KI_JCC && in.kind != KI_JMP && in.kind != KI_IJMP)
		return "a transfer from an instruction that does not branch in the file "
		       "(a site patched at boot)";
	return to == from ? place_branch(from, bid, e) : place_call(c, from, bid, e, to);
}

static const char *place_sample(struct wctx *c, const struct prof_edge *e)
{
	struct wfunc *fn = func_of(c, e->from);

	if (!fn)
		return "a sample in code of no function";
	if (fn->why)
		return fn->why;
	fn->blocks[find_block(fn, e->from)].events += e->count;
	return NULL;
}

static void place(struct wctx *c, const struct prof_edge *e)
{
	const char *why;

	if (c->samples)
		why = place_sample(c, e);
	else if (e->kind == PK_RET)
		why = place_return(c, e);
	else if (e->kind == PK_SAMPLE || e->kind == PK_INT)
		why = SILENT;
	else if (e->kind == PK_FALLTHROUGH)
		why = place_range(c, e);
	else
		why = place_transfer(c, e);
	if (!why || why == SILENT)
		return;
	if (!c->dropped++) {
		c->first = e;
		c->first_why = why;
	}
	c->dropped_weight += e->count;
}

static int cmp_rec(const void *a, const void *b)
{
	const struct wrec *x = a, *y = b;

	if (x->bid != y->bid)
		return x->bid < y->bid ? -1 : 1;
	if (x->off != y->off)
		return x->off < y->off ? -1 : 1;
	return (x->to > y->to) - (x->to < y->to);
}

/* fn's records summed by (block, offset, target); its blocks' counts in and out */
static void sum_records(struct wfunc *fn)
{
	size_t n = 0;

	sort_array(fn->recs, fn->nr_recs, sizeof(*fn->recs), cmp_rec);
	for (size_t i = 0; i < fn->nr_recs; i++) {
		if (n && !cmp_rec(&fn->recs[n - 1], &fn->recs[i]))
			fn->recs[n - 1].count += fn->recs[i].count;
		else
			fn->recs[n++] = fn->recs[i];
	}
	fn->nr_recs = n;
	for (size_t i = 0; i < n; i++)
		if (fn->recs[i].off == SUCC) {
			fn->blocks[fn->recs[i].bid].out += fn->recs[i].count;
			fn->blocks[fn->recs[i].to].in += fn->recs[i].count;
		}
	if (fn->nr_blocks)
		fn->blocks[0].in += fn->exec;
}

/*
 * A scalar as LLVM's YAML writer writes it: plain if it is letters, digits, '_' and
 * '-' (not first), else single-quoted ('vdso_fault/1')
 */
static void print_scalar(FILE *f, const char *s)
{
	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
		  strlen(s) && *s != '-') {
		fputs(s, f);
		return;
	}
	fputc('\'', f);
	for (; *s; s++)
		fputs(*s == '\'' ? "''" : (char[2]){ *s, 0 }, f);
	fputc('\'', f);
}

static void print_header(FILE *f, struct wctx *c)
{
	char id[128];

	if (kmeta_build_id(c->img, id, sizeof(id)))
		snprintf(id, sizeof(id), "'<unknown>'");
	fputs("---\nheader:\n  profile-version: 1\n  binary-name:     ", f);
	print_scalar(f, c->img->path);
	fprintf(f, "\n  binary-build-id: %s\n  profile-flags:   [ %s ]\n", id,
		c->samples ? "sample" : "lbr");
	fputs("  profile-origin:  kbolt profile-to-bolt\n  profile-events:  ", f);
	print_scalar(f, c->p->event);
	fputs("\n  dfs-order:       false\n  hash-func:       xxh3\nfunctions:\n", f);
}

/* Block bid's calls or successors: "[ { ... }, ... ]" */
static void print_recs(FILE *f, struct wctx *c, const struct wfunc *fn, size_t first,
		       size_t end, bool calls)
{
	const char *sep = "";

	fprintf(f, "        %s[", calls ? "calls:           " : "succ:            ");
	for (size_t i = first; i < end; i++) {
		const struct wrec *r = &fn->recs[i];

		if ((r->off != SUCC) != calls)
			continue;
		if (calls)
			fprintf(f, "%s { off: 0x%X, fid: %u, cnt: %" PRIu64 " }", sep, r->off,
				r->to < c->img->nr_funcs ? c->funcs[r->to]->fid :
				c->ext[r->to - c->img->nr_funcs].fid, r->count);
		else
			fprintf(f, "%s { bid: %u, cnt: %" PRIu64 " }", sep, r->to, r->count);
		sep = ",";
	}
	fputs(" ]\n", f);
}

/* Block bid, its records fn->recs[first..end): if it has a count or a record */
static void print_block(FILE *f, struct wctx *c, const struct wfunc *fn, size_t bid,
			size_t first, size_t end)
{
	const struct wblock *b = &fn->blocks[bid];
	uint64_t exec = b->in > b->out ? b->in : b->out;
	bool calls = false, succs = false;

	for (size_t i = first; i < end; i++)
		*(fn->recs[i].off == SUCC ? &succs : &calls) = true;
	if (!(c->samples ? b->events : exec) && !calls && !succs)
		return;
	fprintf(f, "      - bid:             %zu\n        insns:           %u\n"
		"        hash:            0x%" PRIX64 "\n", bid, b->nr_insns,
		(b->start - fn->sym->addr) & 0xffff);
	if (c->samples)
		fprintf(f, "        events:          %" PRIu64 "\n", b->events);
	else if (exec)
		fprintf(f, "        exec:            %" PRIu64 "\n", exec);
	if (calls)
		print_recs(f, c, fn, first, end, true);
	if (succs)
		print_recs(f, c, fn, first, end, false);
}

static void print_func(FILE *f, struct wctx *c, struct kmeta_sym **by_name,
		       const struct wfunc *fn)
{
	size_t nth = profile_bolt_local_nth(c->img, by_name, fn->sym), r = 0;
	char *name = nth ? xasprintf("%s/%zu", fn->sym->name, nth) : xstrdup(fn->sym->name);

	fputs("  - name:            ", f);
	print_scalar(f, name);
	fprintf(f, "\n    fid:             %u\n    hash:            0x0\n"
		"    exec:            %" PRIu64 "\n    nblocks:         %zu\n%s",
		fn->fid, c->samples ? fn->blocks[0].events : fn->exec, fn->nr_blocks,
		fn->nr_blocks ? "    blocks:\n" : "");
	for (size_t bid = 0; bid < fn->nr_blocks; bid++) {
		size_t end = r;

		while (end < fn->nr_recs && fn->recs[end].bid == bid)
			end++;
		print_block(f, c, fn, bid, r, end);
		r = end;
	}
	free(name);
}

static bool has_profile(const struct wctx *c, const struct wfunc *fn)
{
	if (!is_listable(fn))
		return false;
	for (size_t bid = 0; c->samples && bid < fn->nr_blocks; bid++)
		if (fn->blocks[bid].events)
			return true;
	return !c->samples && (fn->nr_recs || fn->exec);
}

static int cmp_ext(const void *a, const void *b)
{
	const struct wext *x = a, *y = b;

	return (x->sym->addr > y->sym->addr) - (x->sym->addr < y->sym->addr);
}

/*
 * The callees without a profile sorted by address, fids from first on, and the
 * records' indices of them made those of the sorted order: the same output for the
 * same records in any order
 */
static void number_ext(struct wctx *c, uint32_t first)
{
	size_t nr_funcs = c->img->nr_funcs, *now = xcalloc(c->nr_ext + 1, sizeof(*now));

	for (size_t k = 0; k < c->nr_ext; k++)
		c->ext[k].fid = k;	/* for now: the index before sorting */
	sort_array(c->ext, c->nr_ext, sizeof(*c->ext), cmp_ext);
	for (size_t k = 0; k < c->nr_ext; k++) {
		now[c->ext[k].fid] = k;
		c->ext[k].fid = first + k;
	}
	for (size_t i = 0; i < nr_funcs; i++)
		for (size_t r = 0; c->funcs[i] && r < c->funcs[i]->nr_recs; r++) {
			struct wrec *rec = &c->funcs[i]->recs[r];

			if (rec->off != SUCC && rec->to >= nr_funcs)
				rec->to = nr_funcs + now[rec->to - nr_funcs];
		}
	free(now);
}

/*
 * Functions with a profile numbered from 1 in address order, then the callees
 * without one; the functions written: how many
 */
static int print_funcs(FILE *f, struct wctx *c)
{
	struct kmeta_sym **by_name = profile_funcs_by_name(c->img);
	uint32_t nr = 0;

	for (size_t i = 0; i < c->img->nr_funcs; i++)
		if (c->funcs[i] && has_profile(c, c->funcs[i]))
			c->funcs[i]->fid = ++nr;
	number_ext(c, nr + 1);
	for (size_t i = 0; i < c->img->nr_funcs; i++)
		if (c->funcs[i] && c->funcs[i]->fid)
			sum_records(c->funcs[i]);
	if (nr)
		print_header(f, c);
	for (size_t i = 0; i < c->img->nr_funcs; i++)
		if (c->funcs[i] && c->funcs[i]->fid)
			print_func(f, c, by_name, c->funcs[i]);
	if (nr)
		fputs("...\n", f);
	free(by_name);
	return nr;
}

static void warn_dropped(struct wctx *c)
{
	char from[KMETA_ADDR_STR_SIZE], to[KMETA_ADDR_STR_SIZE];

	if (!c->dropped)
		return;
	pr_warn(c->p->path, "%zu records (weight %" PRIu64 ") have no place in llvm-bolt's "
		"blocks of %s, such as %s -> %s (%s): left out", c->dropped, c->dropped_weight,
		c->img->path, kmeta_addr_str(c->img, c->first->from, from, sizeof(from)),
		kmeta_addr_str(c->img, c->first->to, to, sizeof(to)), c->first_why);
}

int yaml_write(struct kmeta_image *img, const struct prof *p, FILE *f)
{
	struct wctx c = { .img = img, .p = p, .samples = true,
			  .funcs = xcalloc(img->nr_funcs + 1, sizeof(*c.funcs)) };
	int nr;

	/* the test of llvm-bolt's RewriteInstance: linked at the kernel's addresses */
	c.kernel = img->text_start >= 0xffffffff80000000ULL;
	nr = read_tables(&c);

	for (size_t i = 0; i < p->nr_edges; i++)
		c.samples = c.samples && !prof_is_transfer(&p->edges[i]);
	for (size_t i = 0; !nr && i < p->nr_edges; i++)
		place(&c, &p->edges[i]);
	if (!nr)
		nr = print_funcs(f, &c);
	if (nr > 0)
		warn_dropped(&c);
	for (size_t i = 0; i < img->nr_funcs; i++)
		if (c.funcs[i]) {
			free(c.funcs[i]->blocks);
			free(c.funcs[i]->recs);
			free(c.funcs[i]);
		}
	free(c.funcs);
	free(c.jls);
	free(c.fixups);
	free(c.ext);
	free(c.split);
	return nr;
}
