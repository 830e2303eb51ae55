/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libkmeta: the model of a linked x86-64 kernel image (vmlinux, ET_EXEC) or module
 * (.ko, ET_REL): sections, symbols, functions with their .cold fragments, relocations,
 * instruction boundaries and every patch-site table.  Everything hangs off one
 * struct kmeta_image; kmeta_close() frees it all.
 *
 * Addresses: a vmlinux is used at its link addresses.  A module's allocated sections get
 * synthetic addresses (laid out one after another, like the module loader would) and its
 * relocations are applied when it is read, so that tables decode the same way in both.
 */
#ifndef KMETA_H
#define KMETA_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "addr_index.h"

struct btf;
struct kmeta_table;

struct kmeta_sec {
	const char *name;
	size_t idx;
	uint64_t addr;
	uint64_t size;
	uint32_t type;
	uint64_t flags;
	unsigned char *data;	/* NULL for SHT_NOBITS */
	Elf_Scn *scn;
};

struct kmeta_sym {
	const char *name;
	uint64_t addr;
	uint64_t size;
	unsigned char type;	/* STT_* */
	unsigned char bind;	/* STB_* */
	unsigned int shndx;
	unsigned int file;	/* index of the STT_FILE symbol this local follows, 0 if none */
	struct kmeta_sym *parent;	/* for foo.cold: foo */
	uint32_t padding;	/* bytes of alignment padding size covers (padding.c) */
	bool undefined_stub;	/* a module's undefined symbol, given a synthetic address */
};

struct kmeta_reloc {
	uint64_t addr;		/* where it applies */
	uint64_t target;	/* S + A */
	struct kmeta_sym *sym;
	int64_t addend;
	uint32_t type;		/* R_X86_64_* */
};

/* Instruction boundaries of one function, from kmeta_func_decode(). */
struct kmeta_func_insns {
	uint64_t start, end;
	uint32_t nr;
	size_t cap;
	uint32_t *off;		/* offsets of instruction starts, ascending */
	uint64_t bad_addr;	/* first undecodable address, 0 if none (yet) */
	uint64_t done;		/* decoded up to here: decoding is incremental */
};

struct kmeta_range {
	uint64_t start, end;
};

struct kmeta_image {
	char *path;
	unsigned char *map;
	size_t map_size;
	bool map_is_heap;	/* decompressed module: free, don't munmap */
	Elf *elf;
	GElf_Ehdr ehdr;
	bool is_module;

	struct kmeta_sec *secs;
	size_t nr_secs;
	struct kmeta_sec **secs_by_addr;	/* allocated, placed, sized: by address */
	size_t nr_secs_by_addr;
	bool secs_overlap;		/* a corrupt image: lookups take the first by index */

	struct kmeta_sym *syms;		/* symtab order; syms[0] is the null symbol */
	size_t nr_syms;
	struct kmeta_sym **sorted;	/* defined symbols by address, then size descending */
	size_t nr_sorted;
	struct kmeta_sym **funcs;	/* STT_FUNC with size, by address */
	size_t nr_funcs;
	struct addr_index func_starts;	/* their addresses, for lookups */
	struct kmeta_sym **names;	/* open-addressing name index */
	size_t names_mask;

	struct rela_lookup *rela_lookups;	/* reloc.c, per relocated section, lazily */

	char release[128];	/* "6.1.0-57-cloud-amd64" */
	unsigned int version;	/* KMETA_VERSION(6, 1) */

	struct btf *btf;	/* lazily parsed .BTF, NULL if none */
	bool btf_tried;

	uint64_t text_start, text_end;	/* _text.._etext (vmlinux) */

	struct kmeta_table **tables;	/* one per descriptor, located lazily */
	void *decoder;			/* insn.c's state */
	struct kmeta_sym *last_func;	/* lookup cache of kmeta_is_insn_boundary() */
	struct kmeta_func_insns *last_insns;
	struct kmeta_range *site_ranges;	/* sites.c */
	size_t nr_site_ranges;
	bool site_ranges_ready;
};

#define KMETA_VERSION(maj, min) ((maj) * 1000 + (min))

