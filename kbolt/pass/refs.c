// SPDX-License-Identifier: GPL-2.0
/*
 * Everything that points into a function body from outside the instruction stream:
 * table entries, ORC entries, relocations, branches and %rip operands of other code
 * (other functions, alternative replacements, .altinstr_aux).  Each reference must land
 * on an op boundary (or inside a patch-site unit, which moves whole); it makes its
 * target a block leader and, for table sites, freezes the op's encoding.  A reference
 * kbolt cannot account for leaves the function it points into untouched.
 *
 * Must run after decode_funcs() and before cfg_build().
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../kmeta/table.h"
#include "../lib/parallel.h"
#include "../model/opt.h"
#include "refs.h"

/*
 * Check that addr, inside f, can be mapped: an op start, or inside a unit.  Returns the
 * op starting at addr, -1 otherwise (f is then skipped unless addr is inside a unit).
 */
static long ref_op(struct opt *opt, struct func *f, uint64_t addr, enum skip_reason why)
{
	long i = find_op_containing(f, addr);

	if (i < 0) {
		skip_func(opt, f, why, addr);
		return -1;
	}
	if (f->ops[i].off == addr - f->sym->addr)
		return i;
	if (!(f->ops[i].flags & OP_UNIT))
		skip_func(opt, f, why, addr);
	return -1;
}

/* A reference from outside f's instruction stream to addr in f */
static void add_ref(struct opt *opt, uint64_t addr, uint16_t flags)
{
	struct func *f = find_func_containing(opt, addr);
	long i;

	if (!f || !f->decoded)
		return;
	i = ref_op(opt, f, addr, SKIP_MID_INSN_REF);
	if (i >= 0)
		f->ops[i].flags |= flags;
}

/*
 * TR_SITE_IN_INSN: a runtime constant (6.11+) points at the immediate inside its
 * instruction (runtime_const_init() writes the value there at boot): the field moves
 * with the instruction, whose encoding is kept (rewrite.c maps it with emit_map_field()).
 */
static void mark_site_in_insn(struct opt *opt, const struct kmeta_entry *e)
{
	struct func *f = find_func_containing(opt, e->site);
	long i = f && f->decoded ? find_op_containing(f, e->site) : -1;

	if (i >= 0)
		f->ops[i].flags |= OP_FIXED;
	else if (f && f->decoded)
		skip_func(opt, f, SKIP_MID_INSN_REF, e->site);
}

static void mark_table_entry(struct opt *opt, struct kmeta_table *t, const struct kmeta_entry *e)
{
	const struct layout *l = t->layout;
	struct func *f = e->site ? find_func_containing(opt, e->site) : NULL;
	long i = f && f->decoded ? ref_op(opt, f, e->site, SKIP_MID_INSN_REF) : -1;

	for (unsigned int k = 0; k < TABLE_MAX_FIELDS && l->fields[k].name; k++) {
		if (l->fields[k].role != FR_CODE || !e->val[k])
			continue;
		/*
		 * An exception fixup at the next instruction stays there: handlers such as
		 * ex_handler_zeropad() take the faulting instruction's length from it.
		 */
		if (i >= 0 && kmeta_table_has(t, TR_GLUED_FIXUP) && i + 1 < f->nr_ops &&
		    e->val[k] == e->site + f->ops[i].len)
			add_ref(opt, e->val[k], OP_EXTREF | OP_GLUED);
		else
			add_ref(opt, e->val[k], OP_LEADER | OP_EXTREF);
	}
	if (i < 0)
		return;
	if (t->desc->unit) {	/* its entries lie inside their units: this one has none */
		skip_func(opt, f, SKIP_TABLE_ENTRY, e->site);
		return;
	}
	f->ops[i].flags |= OP_FIXED;
	if (kmeta_table_has(t, TR_JUMP_LABEL)) {
		if (f->ops[i].flags & OP_UNIT) {
			skip_func(opt, f, SKIP_TABLE_ENTRY, e->site);
			return;
		}
		f->ops[i].flags |= OP_JL;
		f->ops[i].target = kmeta_table_rewrite_value(t, e);
	} else if (kmeta_table_entry_resumes(t, e)) {
		f->ops[i].flags |= OP_WARN;
	} else if (kmeta_table_entry_glued(t, e) && i > 0) {
		/* the entry of a WARN with arguments: the instruction after its lea */
		f->ops[i].flags |= OP_GLUED;
	} else if (kmeta_table_has(t, TR_AFTER_ENDBR) && i > 0) {
		/*
		 * IBT: the fentry call right after endbr64.  ftrace, kprobes and BPF
		 * trampolines look for it at +4; the relocation of its __mcount_loc slot
		 * would make it a block of its own, which a layout could move away.
		 */
		f->ops[i].flags |= OP_GLUED;
	}
}

