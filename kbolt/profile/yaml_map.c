// SPDX-License-Identifier: GPL-2.0
/*
 * BOLT's YAML records made addresses of a vmlinux (bolt_yaml.h).  A block id indexes
 * BOLT's own CFG (in DFS or layout order, as the header's dfs-order says), which kbolt
 * does not rebuild; but BOLT's block hash (BlendedBlockHash in LLVM's
 * bolt/lib/Profile/StaleProfileMatching.cpp) keeps the block's offset in the function
 * in its low 16 bits.  A block is placed at that offset, plus any multiple of 64 KiB
 * that stays in the function, when exactly one of these starts an instruction; its
 * last instruction is its insns-th from there (BOLT counts every instruction, nops
 * included, when it writes the profile, and a lock prefix as one of its own, as LLVM
 * decodes it).  A successor record goes from that last instruction to the
 * successor's first, a call from the block's start plus its off to
 * the callee's entry.  Whatever cannot be placed so is left out and counted, never
 * guessed: a block without a hash (but bid 0, the entry in either order), an offset
 * that starts no instruction or more than one, instructions that run past the
 * function, a successor the profile does not list, a secondary entry point.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "bolt_yaml.h"
#include "profile_match.h"

#define NO_OFF UINT64_MAX
#define HASH_OFF_SPAN 0x10000
#define LEGACY_PREFIXES "\xf0\xf2\xf3\x2e\x36\x3e\x26\x64\x65\x66\x67"

struct place {
	uint64_t start, last;	/* addresses of the first and last instruction; NO_OFF */
	/*
	 * the target of a jcc right before a last jmp: BOLT's buildCFG() keeps "jcc; jmp"
	 * in one block, whose successors are the jcc's target and the jmp's; NO_OFF
	 */
	uint64_t jcc, jcc_target;
	const char *why;	/* why not, when start is NO_OFF */
};

struct map_ctx {
	struct kmeta_image *img;
	struct prof *p;
	struct bolt_yaml *y;
	struct kmeta_sym **syms;	/* per function of y, NULL if img has none */
	size_t dropped, first_line;
	uint64_t dropped_weight;
	const char *first_why;
};

static void drop(struct map_ctx *c, uint64_t count, size_t lineno, const char *why)
{
	if (!c->dropped++) {
		c->first_line = lineno;
		c->first_why = why;
	}
	c->dropped_weight += count;
}

/* The one offset, of low + k * 64 KiB, that starts an instruction of sym; NO_OFF */
static uint64_t find_offset(struct kmeta_image *img, const struct kmeta_sym *sym, uint64_t low)
{
	uint64_t found = NO_OFF;

	for (uint64_t off = low; off < sym->size || off == 0; off += HASH_OFF_SPAN) {
		if (kmeta_is_insn_boundary(img, sym->addr + off) != 1)
			continue;
		if (found != NO_OFF)
			return NO_OFF;
		found = off;
	}
	return found;
}

unsigned int yaml_llvm_insns(struct kmeta_image *img, const struct kmeta_insn *in)
{
	const unsigned char *p = kmeta_bytes_at(img, in->addr, in->len);

	/* the legacy prefixes, in any order, before the opcode */
	for (unsigned int i = 0; p && i < in->len && p[i] && strchr(LEGACY_PREFIXES, p[i]); i++)
		if (p[i] == 0xf0)
			return 2;
	return 1;
}