/* image.c */
struct kmeta_image *kmeta_open(const char *path);
struct kmeta_image *kmeta_open_memory(const char *name, const void *buf, size_t size);
void kmeta_close(struct kmeta_image *img);

/* elf.c: sections and bytes */
struct kmeta_sec *kmeta_find_sec_by_name(struct kmeta_image *img, const char *name);
struct kmeta_sec *kmeta_find_sec_containing(struct kmeta_image *img, uint64_t addr);
/* pages.c: which pages of the (private) mapping were written, and giving back the rest */
typedef int (*kmeta_page_run_fn)(void *ctx, uint64_t off, uint64_t size, bool written);
/* fn for each run of [off, off + size) of the file's bytes that was written or not */
int kmeta_for_each_page_run(struct kmeta_image *img, uint64_t off, uint64_t size,
			    kmeta_page_run_fn fn, void *ctx);
/* Drop the pages of sec that were only read, until read again (a minor fault each) */
void kmeta_release_sec(struct kmeta_image *img, const struct kmeta_sec *sec);
/* The same for the whole file, and for size bytes of the mapping at p */
void kmeta_release_image(struct kmeta_image *img);
void kmeta_release_bytes(struct kmeta_image *img, const void *p, uint64_t size);
/*
 * Copy the pages of sec now, as writing them would (best effort: MADV_POPULATE_WRITE,
 * Linux 5.14+): for a section about to be rewritten whole by one of several threads.
 * A copy made while another thread of the process runs on another core costs an
 * interrupt there to flush its TLB; made before the threads start, it does not.
 */
void kmeta_copy_sec_now(struct kmeta_image *img, const struct kmeta_sec *sec);
/* Pointer to size bytes at addr, NULL unless they all lie in one section with data. */
const unsigned char *kmeta_bytes_at(struct kmeta_image *img, uint64_t addr, uint64_t size);
bool kmeta_is_text_addr(struct kmeta_image *img, uint64_t addr);

/* sym.c */
struct kmeta_sym *kmeta_find_sym_by_name(struct kmeta_image *img, const char *name);
/* Index in img->funcs of the last function starting at or before addr, -1 if none */
long kmeta_func_at_or_before(struct kmeta_image *img, uint64_t addr);
struct kmeta_sym *kmeta_find_func_containing(struct kmeta_image *img, uint64_t addr);
struct kmeta_sym *kmeta_find_sym_containing(struct kmeta_image *img, uint64_t addr);
struct kmeta_sym *kmeta_find_sym_at(struct kmeta_image *img, uint64_t addr);
/*
 * Of the symbols at addr, the one named name (or starting with it, if prefix): code is
 * known by its address, whatever alias comes first (7.x: __pi___x86_return_thunk)
 */
struct kmeta_sym *kmeta_find_alias_at(struct kmeta_image *img, uint64_t addr, const char *name,
				      bool prefix);
/* "func+0xoff", "sym+0xoff" or "0xaddr" into buf; returns buf */
char *kmeta_addr_str(struct kmeta_image *img, uint64_t addr, char *buf, size_t size);
#define KMETA_ADDR_STR_SIZE 256

/*
 * padding.c: let each function's size cover the alignment padding after it (nops and
 * int3s, no symbol, under 64 bytes), for a rewriter that may use it; the number of
 * functions that got some.  _like: the same sizes as like, an image of the same
 * kernel with the same symbols (a rewritten one, whose functions may have grown into
 * their padding, ELF sizes included); 0 or -EINVAL if their functions differ.  Call
 * before anything is looked up.
 */
size_t kmeta_claim_padding(struct kmeta_image *img);
int kmeta_claim_padding_like(struct kmeta_image *img, const struct kmeta_image *like);
/*
 * Is name that of the padding before a function (6.2+, CONFIG_FUNCTION_PADDING_BYTES)?
 * __pfx_foo covers the 16 bytes before foo, nops that call-depth tracking overwrites at
 * boot with its accounting thunk (callthunks.c patch_dest() refuses padding that is not
 * nops), and that FineIBT rewrites; with kCFI __cfi_foo holds "movl $hash, %eax", the
 * hash the caller reads at foo-15.  They are not functions: execution falls through
 * them into foo, and their bytes must stay as they are.
 */
