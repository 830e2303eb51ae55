// SPDX-License-Identifier: GPL-2.0
/*
 * Writing the new code into the image and following it everywhere else: code that
 * stays but branches into moved code, every table (through kmeta's remap), the ORC
 * table (regenerated), and the .rela sections that a KASLR build turns into the
 * kernel's relocation table: each relocation moves with its instruction (r_offset)
 * and follows its moved target (r_addend), and a relocated value in data is rewritten
 * to match.  Relocations of non-allocated sections (DWARF) are left alone.
 *
 * Order: every moved function's bytes are generated from the old image before any is
 * written; tables and relocations are mapped after.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../kmeta/table.h"
#include "../lib/parallel.h"
#include "../model/opt.h"
#include "emit.h"
#include "orc_gen.h"
#include "refs.h"
#include "rewrite.h"

struct rela_raw {
	uint64_t r_offset;
	uint64_t r_info;
	int64_t r_addend;
};

static unsigned char *image_ptr(struct opt *opt, uint64_t addr, uint64_t size)
{
	return (unsigned char *)kmeta_bytes_at(opt->img, addr, size);
}

static int put_rel(struct opt *opt, unsigned char *p, unsigned int size, int64_t d,
		   uint64_t where)
{
	char at[KMETA_ADDR_STR_SIZE];

	if ((size == 1 && d != (int8_t)d) || (size == 4 && d != (int32_t)d)) {
		pr_err(opt->img->path, "%s: displacement out of reach after the rewrite",
		       kmeta_addr_str(opt->img, where, at, sizeof(at)));
		return -ERANGE;
	}
	if (size == 1)
		p[0] = (unsigned char)d;
	else
		put_u32(p, (uint32_t)d);
	return 0;
}

/* An instruction that stays, whose displacement may point into moved code */
static int retarget(struct opt *opt, uint64_t addr, unsigned int rel_off, unsigned int size,
		    uint64_t next, uint64_t target)
{
	uint64_t to;

	if (!size || !emit_map_addr(opt, target, &to) || to == target)
		return 0;
	return put_rel(opt, image_ptr(opt, addr + rel_off, size), size, (int64_t)(to - next),
		       addr);
}

static int retarget_unmoved(struct opt *opt)
{
	int err = 0;

	for (size_t n = 0; n < opt->nr_funcs && !err; n++) {
		struct func *g = &opt->funcs[n];
		uint64_t base = g->sym->addr;

		if (!g->decoded || g->moved)
			continue;
		/*
		 * A jump-label site too: a jmp in the image (a nop has no rel field) may
		 * lead into a part that moved, 7.2's get_page_from_freelist into its .cold
		 */
		for (uint32_t i = 0; i < g->nr_ops && !err; i++) {
			const struct op *op = &g->ops[i];

			err = retarget(opt, base + op->off, op->rel_off, op->rel_size,
				       base + op->off + op->len, op->target);
		}
		for (size_t k = 0; k < g->nr_fixes && !err; k++) {
			const struct fix *x = &g->fixes[k];
			uint64_t at = base + g->ops[x->op].off;

			if (x->pcrel)
				err = retarget(opt, at, x->field_off, x->size, at + x->next_off,
					       x->target);
		}
	}
	for (size_t k = 0; k < opt->extra.nr && !err; k++) {
		const struct kmeta_insn *in = &opt->extra.insns[k];

		err = retarget(opt, in->addr, in->rel_off, in->rel_size, in->addr + in->len,
			       in->target);
	}
	return err;
}

static void commit_code(struct opt *opt)
{
	for (size_t n = 0; n < opt->nr_funcs; n++) {
		struct func *f = &opt->funcs[n];

		if (f->moved)
			memcpy(image_ptr(opt, f->sym->addr, f->sym->size), f->code, f->sym->size);
	}
}

/*
 * A function that grew into the padding after it gets a symbol size (st_size, in the
 * image's .symtab) that covers its new code, and so do its aliases: tools that
 * attribute addresses to functions by their ELF size (perf, kmeta) find it all
 */
