// SPDX-License-Identifier: GPL-2.0
/*
 * The function model every pass shares: which function holds an address (the hot
 * lookup of every relocation, table and ORC entry), which op of it, why a function is
 * left untouched (the skip reasons of Documentation/kbolt.rst, SKIP REASONS), and the
 * filter of the code that moved.
 */
#include <stdlib.h>

#include "../../common/util.h"
#include "opt.h"

/*
 * Each reason's stable identifier, the JSON key of --stats -j that scripts match, and
 * its sentence, for people (Documentation/kbolt.rst, SKIP REASONS)
 */
static const struct {
	const char *id, *text;
} skip_names[SKIP_NR] = {
	[SKIP_NONE] = { "rewritten", "rewritten" },
	[SKIP_FILTERED] = { "filtered", "excluded by --funcs/--skip-funcs" },
	[SKIP_AREA] = { "fixed_area", "in entry, thunk, static-call or head text" },
	[SKIP_UNDECODABLE] = { "undecodable", "undecodable instruction" },
	[SKIP_SYM_INSIDE] = { "symbol_inside", "symbol in its middle" },
	[SKIP_MID_INSN_REF] = { "mid_insn_ref", "reference into the middle of an instruction" },
	[SKIP_UNDECODED_REF] = { "undecoded_ref", "reference from code kbolt did not decode" },
	[SKIP_SHORT_REF] = { "short_ref", "rel8 branch into it from elsewhere" },
	[SKIP_FALLS_OFF] = { "falls_off", "execution falls off its end" },
	[SKIP_SPLIT_SITE] = { "split_site", "patch site split by an instruction or the function's end" },
	[SKIP_TABLE_ENTRY] = { "table_entry", "table entry kbolt cannot map" },
	[SKIP_ODD_TRAP] = { "odd_trap", "ud2 outside the bug table with bytes after it" },
	[SKIP_NO_FIT] = { "no_fit", "no layout fits in its bytes" },
	[SKIP_ORC_BUDGET] = { "orc_full", "ORC table full" },
	[SKIP_DATA_VALUE] = { "data_value",
			      "address inside it held as a value, no relocations to rewrite it" },
	[SKIP_PADDING] = { "padding", "padding or CFI preamble before a function" },
	[SKIP_TAIL_REF] = { "tail_ref", "reference into the padding after it" },
	[SKIP_DEBUG_INFO] = { "debug_info", "DWARF kbolt cannot update (--update-debug)" },
};

const char *skip_reason_name(unsigned int why)
{
	return why < SKIP_NR ? skip_names[why].text : "?";
}

const char *skip_reason_id(unsigned int why)
{
	return why < SKIP_NR ? skip_names[why].id : "?";
}

uint64_t func_elf_end(const struct func *f)
{
	return f->sym->addr + kmeta_elf_size(f->sym);
}

bool is_rewritable(const struct func *f)
{
	return !f->alias && f->skip == SKIP_NONE;
}

void skip_func(struct opt *opt, struct func *f, enum skip_reason why, uint64_t addr)
{
	(void)opt;
	if (f->alias || f->skip != SKIP_NONE)
		return;
	f->skip = why;
	f->skip_addr = addr;
}

/*
 * Millions of lookups (every relocation, table and ORC entry): they read only the
 * compact func_span[] until they find a function, not the functions themselves.  Each
 * thread keeps its own last hit: one shared between the threads would move from core
 * to core at every store.
 */
static __thread size_t last_span;

struct func *find_func_containing(struct opt *opt, uint64_t addr)
{
	const struct func_span *last = NULL;
	long i;

	if (last_span < opt->nr_funcs)
		last = &opt->func_span[last_span];

	/* lookups come in address order more often than not */
	if (last && addr >= last->start && addr < last->end)
		return &opt->funcs[last->owner];
	i = kmeta_func_at_or_before(opt->img, addr);	/* opt->funcs is parallel */
	if (i < 0 || addr >= opt->func_span[i].end)
		return NULL;
	last_span = i;
	return &opt->funcs[opt->func_span[i].owner];
}

void note_moved_code(struct opt *opt)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < opt->nr_funcs; i++) {
		const struct func *f = &opt->funcs[i];

		if (f->moved) {
			lo = f->sym->addr < lo ? f->sym->addr : lo;
			hi = f->sym->addr + f->sym->size > hi ? f->sym->addr + f->sym->size : hi;
		}
	}
	free(opt->moved_lines);
	opt->moved_base = lo == UINT64_MAX ? 0 : lo;
	opt->nr_moved_lines = hi > lo ? ((hi - lo) >> CACHE_LINE_SHIFT) + 1 : 0;
	opt->moved_lines = xcalloc(opt->nr_moved_lines / 8 + 1, 1);
	for (size_t i = 0; i < opt->nr_funcs; i++) {
		const struct func *f = &opt->funcs[i];
		uint64_t first, last;

		if (!f->moved || !f->sym->size)
			continue;
		first = (f->sym->addr - opt->moved_base) >> CACHE_LINE_SHIFT;
		last = (f->sym->addr + f->sym->size - 1 - opt->moved_base) >> CACHE_LINE_SHIFT;
		for (uint64_t line = first; line <= last; line++)
			bitmap_set(opt->moved_lines, line);
	}
}

struct func *moved_func_containing(struct opt *opt, uint64_t addr)
{
	uint64_t line = (addr - opt->moved_base) >> CACHE_LINE_SHIFT;
	struct func *f;

	if (opt->moved_lines && (addr < opt->moved_base || line >= opt->nr_moved_lines ||
				 !bitmap_test(opt->moved_lines, line)))
		return NULL;
	f = find_func_containing(opt, addr);
	return f && f->moved ? f : NULL;
}

long find_op_containing(const struct func *f, uint64_t addr)
{
	uint32_t off, lo = 0, hi = f->nr_ops;

	if (addr < f->sym->addr || addr >= f->sym->addr + f->sym->size)
		return -1;
	off = addr - f->sym->addr;
	while (lo < hi) {	/* first op starting after off */
		uint32_t mid = lo + (hi - lo) / 2;

		if (f->ops[mid].off <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || off >= f->ops[lo - 1].off + f->ops[lo - 1].len)
		return -1;
	return lo - 1;
}

void opt_free_model(struct opt *opt)
{
	for (size_t i = 0; opt->funcs && i < opt->nr_funcs; i++) {
		struct func *f = &opt->funcs[i];

		free(f->ops);
		free(f->bbs);
		free(f->fixes);
		free(f->order);
		free(f->items);
		free(f->code);
	}
	free(opt->funcs);
	free(opt->func_span);
	free(opt->moved_lines);
	free(opt->sec_rewrite);
	free(opt->orc_ips);
	free(opt->extra.insns);
	prof_free(opt->prof);
	*opt = (struct opt){ .img = opt->img, .o = opt->o };
}
