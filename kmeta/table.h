/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Patch-site tables described as data.  Each table file (alternatives.c, orc.c, ...)
 * exports one struct table_desc: how to find the table, the entry layouts kmeta knows
 * (templates: each field's name, BTF member and meaning), which fields point into code, and optional hooks for what is table-specific: symbolic
 * formatting of a field and the per-entry check against the bytes it points to.
 *
 * Where the kernel has BTF, the layout is read from it (table.c, as libbpf's CO-RE
 * relocations do): the template whose members are exactly the struct's gives each
 * field's meaning, BTF its offset, size, signedness and bits.  Without BTF a template is
 * taken as it is, chosen by the kernel version.
 *
 * The generic engine (table.c) locates, reads, filters and formats entries; the
 * commands (summary, dump, check, diff) and kbolt's rewriting go through it.
 */
#ifndef KMETA_TABLE_H
#define KMETA_TABLE_H

#include "../common/util.h"
#include "kmeta.h"

#define TABLE_MAX_FIELDS 6

enum field_kind {
	FK_U8, FK_U16, FK_U32, FK_U64,
	FK_S8, FK_S16, FK_S32, FK_S64,
	FK_PCREL32,	/* s32 offset from the field's own address */
	FK_PCREL64,	/* s64 offset from the field's own address */
	FK_ABS64,	/* u64 absolute address */
};

enum field_role {
	FR_VALUE,	/* a plain number */
	FR_SITE,	/* the code location the entry describes (at most one per layout) */
	FR_CODE,	/* another pointer into code: a target, fixup or replacement */
	FR_DATA,	/* a pointer to a data object: a key, a string */
};

struct field {
	const char *name;	/* as printed; also the BTF member name unless btf is set */
	const char *btf;	/* BTF member name when it differs, "" when not in BTF */
	unsigned char off;
	unsigned char kind;	/* enum field_kind */
	unsigned char role;	/* enum field_role */
	unsigned char flag_bits;	/* low bits of a pointer that carry flags */
	bool hex;		/* print a plain value in hex (ids, masks); decimal otherwise */
	unsigned char bit_shift;	/* a bitfield (from BTF): its bits in the unit read */
	unsigned char bit_width;	/* 0: the whole unit */
};

struct layout {
	const char *name;		/* "6.1", "6.12" */
	unsigned int min_version;	/* KMETA_VERSION(); 0 = any */
	unsigned int max_version;	/* 0 = any */
	unsigned int entry_size;
	const char *btf_covered;	/* BTF members, space-separated, that a field here
					   reads as part of a wider unit (ORC's bitfields) */
	bool cut_tail;			/* the last entry may lack its tail padding: 5.10's
					   .parainstructions ends at the last entry's fields */
	struct field fields[TABLE_MAX_FIELDS];
};

struct table_range {
	uint64_t addr;
	uint64_t size;
	const char *name;	/* section or symbol family the range came from */
	size_t nr;		/* its entries */
};

struct kmeta_entry {
	size_t idx;		/* slot number in the table */
	uint64_t addr;		/* address of the slot */
	unsigned int range;
	uint64_t raw[TABLE_MAX_FIELDS];	/* as stored */
	uint64_t val[TABLE_MAX_FIELDS];	/* pointers resolved to addresses, flags masked */
	unsigned char flags[TABLE_MAX_FIELDS];	/* the masked low bits (flag_bits) */
	uint64_t site;		/* val of the FR_SITE field, 0 if none */
	bool filler;		/* a padding slot: site field stored as 0 */
};

struct kmeta_table;
struct check_ctx;

/*
 * What a rewriter of code must know of a table beyond its sites and code fields: kbolt's
 * passes (pass/refs.c marks the entries, pass/rewrite.c remaps them, profile/ trusts
 * no record at a site the kernel patches) and its proof (verify/) read it here, never
 * from a table's name.  A table whose entries only need remapping has none: each site
 * and FR_CODE field maps to the same place in the new code, and the instruction at a
 * site keeps its encoding (Documentation/design.rst, "Tables as data").
 */
enum table_rewrite_flag {
	TR_OWN_PASS = 1 << 0,		/* rewritten and proven by a pass of its own, its
					   relocations too (ORC: regenerated) */
	TR_SITE_IN_INSN = 1 << 1,	/* sites are fields inside instructions and move with
					   them (runtime_const: written at boot) */
	TR_GLUED_FIXUP = 1 << 2,	/* a code field at the next instruction stays right after
					   the site (ex_table: ex_handler_zeropad()) */
	TR_JUMP_LABEL = 1 << 3,		/* the site is a nop or jmp to field's value: a branch
					   the kernel toggles (jump_table) */
	TR_MAY_RESUME = 1 << 4,		/* execution goes on after the site's trap when field has
					   a bit of mask (bug_table: a WARN) */
	TR_AFTER_ENDBR = 1 << 5,	/* a site right after an endbr64 stays glued to it
					   (mcount_loc: ftrace looks at +4) */
	TR_PATCHED_POINT = 1 << 6,	/* the kernel rewrites the instruction at the site at boot
					   (up to 7 bytes: a cs-prefixed jcc32) */
	TR_PATCHED_UNIT = 1 << 7,	/* the kernel rewrites [site, site + field) at boot: one
					   unit (alternatives, paravirt) */
};

struct table_rewrite {
	unsigned int flags;	/* enum table_rewrite_flag */
	const char *field;	/* by name: the field TR_JUMP_LABEL, TR_MAY_RESUME or
				   TR_PATCHED_UNIT reads */
	uint64_t mask;		/* TR_MAY_RESUME: field has a bit of mask ... */
	uint64_t not_mask;	/* ... and none of not_mask */
	uint64_t glue_mask;	/* field has a bit of it: the site stays right after the
				   instruction before it (bug_table: a WARN with arguments,
				   whose entry is the instruction after its lea) */
};

struct table_desc {
	const char *name;		/* "alternatives": the name commands use */
	const char *start_sym;		/* vmlinux: __start_X / __stop_X style bounds */
	const char *stop_sym;
	const char *sec_name;		/* modules, and vmlinux without the symbols */
	const char *btf_struct;		/* NULL when the kernel has no struct for it */
	const struct layout *layouts;
	unsigned int nr_layouts;
	bool sorted;			/* sorted by site at build time */
	bool sort_optional;		/* only by some builds (mcount_loc: BUILDTIME_MCOUNT_
					   SORT), the kernel sorts it at boot otherwise: the
					   image's own order tells */
	struct table_rewrite rewrite;	/* how moved code changes its entries */

	/* for tables that are not one array of fixed-size entries */
	bool (*probe)(struct kmeta_table *t);	/* does the image have it? */
	int (*locate)(struct kmeta_table *t);
	int (*read)(struct kmeta_table *t, size_t idx, struct kmeta_entry *e);
	/* symbolic text of field i, or false to use the generic format */
	bool (*format)(struct kmeta_table *t, const struct kmeta_entry *e, unsigned int i,
		       char *buf, size_t size);
	/* text-dump notation of the whole entry after its site (ORC: objtool's) */
	void (*format_entry)(struct kmeta_table *t, const struct kmeta_entry *e, char *buf,
			     size_t size);
	/* check one non-filler entry against the code it points to */
	void (*check)(struct kmeta_table *t, const struct kmeta_entry *e, struct check_ctx *c);
	/*
	 * TR_PATCHED_UNIT, where the unit is not [site, site + field): the code around the
	 * entry's site that the kernel reads or patches as one piece (kcfi_traps: the check
	 * before its ud2 and the call after); false if the bytes there are not that
	 */
	bool (*unit)(struct kmeta_table *t, const struct kmeta_entry *e, struct kmeta_range *r);
	void (*free_priv)(struct kmeta_table *t);
};

struct kmeta_table {
	const struct table_desc *desc;
	struct kmeta_image *img;
	const struct layout *layout;
	struct layout *btf_layout;	/* layout when read from BTF (owned) */
	bool present;
	bool broken;			/* its error was reported: kmeta_table_get() gives NULL */
	bool sorted;			/* sorted at build time, and so to be kept */
	struct table_range *ranges;
	unsigned int nr_ranges;
	size_t nr_slots;
	void *priv;
};

extern const struct table_desc *const kmeta_table_descs[];
extern const unsigned int kmeta_nr_table_descs;

/* The located table of that descriptor (present false if the image has none); NULL on error. */
struct kmeta_table *kmeta_table_get(struct kmeta_image *img, const struct table_desc *desc);
/* Every table located (its error reported once if not): 0, or -EPROTO */
int kmeta_table_get_all(struct kmeta_image *img);
const struct table_desc *kmeta_table_find_desc(const char *name);
int kmeta_table_read_entry(struct kmeta_table *t, size_t idx, struct kmeta_entry *e);
/* Generic reader of one fixed-size entry at addr, for hooks that split ranges. */
int table_decode_at(struct kmeta_table *t, uint64_t addr, struct kmeta_entry *e);
int table_add_range(struct kmeta_table *t, uint64_t start, uint64_t stop, const char *name);
int table_locate_by_syms(struct kmeta_table *t, const char *start, const char *stop);
/* Text of field i of e: symbolic for pointers, table-specific where the table says so. */
void kmeta_table_format_field(struct kmeta_table *t, const struct kmeta_entry *e, unsigned int i,
			      char *buf, size_t size);
/*
 * Append [site, site + len) of every real entry of every table with the rewrite flag
 * to *arr (*nr used, *cap allocated): len is the value of the rewrite record's field,
 * or fixed_len when 0 is given (sites.c).
 */
int kmeta_table_site_ranges(struct kmeta_image *img, unsigned int flag, unsigned int fixed_len,
			    struct kmeta_range **arr, size_t *nr, size_t *cap);
/* Does t's rewrite record have the flag (enum table_rewrite_flag)? */
static inline bool kmeta_table_has(const struct kmeta_table *t, unsigned int flag)
{
	return t->desc->rewrite.flags & flag;
}
/* Is t sorted at build time, so that a rewriter must keep it sorted? */
static inline bool kmeta_table_sorted(const struct kmeta_table *t)
{
	return t->sorted;
}
/* Index of the field of that name in t's layout, -1 if none */
int table_field_idx(const struct kmeta_table *t, const char *name);
/* The value of the rewrite record's field in e (0 if t's layout has no such field) */
uint64_t kmeta_table_rewrite_value(const struct kmeta_table *t, const struct kmeta_entry *e);
/* Must this entry's site stay right after the instruction before it (glue_mask)? */
bool kmeta_table_entry_glued(const struct kmeta_table *t, const struct kmeta_entry *e);
/* TR_MAY_RESUME: does execution go on after this entry's site? */
bool kmeta_table_entry_resumes(const struct kmeta_table *t, const struct kmeta_entry *e);
/*
 * Per section index, the rewrite flags of the table one of whose ranges is the whole
 * section (.orc_unwind_ip, 6.12's runtime_ptr_* sections; 0 if none): what the
 * section's relocations mean, asked once a section (malloc'ed)
 */
unsigned int *kmeta_table_flags_by_sec(struct kmeta_image *img);
/* Which part of the image a site is in: ".text", ".init.text" or "other" */
const char *kmeta_table_site_area(struct kmeta_table *t, uint64_t site);

/*
 * remap.c: an address map from old code to new; false if addr cannot be mapped.
 * kmeta_table_remap() re-targets every site and code field of t through it and re-sorts a
 * table kept sorted by site; *perm (malloc'ed, NULL if no entry moved) gives each old
 * slot's new slot, *changed the number of fields rewritten.
 */
typedef bool (*kmeta_map_fn)(void *ctx, uint64_t addr, uint64_t *out);
int kmeta_table_remap(struct kmeta_table *t, kmeta_map_fn map, void *ctx, size_t **perm,
		      size_t *changed);
/* Store val (an address) into pointer field i of the entry at entry_addr */
int kmeta_table_write_field(struct kmeta_table *t, uint64_t entry_addr, unsigned int i,
			    uint64_t val);

/* check.c: reporting from table check hooks */
void check_report(struct check_ctx *c, uint64_t addr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Helpers that report and return false when the site is not as expected */
bool check_site_is_code(struct check_ctx *c, uint64_t addr, const char *what);
bool check_insn_boundary(struct check_ctx *c, uint64_t addr, const char *what);
/* A call, jmp or jcc with a rel32 operand, optionally cs-prefixed (objtool's padding). */
struct rel32_branch {
	unsigned char opcode;	/* e8, e9, or 0x80..0x8f for 0f 8x jcc */
	bool prefixed;		/* 2e */
	unsigned int len;
	uint64_t target;
};
bool read_rel32_branch(struct kmeta_image *img, uint64_t addr, struct rel32_branch *b);
/* Name of the symbol starting exactly at addr, or NULL */
const char *sym_name_at(struct kmeta_image *img, uint64_t addr);

#define DEFINE_SITE_LIST_LAYOUT(var)						\
	static const struct layout var[] = {					\
		{ .name = "any", .entry_size = 4,				\
		  .fields = { { "site", "", 0, FK_PCREL32, FR_SITE, 0 } } },	\
	}

#endif