static void grow_symbols(struct opt *opt)
{
	struct kmeta_sec *symtab = kmeta_find_sec_by_name(opt->img, ".symtab");

	for (size_t n = 0; symtab && symtab->data && n < opt->nr_funcs; n++) {
		const struct func *f = &opt->funcs[opt->func_span[n].owner];
		const struct kmeta_sym *s = opt->funcs[n].sym;
		uint64_t end = f->moved ? emit_plan_size(f) : 0;
		size_t idx = (size_t)(s - opt->img->syms);

		if (end > kmeta_elf_size(s) && (idx + 1) * sizeof(Elf64_Sym) <= symtab->size)
			put_u64(symtab->data + idx * sizeof(Elf64_Sym) +
				offsetof(Elf64_Sym, st_size), end);
	}
}

static bool map_cb(void *ctx, uint64_t addr, uint64_t *out)
{
	return emit_map_addr(ctx, addr, out);
}

/* A runtime constant's site is the immediate inside its instruction (refs.c) */
static bool map_field_cb(void *ctx, uint64_t addr, uint64_t *out)
{
	return emit_map_field(ctx, addr, out);
}

/* Slots that sorting moved, for the relocations that apply to them */
struct moved_slots {
	uint64_t start, end;
	unsigned int esize;
	size_t *perm;
};

static int rewrite_tables(struct opt *opt, struct moved_slots **ms, size_t *nr_ms)
{
	for (unsigned int d = 0; d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *t = kmeta_table_get(opt->img, kmeta_table_descs[d]);
		size_t *perm, changed;

		if (!t)
			return -EINVAL;
		if (!t->present || kmeta_table_has(t, TR_OWN_PASS))
			continue;
		if (kmeta_table_remap(t, kmeta_table_has(t, TR_SITE_IN_INSN) ? map_field_cb : map_cb,
				opt, &perm, &changed))
			return -EINVAL;
		if (!perm)
			continue;
		*ms = xrealloc(*ms, (*nr_ms + 1) * sizeof(**ms));
		(*ms)[(*nr_ms)++] = (struct moved_slots){
			t->ranges[0].addr, t->ranges[t->nr_ranges - 1].addr +
			t->ranges[t->nr_ranges - 1].size, t->layout->entry_size, perm };
	}
	return 0;
}

/* The relocated place P after sorting and code motion */
static bool map_place(struct opt *opt, const struct moved_slots *ms, size_t nr_ms, uint64_t p,
		      uint64_t *out)
{
	for (size_t k = 0; k < nr_ms; k++) {
		if (p >= ms[k].start && p < ms[k].end) {
			uint64_t slot = (p - ms[k].start) / ms[k].esize;

			*out = ms[k].start + ms[k].perm[slot] * ms[k].esize +
			       (p - ms[k].start) % ms[k].esize;
			return true;
		}
	}
	return emit_map_field(opt, p, out);
}

/*
 * What a relocation at p in code refers to: where the instruction's field leads.  In
 * code kbolt did not decode it cannot lead into moved code (refs.c decodes all code
 * that may), so the usual 4-byte field ending the instruction is assumed.
 */
static uint64_t code_ref(struct opt *opt, uint64_t p, uint64_t s_a)
{
	struct func *g = find_func_containing(opt, p);
	long i = g && g->decoded ? find_op_containing(g, p) : -1;
	const struct kmeta_insn *in;

	if (i >= 0) {
		const struct op *op = &g->ops[i];
		uint64_t at = g->sym->addr + op->off;

		for (size_t k = 0; k < g->nr_fixes; k++)
			if (g->fixes[k].op == (uint32_t)i && at + g->fixes[k].field_off == p)
				return s_a + (at + g->fixes[k].next_off - p);
		return s_a + (at + op->len - p);
	}
	in = g ? NULL : refs_find_extra_insn(opt, p);
	if (in)
		return s_a + (in->addr + in->len - p);
	return s_a + 4;
}

/*
 * The relocation pass's writes, made after its loop: made in it, beside orc_write(),
 * each first write to a page of the image (copied on write) would cost the other core
 * an interrupt to flush its TLB.
 */