bool kmeta_is_padding_sym(const char *name);
/* The function's ELF size: where its code ends and claimed padding begins */
static inline uint64_t kmeta_elf_size(const struct kmeta_sym *sym)
{
	return sym->size - sym->padding;
}

/* reloc.c */
/* The allocated section that rsec relocates, NULL if rsec is not such a .rela */
struct kmeta_sec *kmeta_rela_target(struct kmeta_image *img, struct kmeta_sec *rsec);
/*
 * For every relocation of an allocated section (R_X86_64_NONE left out), .rela by
 * .rela in file order: fn(ctx, the section it applies to, the relocation); a nonzero
 * return stops the walk and is returned.  -EINVAL (said) for an unreadable .rela.
 */
typedef int (*kmeta_reloc_fn)(void *ctx, struct kmeta_sec *target,
			      const struct kmeta_reloc *r);
int kmeta_for_each_reloc(struct kmeta_image *img, kmeta_reloc_fn fn, void *ctx);
/*
 * The same for those numbered [first, last) in that order, R_X86_64_NONE counted, of
 * kmeta_nr_relocs(): parts of the walk that threads can take (read-only lookups).
 */
size_t kmeta_nr_relocs(struct kmeta_image *img);
int kmeta_for_each_reloc_in(struct kmeta_image *img, size_t first, size_t last,
			    kmeta_reloc_fn fn, void *ctx);
/* The relocation applied at addr (of a vmlinux) into *out; false if none */
bool kmeta_reloc_at(struct kmeta_image *img, uint64_t addr, struct kmeta_reloc *out);
bool kmeta_reloc_is_pcrel(uint32_t type);
/* Bytes a relocation of this type stores: 8 or 4 */
unsigned int kmeta_reloc_size(uint32_t type);
/* What it stores at p for S + A = s_a; 0, or -EINVAL for a type kmeta does not handle */
int kmeta_reloc_value(uint32_t type, uint64_t s_a, uint64_t p, uint64_t *value);
/* Store value in the relocation's kmeta_reloc_size() bytes at q */
void kmeta_reloc_store(unsigned char *q, uint32_t type, uint64_t value);
/*
 * Does the value at p hold what a relocation of this type with S + A = s_a says?
 * (Tables sorted after linking keep relocations of their old order: those do not.)
 */
bool kmeta_reloc_holds(struct kmeta_image *img, uint32_t type, uint64_t s_a, uint64_t p);

/* version.c */
int kmeta_read_version(struct kmeta_image *img);
/* The GNU build-id as hex into buf; -ENOENT if the image has none */
int kmeta_build_id(struct kmeta_image *img, char *buf, size_t size);

/* btf.c */
struct btf *kmeta_btf(struct kmeta_image *img);
/* Size of struct name, -ENOENT if BTF lacks it. */
int kmeta_btf_struct_size(struct kmeta_image *img, const char *name);
/* A member of a struct as BTF describes it, anonymous structs and unions opened */
struct kmeta_btf_member {
	const char *name;
	unsigned int bit_off;	/* from the start of the struct */
	unsigned int bit_size;	/* a bitfield's width; 0 if not a bitfield */
	unsigned int size;	/* bytes of an integer, enum or pointer; 0 for anything else */
	bool is_signed;
	bool is_pointer;
};
/* Struct sname's members into out: their number, -ENOENT, -E2BIG beyond max, -EPROTO */
int kmeta_btf_struct_members(struct kmeta_image *img, const char *sname,
			     struct kmeta_btf_member *out, int max);
/* Dotted path ("irq.save_fl") of the member at byte off of struct sname; -ENOENT if none */
int kmeta_btf_member_at(struct kmeta_image *img, const char *sname, unsigned int off,
			char *buf, size_t size);

/* insn.c: instruction boundaries from capstone */
const struct kmeta_func_insns *kmeta_func_decode(struct kmeta_image *img, struct kmeta_sym *func);
/* 1 if addr starts an instruction of its function, 0 if not, -1 if not decodable/known */
int kmeta_is_insn_boundary(struct kmeta_image *img, uint64_t addr);
/*
 * Condition code (0-15) of the jcc in p[0..len), 7x rel8 or 0f 8x rel32 after optional
 * 2e/3e branch hints; -1 for any other instruction (loop, jrcxz included)
 */