static int mark_tables(struct opt *opt)
{
	for (unsigned int d = 0; d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *t = kmeta_table_get(opt->img, kmeta_table_descs[d]);
		struct kmeta_entry e;

		if (!t)
			return -EINVAL;
		if (!t->present || kmeta_table_has(t, TR_OWN_PASS))
			continue;
		for (size_t k = 0; k < t->nr_slots; k++) {
			if (kmeta_table_read_entry(t, k, &e))
				return -EINVAL;
			if (e.filler)
				continue;
			if (kmeta_table_has(t, TR_SITE_IN_INSN))
				mark_site_in_insn(opt, &e);
			else
				mark_table_entry(opt, t, &e);
		}
	}
	opt->sec_rewrite = kmeta_table_flags_by_sec(opt->img);
	return 0;
}

/* ORC entries are regenerated, but each must describe an instruction kbolt knows */
static void check_orc(struct opt *opt)
{
	for (size_t k = 0; k < opt->nr_orc; k++) {
		struct func *f = find_func_containing(opt, opt->orc_ips[k]);

		if (f && f->decoded)
			ref_op(opt, f, opt->orc_ips[k], SKIP_MID_INSN_REF);
	}
}

/* A branch or %rip operand of from_func (NULL: code that is no function) to target */
static void code_ref(struct opt *opt, struct func *from_func, uint64_t target,
		     unsigned int rel_size, bool is_branch)
{
	struct func *f = find_func_containing(opt, target);
	long i;

	if (!f || !f->decoded || (target == f->sym->addr && f != from_func))
		return;
	i = ref_op(opt, f, target, SKIP_MID_INSN_REF);
	if (i < 0) {
		skip_func(opt, f, SKIP_SPLIT_SITE, target);
		return;
	}
	f->ops[i].flags |= OP_LEADER | (is_branch ? OP_BRANCH_TARGET : 0);
	if (f != from_func) {
		f->ops[i].flags |= OP_EXTREF;
		if (rel_size == 1)
			skip_func(opt, f, SKIP_SHORT_REF, target);
	} else if (!is_branch) {
		f->ops[i].flags |= OP_EXTREF;	/* its address is taken */
	}
}

static void mark_code_refs(struct opt *opt)
{
	for (size_t n = 0; n < opt->nr_funcs; n++) {
		struct func *g = &opt->funcs[n];

		if (!g->decoded)
			continue;
		for (uint32_t i = 0; i < g->nr_ops; i++) {
			const struct op *op = &g->ops[i];

			if (op->rel_size)
				code_ref(opt, g, op->target, op->rel_size,
					 !(op->insn_flags & KIF_RIP));
		}
		for (size_t k = 0; k < g->nr_fixes; k++) {
			const struct fix *x = &g->fixes[k];
			uint64_t unit = g->sym->addr + g->ops[x->op].off;

			/* a branch inside its own unit (a kCFI check's je) moves with it */
			if (x->target > unit && x->target < unit + g->ops[x->op].len)
				continue;
			code_ref(opt, g, x->target, x->size, false);
		}
	}
	for (size_t k = 0; k < opt->extra.nr; k++) {
		const struct kmeta_insn *in = &opt->extra.insns[k];

		if (in->rel_size)
			code_ref(opt, NULL, in->target, in->rel_size, false);
	}
}