struct pending_writes {
	struct pending_write {
		unsigned char *raw;	/* the Elf64_Rela: its type is read there */
		unsigned char *q;	/* the relocated value's place, or NULL */
		uint64_t offset, addend, value;
	} *v;
	size_t nr, cap;
};

static void apply_writes(struct pending_writes *w)
{
	for (size_t k = 0; k < w->nr; k++) {
		const struct pending_write *pw = &w->v[k];

		put_u64(pw->raw, pw->offset);
		put_u64(pw->raw + 16, pw->addend);
		if (pw->q)
			kmeta_reloc_store(pw->q, (uint32_t)get_u64(pw->raw + 8), pw->value);
	}
	free(w->v);
	*w = (struct pending_writes){ 0 };
}

/* How the place a relocation refers to moves: emit_map_field() for runtime constants */
typedef bool (*map_fn)(struct opt *opt, uint64_t addr, uint64_t *out);

static int rewrite_rela_entry(struct opt *opt, struct kmeta_sec *target, map_fn map,
			      unsigned char *raw, const struct moved_slots *ms, size_t nr_ms,
			      struct pending_writes *w)
{
	uint64_t p = get_u64(raw), info = get_u64(raw + 8), sym = info >> 32;
	int64_t a = (int64_t)get_u64(raw + 16);
	uint32_t type = (uint32_t)info;
	uint64_t s, ref, new_ref, new_p;
	bool in_code = target->flags & SHF_EXECINSTR;
	struct pending_write *pw;

	if (type == R_X86_64_NONE || sym >= opt->img->nr_syms)
		return 0;
	s = opt->img->syms[sym].addr;
	ref = in_code && kmeta_reloc_is_pcrel(type) ? code_ref(opt, p, s + a) : s + a;
	if (!map(opt, ref, &new_ref) ||
	    !map_place(opt, ms, nr_ms, p, &new_p)) {
		char at[KMETA_ADDR_STR_SIZE];

		pr_err(opt->img->path, ".rela%s: relocation at %s cannot be mapped", target->name,
		       kmeta_addr_str(opt->img, p, at, sizeof(at)));
		return -EINVAL;
	}
	if (new_ref == ref && new_p == p)
		return 0;
	a += (int64_t)(new_ref - ref);
	GROW(w->v, w->cap, w->nr + 1);
	pw = &w->v[w->nr++];
	*pw = (struct pending_write){ .raw = raw, .offset = new_p, .addend = (uint64_t)a };
	/*
	 * Moved code got its values from emit; data, and addresses in code left as it was,
	 * get them here.
	 */
	if (!in_code || (!kmeta_reloc_is_pcrel(type) && !moved_func_containing(opt, new_p))) {
		unsigned char *q = image_ptr(opt, new_p, kmeta_reloc_size(type));

		if (q && !kmeta_reloc_value(type, s + a, new_p, &pw->value))
			pw->q = q;
	}
	return 0;
}

static unsigned char *file_bytes(struct opt *opt, struct kmeta_sec *sec, uint64_t *size)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(sec->scn, &sh) || sh.sh_offset + sh.sh_size > opt->img->map_size)
		return NULL;
	*size = sh.sh_size;
	return opt->img->map + sh.sh_offset;
}

/*
 * Relocations of data whose value does not hold in the input: those of tables sorted
 * after linking, which describe the slots' order before sorting (6.12's exception
 * table).  They are left as they are, and their places are not written.  Must run
 * before anything is written.
 */