int kmeta_jcc_cond(const unsigned char *p, unsigned int len);
/* Length of the instruction at addr, or a negative errno */
int kmeta_insn_len(struct kmeta_image *img, uint64_t addr);

/* One decoded instruction, as control flow sees it (insn.c) */
enum kmeta_insn_kind {
	KI_OTHER,	/* falls through */
	KI_JCC,		/* conditional direct jump (jcc, jrcxz, loop) */
	KI_JMP,		/* unconditional direct jump */
	KI_CALL,	/* direct call */
	KI_RET,
	KI_IJMP,	/* indirect jump */
	KI_ICALL,	/* indirect call */
	KI_TRAP,	/* int3, int n, int1 (KIF_INT), ud2, iret, sysret, sysexit */
};

enum kmeta_insn_flags {
	KIF_RIP = 1,	/* target is a RIP-relative memory operand's address */
	KIF_NOP = 2,	/* a nop of any length */
	KIF_UD = 4,	/* ud2 or ud1: BUG()/WARN() sites */
	KIF_INT = 8,	/* int3, int n, int1: the handler may return to the next one */
};

struct kmeta_insn {
	uint64_t addr;
	uint64_t target;	/* direct branches and calls; KIF_RIP: the operand's address */
	unsigned char len;
	unsigned char kind;	/* enum kmeta_insn_kind */
	unsigned char flags;	/* enum kmeta_insn_flags */
	unsigned char rel_off;	/* where the rel8/rel32 or disp32 of target is, 0 if none */
	unsigned char rel_size;	/* 1 or 4; 0 if target is 0 */
};

/* Decode the instruction at addr; 0 or a negative errno (-EILSEQ: not an instruction) */
int kmeta_insn_decode(struct kmeta_image *img, uint64_t addr, struct kmeta_insn *insn);
/*
 * Decode [start, end) in one pass into a malloc'ed array (*insns, *nr).  Stops at the
 * first undecodable address, returned in *bad_addr (0 if none).  0 or a negative errno.
 */
int kmeta_insn_decode_range(struct kmeta_image *img, uint64_t start, uint64_t end,
			    struct kmeta_insn **insns, size_t *nr, uint64_t *bad_addr);
/*
 * May the bytes at addr, in code not decoded as a whole function, be a branch or
 * %rip-relative operand to target?  A linear sweep from the start of the code symbol
 * that holds addr (a function up to bytes capstone does not know, or an assembler
 * symbol with a size, in executable code) says not when addr is inside an instruction,
 * or starts one that leads elsewhere; else (no such symbol, or the sweep stops first)
 * they may be.
 */
bool kmeta_swept_may_ref(struct kmeta_image *img, uint64_t addr, uint64_t target);
/*
 * Where the operand fields of an instruction lie, as capstone found them (all 0 for
 * one it does not know): the displacement of its memory operand and its immediate
 * (offset and size in bytes; size 0: none), a %gs override (the displacement is then
 * a per-CPU offset), and capstone's instruction id (the mnemonic, the same for every
 * encoding of it).  For hashes of code that leave its addresses out.
 */
struct kmeta_insn_fields {
	unsigned int id;
	unsigned char disp_off, disp_size, imm_off, imm_size;
	bool gs;
};
/* kmeta_insn_decode_range(), with each instruction's fields in a parallel array */
int kmeta_insn_decode_range_fields(struct kmeta_image *img, uint64_t start, uint64_t end,
				   struct kmeta_insn **insns, struct kmeta_insn_fields **fields,
				   size_t *nr, uint64_t *bad_addr);
/*
 * Threads: kmeta_insn_decode(), kmeta_insn_decode_range(), kmeta_reloc_at(),
 * kmeta_bytes_at() and the lookups of symbols and sections by address may run in
 * several threads at once on an image that none of them changes (not so
 * kmeta_is_insn_boundary() and kmeta_func_decode(), which share a cache, nor
 * kmeta_patch_sites() and kmeta_table_get() the first time).
 * Each thread decodes with a capstone handle of its own: one that decoded calls
 * kmeta_insn_thread_exit() before it ends, to close it.
 */