/* Where block b of sym lies; a reason if it cannot be placed */
static const char *place_block(struct kmeta_image *img, const struct kmeta_sym *sym,
			       const struct yaml_block *b, struct place *pl)
{
	struct kmeta_insn in;
	uint64_t off, at, jcc = NO_OFF;

	pl->start = pl->last = pl->jcc_target = NO_OFF;
	if (!b->has_hash && b->bid)
		return "a block without a hash, which holds its offset";
	off = b->has_hash ? find_offset(img, sym, b->hash & (HASH_OFF_SPAN - 1)) : 0;
	if (off == NO_OFF)
		return "the offset in its hash starts no instruction, or more than one";
	at = sym->addr + off;
	for (uint32_t i = 0; i < b->nr_insns; i++) {
		if (at >= sym->addr + sym->size || kmeta_insn_decode(img, at, &in))
			return "its instructions run past the function's end";
		/* LLVM decodes a lock prefix as an instruction of its own */
		if (yaml_llvm_insns(img, &in) == 2 && ++i == b->nr_insns)
			return "its last instruction is a lock prefix";
		if (in.kind == KI_JCC && i + 2 == b->nr_insns) {
			jcc = at;
			pl->jcc_target = in.target;
		}
		pl->last = at;
		at += in.len;
	}
	pl->start = sym->addr + off;
	pl->jcc = jcc;
	return b->nr_insns ? NULL : "a block of no instructions";
}

static const struct yaml_func *find_fid(const struct bolt_yaml *y, uint32_t fid, size_t *idx)
{
	for (size_t i = 0; i < y->nr_funcs; i++)
		if (y->funcs[i].fid == fid) {
			*idx = i;
			return &y->funcs[i];
		}
	return NULL;
}

static void add_record(struct map_ctx *c, uint64_t from, uint64_t to, uint64_t count,
		       unsigned int kind)
{
	struct prof_edge e = { from, to, count, kind };

	prof_add_edge(c->p, from, to, count, profile_edge_kind(c->img, &e));
}

/* The callee of a call record: the entry of its function, or what the code calls */
static uint64_t callee(struct map_ctx *c, const struct yaml_call *cs, uint64_t from,
		       const char **why)
{
	struct kmeta_insn in;
	size_t idx;

	if (cs->disc) {
		*why = "a call to a secondary entry point";
		return NO_OFF;
	}
	if (find_fid(c->y, cs->fid, &idx)) {
		if (c->syms[idx])
			return c->syms[idx]->addr;
		*why = "a call to a function the vmlinux does not have";
		return NO_OFF;
	}
	/* a callee without a profile of its own: a direct call names it */
	if (!kmeta_insn_decode(c->img, from, &in) && in.target &&
	    (in.kind == KI_CALL || in.kind == KI_JMP || in.kind == KI_JCC))
		return in.target;
	*why = "an indirect call to a function the profile does not list";
	return NO_OFF;
}

static void map_block(struct map_ctx *c, const struct yaml_func *fn, const struct place *pls,
		      size_t i)
{
	const struct yaml_block *b = &c->y->blocks[fn->first_block + i], *to;
	const char *why = NULL;

	if (c->y->samples && b->events) {
		if (pls[i].start == NO_OFF)
			drop(c, b->events, b->lineno, pls[i].why);
		else
			add_record(c, pls[i].start, pls[i].start, b->events, PK_SAMPLE);
	}
	for (size_t s = 0; s < b->nr_succ; s++) {
		const struct yaml_succ *su = &c->y->succs[b->first_succ + s];
		size_t k;

		if (!su->count)
			continue;
		for (k = 0, to = c->y->blocks + fn->first_block; k < fn->nr_listed; k++, to++)
			if (to->bid == su->bid)
				break;
		if (k == fn->nr_listed)
			drop(c, su->count, su->lineno, "a successor the profile does not list");
		else if (pls[i].start == NO_OFF || pls[k].start == NO_OFF)
			drop(c, su->count, su->lineno, pls[pls[i].start == NO_OFF ? i : k].why);
		else
			add_record(c, pls[k].start == pls[i].jcc_target ? pls[i].jcc : pls[i].last,
				   pls[k].start, su->count, PK_BRANCH);
	}
	for (size_t s = 0; s < b->nr_calls; s++) {
		const struct yaml_call *cs = &c->y->calls[b->first_call + s];
		uint64_t from = pls[i].start + cs->off, target;

		if (!cs->count)
			continue;
		why = pls[i].start == NO_OFF ? pls[i].why : "an off past the block's instructions";
		target = pls[i].start == NO_OFF || from > pls[i].last ? NO_OFF :
			 callee(c, cs, from, &why);
		if (target == NO_OFF)
			drop(c, cs->count, cs->lineno, why);
		else
			add_record(c, from, target, cs->count, PK_BRANCH);
	}
}