static unsigned char **find_stale_relocs(struct opt *opt)
{
	struct kmeta_image *img = opt->img;
	unsigned char **stale = xcalloc(img->nr_secs, sizeof(*stale));

	for (size_t i = 1; i < img->nr_secs; i++) {
		struct kmeta_sec *rsec = &img->secs[i], *target = kmeta_rela_target(img, rsec);
		unsigned char *raw;
		uint64_t size = 0;
		GElf_Shdr sh;

		if (!target || (target->flags & SHF_EXECINSTR) || !gelf_getshdr(rsec->scn, &sh) ||
		    sh.sh_entsize != sizeof(struct rela_raw))
			continue;
		raw = file_bytes(opt, rsec, &size);
		if (!raw)
			continue;
		stale[i] = xcalloc(size / sh.sh_entsize + 1, 1);
		for (uint64_t k = 0; k < size / sh.sh_entsize; k++) {
			const unsigned char *r = raw + k * sh.sh_entsize;
			uint64_t info = get_u64(r + 8);

			if ((uint32_t)info == R_X86_64_NONE || (info >> 32) >= img->nr_syms)
				continue;
			stale[i][k] = !kmeta_reloc_holds(img, (uint32_t)info,
					img->syms[info >> 32].addr + get_u64(r + 16), get_u64(r));
		}
	}
	return stale;
}

static int rewrite_relocs(struct opt *opt, const struct moved_slots *ms, size_t nr_ms,
			  unsigned char **stale, struct pending_writes *w)
{
	struct kmeta_image *img = opt->img;

	for (size_t i = 1; i < img->nr_secs; i++) {
		struct kmeta_sec *rsec = &img->secs[i], *target = kmeta_rela_target(img, rsec);
		unsigned char *raw;
		uint64_t size = 0;
		GElf_Shdr sh;
		map_fn map;

		if (!target || (opt->sec_rewrite[target->idx] & TR_OWN_PASS) ||
		    !gelf_getshdr(rsec->scn, &sh))
			continue;
		raw = file_bytes(opt, rsec, &size);
		if (!raw || sh.sh_entsize != sizeof(struct rela_raw)) {
			pr_err(img->path, "%s: cannot rewrite it in place", rsec->name);
			return -EINVAL;
		}
		/* a runtime constant's slot points inside its instruction (refs.c) */
		map = opt->sec_rewrite[target->idx] & TR_SITE_IN_INSN ? emit_map_field : emit_map_addr;
		for (uint64_t k = 0; k < size / sh.sh_entsize; k++)
			if ((!stale[i] || !stale[i][k]) &&
			    rewrite_rela_entry(opt, target, map, raw + k * sh.sh_entsize, ms, nr_ms,
					       w))
				return -EINVAL;
		kmeta_release_sec(img, rsec);	/* what was only read; the output copies it */
	}
	return 0;
}

/*
 * The section symbol for addr: of the code section holding it, or ending at it (ORC
 * ends each section with an entry at its end); 0 if none.  Sections in order, so the
 * last one found is tried first.
 */
static size_t section_sym(struct kmeta_image *img, uint64_t addr, size_t last)
{
	struct kmeta_sec *sec = kmeta_find_sec_containing(img, addr);

	if (!sec && addr)
		sec = kmeta_find_sec_containing(img, addr - 1);
	if (!sec)
		return 0;
	if (last && img->syms[last].shndx == sec->idx)
		return last;
	for (size_t i = 1; i < img->nr_syms; i++)
		if (img->syms[i].type == STT_SECTION && img->syms[i].shndx == sec->idx)
			return i;
	return 0;
}

/*
 * .rela.orc_unwind_ip: one pc-relative relocation per slot, for the new table.  A
 * kbolt-enabled tree's spare slots (CONFIG_KBOLT_ORC_SPARE, zero-filled by the linker
 * script) have none, so the section may hold fewer: the first slots get them, as many
 * as it holds.  Nothing is lost: arch/x86/tools/relocs leaves pc-relative relocations
 * inside the kernel out of the KASLR table, and nothing else reads these.
 */