static void add_extra(struct opt *opt, uint64_t start, uint64_t end)
{
	struct kmeta_insn *insns;
	uint64_t bad;
	size_t nr;

	if (end <= start || kmeta_insn_decode_range(opt->img, start, end, &insns, &nr, &bad))
		return;
	GROW(opt->extra.insns, opt->extra.cap, opt->extra.nr + nr);
	memcpy(opt->extra.insns + opt->extra.nr, insns, nr * sizeof(*insns));
	opt->extra.nr += nr;
	free(insns);
}

static int cmp_insn_addr(const void *a, const void *b)
{
	const struct kmeta_insn *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Alternative replacements and .altinstr_aux: code without function symbols */
static int decode_extra(struct opt *opt)
{
	struct kmeta_range *r;
	size_t nr;

	if (kmeta_alt_code_ranges(opt->img, &r, &nr))
		return -EINVAL;
	for (size_t k = 0; k < nr; k++)
		add_extra(opt, r[k].start, r[k].end);
	free(r);
	sort_array(opt->extra.insns, opt->extra.nr, sizeof(*opt->extra.insns), cmp_insn_addr);
	return 0;
}

const struct kmeta_insn *refs_find_extra_insn(struct opt *opt, uint64_t addr)
{
	const struct kmeta_insn *in = opt->extra.insns;
	size_t past = upper_bound_u64(in, opt->extra.nr, sizeof(*in),
				      offsetof(struct kmeta_insn, addr), addr);

	if (!past || addr >= in[past - 1].addr + in[past - 1].len)
		return NULL;
	return &in[past - 1];
}

/* Does a fix of g's op i cover the field at off? */
static bool has_fix_at(const struct func *g, uint32_t i, uint32_t off)
{
	for (size_t k = 0; k < g->nr_fixes; k++)
		if (g->fixes[k].op == i && g->fixes[k].field_off == off)
			return true;
	return false;
}

/* A relocation applied inside decoded function g */
static void reloc_in_func(struct opt *opt, struct func *g, const struct kmeta_reloc *r)
{
	long i = find_op_containing(g, r->addr);
	struct op *op;
	uint32_t off;

	if (i < 0) {
		skip_func(opt, g, SKIP_MID_INSN_REF, r->addr);
		return;
	}
	op = &g->ops[i];
	off = r->addr - g->sym->addr - op->off;
	op->flags |= OP_FIXED;
	if (kmeta_reloc_is_pcrel(r->type)) {
		if (!(op->rel_size == 4 && op->rel_off == off) && !has_fix_at(g, i, off))
			skip_func(opt, g, SKIP_UNDECODED_REF, r->addr);
		return;
	}
	{
		struct fix x = { .op = i, .field_off = off, .size = kmeta_reloc_size(r->type),
				 .target = r->target };

		GROW(g->fixes, g->fixes_cap, g->nr_fixes + 1);
		g->fixes[g->nr_fixes++] = x;
	}
	add_ref(opt, r->target, OP_LEADER | OP_EXTREF);
}

/* What follows a pc-relative field in its instruction: nothing, or an immediate */
static const unsigned int tails[] = { 0, 1, 2, 4 };

/* May r's field mean a place inside a decoded function (past its first byte)? */
static bool may_point_inside(struct opt *opt, const struct kmeta_reloc *r)
{
	uint64_t first = r->target + 4;
	struct func *f = find_func_containing(opt, first);

	/* all four places in f (mostly a call: the first is f's start, the others not) */
	if (f && first + tails[ARRAY_SIZE(tails) - 1] < f->sym->addr + f->sym->size)
		return f->decoded;
	for (size_t k = 0; k < ARRAY_SIZE(tails); k++) {
		f = find_func_containing(opt, first + tails[k]);
		if (f && f->decoded && first + tails[k] != f->sym->addr)
			return true;
	}
	return false;
}

/*
 * A pc-relative relocation in code that was not decoded (no function symbol covers it,
 * the body of an overridden weak function, say, or lite mode left it), whose field may
 * point inside a decoded function (may_point_inside()): the closest instruction start
 * before it whose displacement is the relocated field says where it points.  Without
 * one, every place it may mean is treated as referenced.
 */
static void reloc_undecoded(struct opt *opt, const struct kmeta_reloc *r)
{
	const unsigned char *p;

	/*
	 * Mostly a call or jmp rel32 (e8, e9 right before the field: the field ends the
	 * instruction), which is what decoding one byte back finds first; said without
	 * capstone, which took 0.05 s for the calls into hot code from the rest.
	 */
	p = kmeta_bytes_at(opt->img, r->addr - 1, 5);
	if (p && (p[0] == 0xe8 || p[0] == 0xe9)) {
		code_ref(opt, NULL, r->addr + 4 + (int64_t)(int32_t)get_u32(p + 1), 4, false);
		return;
	}
	for (unsigned int back = 1; back < 15 && back <= r->addr; back++) {
		struct kmeta_insn in;

		if (kmeta_insn_decode(opt->img, r->addr - back, &in) || in.rel_size != 4 ||
		    in.rel_off != back)
			continue;
		code_ref(opt, NULL, in.target, 4, false);
		return;
	}
	for (size_t k = 0; k < ARRAY_SIZE(tails); k++) {
		uint64_t a = r->target + 4 + tails[k];
		struct func *f = find_func_containing(opt, a);

		if (f && a != f->sym->addr)
			skip_func(opt, f, SKIP_UNDECODED_REF, a);
	}
}

/* Does addr lie in a function that decoded (what add_ref() looks for)? */
static bool in_decoded_func(struct opt *opt, uint64_t addr)
{
	struct func *f = find_func_containing(opt, addr);

	return f && f->decoded;
}

/* What a relocation marks, decided without marking (relocations are sifted in threads) */
enum reloc_mark {
	MARK_NOTHING,
	MARK_TARGET,		/* S + A, an address of code: add_ref() */
	MARK_IN_FUNC,		/* a field of a decoded function's instruction */
	MARK_UNDECODED,		/* a pc-relative field in code that was not decoded */
};

/* Sections whose relocations mark nothing, whatever they point at */
static bool marks_nothing(const struct opt *opt, const struct kmeta_sec *target)
{
	/* ORC is regenerated (and 6.1 sorts it after linking); a runtime constant's slot
	 * is mark_site_in_insn()'s */
	return opt->sec_rewrite[target->idx] & (TR_OWN_PASS | TR_SITE_IN_INSN);
}

/*
 * Most relocations (in lite mode, those of code that was not decoded) mark nothing;
 * target is not one of marks_nothing()'s
 */
static enum reloc_mark reloc_mark_of(struct opt *opt, struct kmeta_sec *target,
				     const struct kmeta_reloc *r)
{
	if (!(target->flags & SHF_EXECINSTR))
		return in_decoded_func(opt, r->target) ? MARK_TARGET : MARK_NOTHING;
	if (in_decoded_func(opt, r->addr))
		return MARK_IN_FUNC;
	if (!kmeta_reloc_is_pcrel(r->type))	/* an absolute address: S + A itself */
		return in_decoded_func(opt, r->target) ? MARK_TARGET : MARK_NOTHING;
	if (refs_find_extra_insn(opt, r->addr) || !may_point_inside(opt, r))
		return MARK_NOTHING;	/* known exactly, or not into code kbolt may rewrite */
	return MARK_UNDECODED;
}

static void mark_reloc(struct opt *opt, enum reloc_mark how, const struct kmeta_reloc *r)
{
	switch (how) {
	case MARK_TARGET:
		add_ref(opt, r->target, OP_LEADER | OP_EXTREF);
		break;
	case MARK_IN_FUNC:
		reloc_in_func(opt, find_func_containing(opt, r->addr), r);
		break;
	case MARK_UNDECODED:
		reloc_undecoded(opt, r);
		break;
	case MARK_NOTHING:
		break;
	}
}

/* One part of the relocations, and those of it that mark something */
struct reloc_part {
	struct opt *opt;
	struct marked {
		enum reloc_mark how;
		struct kmeta_reloc r;
	} *v;
	size_t nr, cap;
	const struct kmeta_sec *last;	/* the last target seen, and whether it */
	bool last_marks_nothing;	/* marks_nothing(): asked once a section */
	int err;
};

static int keep_markable(void *ctx, struct kmeta_sec *target, const struct kmeta_reloc *r)
{
	struct reloc_part *p = ctx;
	enum reloc_mark how;

	if (target != p->last) {
		p->last = target;
		p->last_marks_nothing = marks_nothing(p->opt, target);
	}
	if (p->last_marks_nothing)
		return 0;
	how = reloc_mark_of(p->opt, target, r);
	if (how != MARK_NOTHING) {
		GROW(p->v, p->cap, p->nr + 1);
		p->v[p->nr++] = (struct marked){ how, *r };
	}
	return 0;
}

#define RELOC_PARTS 16

struct reloc_parts {
	struct reloc_part part[RELOC_PARTS];
	size_t nr_relocs;
};

static void sift_part(void *arg, size_t i, unsigned int worker)
{
	struct reloc_parts *ps = arg;
	size_t per = (ps->nr_relocs + RELOC_PARTS - 1) / RELOC_PARTS;

	ps->part[i].err = kmeta_for_each_reloc_in(ps->part[i].opt->img, i * per, (i + 1) * per,
						  keep_markable, &ps->part[i]);
}

/*
 * Every relocation, sifted in parallel (reloc_mark_of() only reads), then the few that
 * mark something marked in their order, in one thread: the marks are the serial ones.
 */
static int mark_relocs(struct opt *opt)
{
	struct reloc_parts ps = { .nr_relocs = kmeta_nr_relocs(opt->img) };
	int err = 0;

	for (size_t i = 0; i < RELOC_PARTS; i++)
		ps.part[i].opt = opt;
	parallel_for(RELOC_PARTS, sift_part, &ps);
	for (size_t i = 0; i < RELOC_PARTS; i++) {
		err = err ? err : ps.part[i].err;
		for (size_t k = 0; !err && k < ps.part[i].nr; k++)
			mark_reloc(opt, ps.part[i].v[k].how, &ps.part[i].v[k].r);
		free(ps.part[i].v);
	}
	return err;
}

/* Without relocations a value equal to an address inside f could not be rewritten */
static void data_value_hit(void *ctx, uint64_t at, uint64_t target)
{
	struct opt *opt = ctx;
	struct func *f = find_func_containing(opt, target);

	(void)at;
	if (f)
		skip_func(opt, f, SKIP_DATA_VALUE, target);
}

/*
 * No relocations: every loaded byte outside the tables, code included (immediates
 * such as "mov $label, %reg"), read as a possible address inside a function that may
 * be rewritten.  A false match only costs that function; so the functions hit are
 * left alone, whatever the value really is.
 */
static int mark_data_values(struct opt *opt)
{
	struct kmeta_range *r = xmalloc((opt->nr_funcs + 1) * sizeof(*r));
	size_t nr = 0;
	int err;

	for (size_t i = 0; i < opt->nr_funcs; i++) {
		struct func *f = &opt->funcs[i];

		if (f->decoded && is_rewritable(f))
			r[nr++] = (struct kmeta_range){ f->sym->addr, f->sym->addr + f->sym->size };
	}
	err = kmeta_scan_abs_refs(opt->img, r, nr, data_value_hit, opt);
	if (err)
		pr_err(opt->img->path, "cannot scan the image for addresses: %s", strerror(-err));
	free(r);
	return err;
}

int refs_collect(struct opt *opt)
{
	int err = decode_extra(opt);

	if (!err)
		err = mark_tables(opt);
	if (err)
		return err;
	check_orc(opt);
	mark_code_refs(opt);
	if (opt->no_relocs && (err = mark_data_values(opt)))
		return err;
	return mark_relocs(opt);
}