static void map_func(struct map_ctx *c, size_t f)
{
	const struct yaml_func *fn = &c->y->funcs[f];
	struct place *pls = xcalloc(fn->nr_listed + 1, sizeof(*pls));

	for (size_t i = 0; i < fn->nr_listed; i++) {
		const struct yaml_block *b = &c->y->blocks[fn->first_block + i];
		const char *why = place_block(c->img, c->syms[f], b, &pls[i]);

		/* two blocks at one offset: neither is surely where BOLT had it */
		for (size_t k = 0; !why && k < i; k++)
			if (pls[k].start == pls[i].start) {
				why = "two blocks at one offset";
				pls[k] = (struct place){ NO_OFF, NO_OFF, NO_OFF, NO_OFF, why };
			}
		if (why)
			pls[i] = (struct place){ NO_OFF, NO_OFF, NO_OFF, NO_OFF, why };
	}
	for (size_t i = 0; i < fn->nr_listed; i++)
		map_block(c, fn, pls, i);
	free(pls);
}

/* The weight of function f's records: what leaving it out drops */
static uint64_t func_weight(const struct bolt_yaml *y, const struct yaml_func *fn)
{
	uint64_t w = 0;

	for (size_t i = 0; i < fn->nr_listed; i++) {
		const struct yaml_block *b = &y->blocks[fn->first_block + i];

		w += y->samples ? b->events : 0;
		for (size_t s = 0; s < b->nr_succ; s++)
			w += y->succs[b->first_succ + s].count;
		for (size_t s = 0; s < b->nr_calls; s++)
			w += y->calls[b->first_call + s].count;
	}
	return w;
}

/* Each function's symbol; 0, or -EINVAL after reporting one img does not have */
static int find_funcs(struct map_ctx *c, bool force)
{
	struct kmeta_sym **by_name = profile_funcs_by_name(c->img);
	size_t missed = 0, first = 0;

	for (size_t f = 0; f < c->y->nr_funcs; f++) {
		c->syms[f] = profile_find_bolt_func(c->img, by_name, c->y->funcs[f].name);
		if (!c->syms[f] && !missed++)
			first = f;
	}
	free(by_name);
	if (!missed)
		return 0;
	if (!force) {
		pr_err(c->p->path, "line %zu: no function %s in %s: a profile of another kernel "
		       "(--force leaves out the %zu functions of such names)",
		       c->y->funcs[first].lineno, c->y->funcs[first].name, c->img->path, missed);
		return -EINVAL;
	}
	pr_warn(c->p->path, "%zu functions %s does not have, such as %s (line %zu): left out "
		"(--force)", missed, c->img->path, c->y->funcs[first].name,
		c->y->funcs[first].lineno);
	return 0;
}

int yaml_map(struct kmeta_image *img, struct prof *p, bool force)
{
	struct map_ctx c = { .img = img, .p = p, .y = p->yaml,
			     .syms = xcalloc(p->yaml->nr_funcs + 1, sizeof(*c.syms)) };
	int err = find_funcs(&c, force);

	for (size_t f = 0; !err && f < c.y->nr_funcs; f++) {
		if (c.syms[f])
			map_func(&c, f);
		else
			p->nr_dropped += func_weight(c.y, &c.y->funcs[f]);
	}
	if (!err && c.dropped) {
		pr_warn(p->path, "%zu records (weight %llu) kbolt cannot place in %s's code, "
			"such as line %zu (%s): left out", c.dropped,
			(unsigned long long)c.dropped_weight, img->path, c.first_line, c.first_why);
		p->nr_dropped += c.dropped_weight;
	}
	free(c.syms);
	bolt_yaml_free(p->yaml);
	p->yaml = NULL;
	return err;
}