static int rewrite_orc_relocs(struct opt *opt)
{
	struct kmeta_sec *rsec = kmeta_find_sec_by_name(opt->img, ".rela.orc_unwind_ip");
	struct kmeta_sec *ip = kmeta_find_sec_by_name(opt->img, ".orc_unwind_ip");
	size_t sym = 0, nr;
	uint64_t size = 0;
	unsigned char *raw;

	if (!rsec)
		return 0;
	raw = file_bytes(opt, rsec, &size);
	nr = size / sizeof(struct rela_raw);
	if (!raw || size % sizeof(struct rela_raw) || nr > opt->nr_orc) {
		pr_err(opt->img->path, ".rela.orc_unwind_ip: %" PRIu64 " bytes for %zu entries: "
		       "cannot regenerate it", size, opt->nr_orc);
		return -EINVAL;
	}
	for (size_t k = 0; k < nr; k++) {
		unsigned char *r = raw + k * sizeof(struct rela_raw);
		uint64_t a = opt->orc_ips[k];

		sym = section_sym(opt->img, a, sym);
		if (!sym) {
			pr_err(opt->img->path, "orc: entry %zu at 0x%" PRIx64 " is in no section: "
			       "cannot relocate it", k, a);
			return -EINVAL;
		}
		put_u64(r, ip->addr + 4 * k);
		put_u64(r + 8, ((uint64_t)sym << 32) | R_X86_64_PC32);
		put_u64(r + 16, a - opt->img->syms[sym].addr);
	}
	return 0;
}

/*
 * A new layout can give the old bytes (two equal blocks swapped): such a function
 * keeps its old layout, so that whatever points into it is not re-targeted for
 * nothing, and the others are emitted again without it.
 */
static void emit_all(struct opt *opt)
{
	bool again = true;

	while (again) {
		again = false;
		for (size_t n = 0; n < opt->nr_funcs; n++) {
			struct func *f = &opt->funcs[n];

			free(f->code);
			f->code = NULL;
			if (f->moved)
				emit_code(opt, f);
		}
		for (size_t n = 0; n < opt->nr_funcs; n++) {
			struct func *f = &opt->funcs[n];

			if (f->moved && !memcmp(f->code, image_ptr(opt, f->sym->addr, f->sym->size),
						f->sym->size)) {
				f->moved = false;
				again = true;
			}
		}
	}
}

struct last_passes {
	struct opt *opt;
	const struct moved_slots *ms;
	size_t nr_ms;
	unsigned char **stale;
	struct pending_writes writes;	/* the relocations' */
	int err[2];
};

/*
 * The relocations (but ORC's) and the ORC table, side by side: they write different
 * sections, and neither reads what the other writes (orc_write() sets opt->orc_ips,
 * which only rewrite_orc_relocs() reads, after both).
 */
static void last_pass(void *arg, size_t i, unsigned int worker)
{
	struct last_passes *l = arg;

	l->err[i] = i ? orc_write(l->opt)
		      : rewrite_relocs(l->opt, l->ms, l->nr_ms, l->stale, &l->writes);
}

int rewrite_image(struct opt *opt)
{
	unsigned char **stale = find_stale_relocs(opt);
	struct last_passes l = { .opt = opt, .stale = stale };
	struct moved_slots *ms = NULL;
	size_t nr_ms = 0;
	int err;

	emit_all(opt);
	note_moved_code(opt);	/* emit_all() has stopped the functions it could not move */
	err = retarget_unmoved(opt);
	if (!err) {
		commit_code(opt);
		grow_symbols(opt);
		err = rewrite_tables(opt, &ms, &nr_ms);
	}
	if (!err) {
		l.ms = ms;
		l.nr_ms = nr_ms;
		/* orc_write() rewrites both whole, beside the relocations */
		kmeta_copy_sec_now(opt->img, kmeta_find_sec_by_name(opt->img, ".orc_unwind_ip"));
		kmeta_copy_sec_now(opt->img, kmeta_find_sec_by_name(opt->img, ".orc_unwind"));
		parallel_for(2, last_pass, &l);
		apply_writes(&l.writes);
		err = l.err[0] ? l.err[0] : l.err[1];
	}
	if (!err)
		err = rewrite_orc_relocs(opt);
	for (size_t k = 0; k < nr_ms; k++)
		free(ms[k].perm);
	free(ms);
	for (size_t i = 0; i < opt->img->nr_secs; i++)
		free(stale[i]);
	free(stale);
	return err;
}
