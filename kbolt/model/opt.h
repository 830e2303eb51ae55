/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The optimizer's model of one kernel: every function as a list of ops (instructions,
 * and alternative/paravirt sites as single unsplittable ops), grouped into basic blocks,
 * with the references that point into it from elsewhere.  The passes of kbolt/pass/,
 * in pipeline order, each stage's functions declared by its header and prefixed with
 * its name:
 *
 *   decode.h   decode.c: ops of every function, patch-site units, per-op facts from
 *              the tables
 *   refs.h     refs.c: references into function bodies (code, tables, relocations,
 *              ORC) and the skips they force
 *   cfg.h      cfg.c: basic blocks and their successors, metadata edges included
 *   prof_map.h prof_map.c: profile records onto blocks; infer.c: block counts from
 *              samples
 *   layout.h   layout.c: a block order per function (ext-TSP, greedy chains or
 *              random); ext_tsp.c: the ext-TSP order of a function's executed blocks
 *   emit.h     emit.c: branch sizes, new offsets, the address map, new bytes
 *   orc_gen.h  orc_gen.c: the ORC table regenerated for the new code
 *   rewrite.h  rewrite.c: tables, relocations and data that point into moved code
 *   bat_build.h  bat_build.c: the translation table of the moves
 * and kbolt/dwarf/dwarf.h, the debug information of the moved code (--update-debug);
 * then kbolt/lib/output.c writes the file through a temporary (build-id, kbolt's note)
 * and kbolt/verify/ proves it against the input.  The function lookup and the skip
 * reasons are model/func.c's, declared here.
 */
#ifndef KBOLT_OPT_H
#define KBOLT_OPT_H

#include <stdbool.h>
#include <stdint.h>

#include "../../kmeta/kmeta.h"
#include "../profile/profile.h"

/* Why a function is left byte-identical (Documentation/kbolt.rst, SKIP REASONS) */
enum skip_reason {
	SKIP_NONE,
	SKIP_FILTERED,		/* --funcs / --skip-funcs */
	SKIP_AREA,		/* entry code, thunks, static-call trampolines, head text */
	SKIP_UNDECODABLE,	/* capstone cannot decode it, or disagrees with itself */
	SKIP_SYM_INSIDE,	/* another symbol starts in its middle */
	SKIP_MID_INSN_REF,	/* a table entry, relocation or branch into an instruction */
	SKIP_UNDECODED_REF,	/* a relocation from code kbolt did not decode points in */
	SKIP_SHORT_REF,		/* a rel8 branch from elsewhere points in */
	SKIP_FALLS_OFF,		/* execution runs off its end into the next symbol */
	SKIP_SPLIT_SITE,	/* a patch site crosses an instruction or the function's end */
	SKIP_TABLE_ENTRY,	/* a table entry kbolt cannot map */
	SKIP_ODD_TRAP,		/* a ud2 with no bug-table entry, code after it */
	SKIP_NO_FIT,		/* no layout fits in the function's bytes */
	SKIP_ORC_BUDGET,	/* its ORC entries would overflow the table */
	SKIP_DATA_VALUE,	/* no relocations: a value equal to an address inside it */
	SKIP_PADDING,		/* __pfx_/__cfi_: padding or preamble, not a function */
	SKIP_TAIL_REF,		/* the alignment padding after it is referenced or reached */
	SKIP_DEBUG_INFO,	/* --update-debug: DWARF kbolt cannot update */
	SKIP_NR
};

enum op_flags {
	OP_UNIT = 1 << 0,	/* an alternative/paravirt site: moved as one piece */
	OP_FIXED = 1 << 1,	/* keep the encoding (table site, relocated, external) */
	OP_JL = 1 << 2,		/* jump-label site: target is the table's target */
	OP_WARN = 1 << 3,	/* WARN ud2: execution resumes after it */
	OP_LEADER = 1 << 4,	/* starts a basic block */
	OP_EXTREF = 1 << 5,	/* something outside the function points at it */
	OP_TRAIL = 1 << 6,	/* int3 padding after a jmp/ret: belongs to it */
	OP_BRANCH_TARGET = 1 << 7,	/* a branch of the function goes there */
	OP_GLUED = 1 << 8,	/* must stay right after the op before it (exception fixup) */
	OP_REENCODED = 1 << 9,	/* a block's jcc/jmp that emit encodes anew */
};

/* op.new_off of an op the emitter has not placed */
#define OP_NOT_PLACED UINT32_MAX

struct op {
	uint64_t target;	/* absolute: direct branch, %rip operand, jump label */
	uint32_t off;		/* offset in the function */
	uint32_t new_off;	/* after emit; OP_NOT_PLACED before */
	uint8_t len;
	uint8_t kind;		/* KI_* of kmeta.h */
	uint8_t rel_off;	/* where target's displacement is, 0 if none */
	uint8_t rel_size;	/* 1 or 4 */
	uint16_t flags;		/* enum op_flags */
	uint8_t insn_flags;	/* KIF_* */
};

/* A displacement or immediate inside an op that is not the op's own target */
struct fix {
	uint32_t op;
	uint8_t field_off;	/* offset of the field in the op */
	uint8_t size;		/* 1, 4 or 8 */
	uint8_t next_off;	/* pc-relative: the value counts from op start + next_off */
	bool pcrel;
	uint64_t target;
};

enum term_kind {
	TERM_NONE,	/* falls through or ends without a branch of ours */
	TERM_JCC,	/* a conditional branch to a block of the function */
	TERM_JMP,	/* an unconditional jump to a block of the function */
};

struct bb {
	uint32_t first, nr;	/* ops [first, first + nr) */
	int32_t taken;		/* block of the terminator's in-function target, -1 */
	int32_t fall;		/* block execution falls into, -1 */
	uint32_t new_off;
	uint64_t count;		/* profile executions */
	uint64_t w_taken, w_fall;	/* profile weight of the two edges */
	uint8_t term;		/* enum term_kind */
	bool near;		/* its jcc or jmp is emitted with rel32 */
	bool near2;		/* so is the jmp added after it */
	bool drop;		/* alignment padding nobody reaches: not emitted */
	bool jl_wide;		/* a 2-byte jump-label terminator widened to 5 */
};

/* What emit places, in order: an old op, or a branch of its own */
enum item_type { ITEM_OP, ITEM_JCC, ITEM_JMP, ITEM_JL };

struct item {
	uint32_t new_off;
	uint32_t op;		/* the old op it comes from; for an added jmp, the target's first */
	int32_t target_bb;	/* ITEM_JCC, ITEM_JMP */
	uint32_t bb;		/* the block it belongs to */
	uint8_t type;		/* enum item_type */
	uint8_t size;
	uint8_t cc;		/* ITEM_JCC: condition code */
	bool added;		/* a jmp that was not in the old code */
};

struct func {
	struct kmeta_sym *sym;
	struct op *ops;
	uint32_t nr_ops;
	struct bb *bbs;
	uint32_t nr_bbs;
	struct fix *fixes;
	size_t nr_fixes, fixes_cap;
	uint32_t *order;	/* layout: indices of the blocks emitted, entry first */
	uint32_t nr_order;
	struct item *items;	/* emit's plan */
	uint32_t nr_items;
	size_t items_cap;
	unsigned char *code;	/* emitted bytes, sym->size of them */
	uint64_t weight;	/* profile weight of its edges */
	uint64_t skip_addr;	/* where the skip reason was found */
	uint32_t orc_old, orc_new;
	unsigned char skip;	/* enum skip_reason */
	bool alias;		/* same range as the previous function: not separate */
	bool pad;		/* __pfx_/__cfi_ bytes before a function: never counted */
	bool moved;		/* new bytes differ from the old */
	bool decoded;
	bool want_decode;	/* lite: may point into a function being rewritten */
	bool greedy_fallback;	/* --layout profile: ext-TSP's order did not fit, greedy did */
};

enum layout_kind { LAYOUT_PROFILE, LAYOUT_GREEDY, LAYOUT_RANDOM };

struct opt_options {
	const char *profile;
	enum layout_kind layout;
	uint64_t seed;
	const char **funcs, **skip_funcs;
	size_t nr_funcs, nr_skip_funcs;
	bool force;
	bool strip_debug;	/* leave the DWARF (of the old code) out of the output */
	bool update_debug;	/* rewrite the DWARF for the new code, and prove it */
	bool require_rewrite;	/* an output that moves nothing (of the profile) is an error */
};

/* Decoded code that is not a function of its own: alternative replacements, .altinstr_aux */
struct extra_code {
	struct kmeta_insn *insns;
	size_t nr, cap;
};

struct opt {
	struct kmeta_image *img;
	const struct opt_options *o;
	struct prof *prof;
	struct func *funcs;	/* parallel to img->funcs */
	size_t nr_funcs;
	struct func_span {	/* parallel to funcs: what lookups read */
		uint64_t start, end;	/* end: of the function an alias repeats */
		size_t owner;		/* the function itself, or the one it repeats */
	} *func_span;
	/*
	 * A bit per 64-byte line from moved_base that holds code of a moved function,
	 * set once no function can start moving (note_moved_code()): a filter that lets
	 * moved_func_containing() answer most lookups without a search
	 */
	unsigned char *moved_lines;
	uint64_t moved_base, nr_moved_lines;
	uint64_t *sites;	/* every table's site addresses except ORC's, sorted */
	size_t nr_sites;
	struct extra_code extra;
	uint64_t head_end;	/* [_text, head_end): head code, never rewritten */
	/*
	 * Lite (profile layouts): only functions with profile weight are decoded, and
	 * the code that may point into them, found by parallel_scan_rel_refs()
	 */
	bool lite;
	/*
	 * No .rela sections (6.2+ builds strip them): addresses in data and immediates
	 * are found by kmeta_scan_abs_refs(), and every function one may point into
	 * is left alone
	 */
	bool no_relocs;
	/*
	 * Per section index: the rewrite flags (kmeta/table.h) of the table that is the
	 * whole section, 0 if none: what its relocations mean (refs.c, rewrite.c)
	 */
	unsigned int *sec_rewrite;
	/* ORC, read once: old ips (sorted) and their 6-byte entries */
	uint64_t *orc_ips;
	const unsigned char *orc_entries;
	size_t nr_orc;
	uint64_t total_weight;
};

/*
 * model/func.c: the function lookup and the skip reasons.  The passes' own functions
 * are declared by their stages' headers, each prefixed with its stage's name.
 */
/* Free the whole model but the image (and opt->o), which stay */
void opt_free_model(struct opt *opt);
struct func *find_func_containing(struct opt *opt, uint64_t addr);
/* The moved function containing addr, NULL if none */
struct func *moved_func_containing(struct opt *opt, uint64_t addr);
/* Build the filter of moved_func_containing(): functions may stop moving after, not start */
void note_moved_code(struct opt *opt);
/* Index of the op starting at or containing addr in f, -1 if outside */
long find_op_containing(const struct func *f, uint64_t addr);
void skip_func(struct opt *opt, struct func *f, enum skip_reason why, uint64_t addr);
/* The sentence of a skip reason, and its stable identifier (the JSON key) */
const char *skip_reason_name(unsigned int why);
const char *skip_reason_id(unsigned int why);
bool is_rewritable(const struct func *f);
/* Where f's code ends, its ELF size after its start (sym->size may hold padding too) */
uint64_t func_elf_end(const struct func *f);

#endif