void kmeta_insn_thread_exit(void);
/* A jmp, ret, indirect jmp or trap: nothing falls through it */
static inline bool kmeta_insn_ends_flow(const struct kmeta_insn *insn)
{
	return insn->kind == KI_JMP || insn->kind == KI_RET || insn->kind == KI_IJMP ||
	       insn->kind == KI_TRAP;
}

/*
 * scan.c: every byte of executable code that may start a relative branch or hold a
 * %rip-relative ModRM whose target lies inside one of the sorted, disjoint ranges
 * (past its first byte): fn(ctx, at, target).  A superset of the real references,
 * found without decoding.  The scan runs in parts, for threads: kmeta_rel_scan_new()
 * prepares it (0 or a negative errno); kmeta_rel_scan_part() scans part k of
 * kmeta_rel_scan_nr_parts(), keeping its hits, and gives back the pages it read:
 * different parts may be scanned by different threads at once.
 * kmeta_rel_scan_report() then calls fn for every hit of every part, in address order.
 */
typedef void (*kmeta_scan_fn)(void *ctx, uint64_t at, uint64_t target);
struct kmeta_rel_scan;
int kmeta_rel_scan_new(struct kmeta_image *img, const struct kmeta_range *r, size_t nr,
		       struct kmeta_rel_scan **out);
size_t kmeta_rel_scan_nr_parts(const struct kmeta_rel_scan *s);
void kmeta_rel_scan_part(struct kmeta_rel_scan *s, size_t k);
void kmeta_rel_scan_report(const struct kmeta_rel_scan *s, kmeta_scan_fn fn, void *ctx);
void kmeta_rel_scan_free(struct kmeta_rel_scan *s);
/*
 * Every loaded byte but the tables kmeta knows, read as the possible start of an
 * address inside the ranges: an 8-byte value, a sign-extended 4-byte value, and
 * outside code a 4-byte offset from its own address.  For a kernel without
 * relocations, where such a value is a number like any other: a superset of the
 * references from data and from immediates.  0 or a negative errno.
 */
int kmeta_scan_abs_refs(struct kmeta_image *img, const struct kmeta_range *r, size_t nr,
			kmeta_scan_fn fn, void *ctx);

/*
 * tables/orc.c: the ORC table as parallel arrays, the ips (malloc'ed, in table order)
 * and the KMETA_ORC_SIZE-byte entries in the image; -ENOENT if there is none.
 * kmeta_orc_state(): of a sorted table, the entry that describes addr (the last with
 * ip <= addr, as the unwinder takes it), NULL if none.  kmeta_orc_state_near(): the
 * same for a caller whose addresses mostly follow each other; *past keeps the place
 * of the last answer (0 at first) and is tried first.
 */
#define KMETA_ORC_SIZE 6
int kmeta_orc_read(struct kmeta_image *img, uint64_t **ips, const unsigned char **entries,
		   size_t *nr);
const unsigned char *kmeta_orc_state(const uint64_t *ips, const unsigned char *entries,
				     size_t nr, uint64_t addr);
const unsigned char *kmeta_orc_state_near(const uint64_t *ips, const unsigned char *entries,
					  size_t nr, uint64_t addr, size_t *past);

/* sites.c: alternative and paravirt site ranges, sorted and merged */
int kmeta_patch_sites(struct kmeta_image *img, const struct kmeta_range **ranges, size_t *nr);
/* qsort() order of struct kmeta_range: by start, then end */
int kmeta_cmp_range(const void *a, const void *b);
/*
 * Code the alternatives run that belongs to no function: every replacement
 * ([replacement, + replacementlen)) and .altinstr_aux, as a malloc'ed array, unsorted.
 * 0 or a negative errno.
 */
int kmeta_alt_code_ranges(struct kmeta_image *img, struct kmeta_range **ranges, size_t *nr);
/* addr is in .altinstr_replacement or .altinstr_aux */
bool kmeta_is_alt_code(struct kmeta_image *img, uint64_t addr);
/* addr lies strictly inside a patch site (not at its start) */
bool kmeta_is_inside_patch_site(struct kmeta_image *img, uint64_t addr);

#endif
