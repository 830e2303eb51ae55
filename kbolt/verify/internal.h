/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the files of kbolt verify share: the verifier's state (two images, the
 * rewritten functions with their old -> new maps, the walk's work lists) and the
 * helpers of its model (model.c) that the entry point (verify.c), the walk (walk.c)
 * and the metadata checks (meta.c) use.
 */
#ifndef KBOLT_VERIFY_INTERNAL_H
#define KBOLT_VERIFY_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "../../kmeta/kmeta.h"
#include "verify.h"

#define UNMAPPED UINT32_MAX
#define MAX_REPORTS 20
#define ORC_SIZE KMETA_ORC_SIZE
#define MAX_FOLLOW 64		/* plain jmps followed in a row, at most */

struct vfunc {
	struct kmeta_sym *sym;		/* in orig */
	uint32_t *map;			/* old offset -> new offset */
	unsigned char *olen;		/* old offset -> length of the insn walked there */
	unsigned char *cover;		/* new offset: 1 insn start, 2 inside one */
};

struct pair {
	uint64_t old, new;
};

/* Sites of one kind in one image (model.c) */
enum site_kind { SITES_JL, SITES_ANY, SITES_WARN, SITES_NR };

/* Sorted site addresses of each kind in one image */
struct site_sets {
	struct site_set {
		uint64_t *v;
		size_t nr, cap;
	} kind[SITES_NR];
};

/* One thread's walk (walk.c) */
struct walker {
	struct verifier *v;
	struct pair *work;		/* work list */
	size_t nr_work, work_cap;
	struct pair *ext;		/* targets outside the walked function, checked last */
	size_t nr_ext, ext_cap;
	size_t walked;			/* instructions, for the summary */
};

struct verifier {
	struct kmeta_image *a, *b;	/* orig, new */
	const char *b_file;		/* new's file (b->path may be the name it will have) */
	struct vfunc *f;
	struct kmeta_range *spans;	/* parallel to f: what lookups read */
	size_t nr_f;
	struct walker walk;		/* the walks of one thread, and all their results */
	_Atomic size_t errors;		/* the walk reports from several threads */
	const struct kmeta_range *sites_a, *sites_b;
	size_t nr_sites_a, nr_sites_b;
	/* ORC of both, ips sorted */
	uint64_t *orc_a, *orc_b;
	const unsigned char *orc_ea, *orc_eb;
	size_t nr_orc;
	bool orc_a_missing;
	struct site_sets sets_a, sets_b;
	unsigned int *sec_rewrite;	/* kmeta_table_flags_by_sec() of the old image */
};

/* model.c */
void verify_fail(struct verifier *v, uint64_t addr, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The rewritten function containing old address addr, NULL if none */
struct vfunc *vfunc_containing(struct verifier *v, uint64_t addr);
bool same_state(const unsigned char *x, const unsigned char *y);
const unsigned char *orc_state(struct verifier *v, bool new, uint64_t addr);
/* The sites of every table of img, by kind; free_sets() frees them */
void build_sets(struct site_sets *ss, struct kmeta_image *img);
void free_sets(struct site_sets *ss);
bool in_set(const struct site_sets *ss, enum site_kind kind, uint64_t addr);
/* The site sets of the old image, or of the new one */
const struct site_sets *sites_of(const struct verifier *v, bool new);
/* Does sec, of the old image, hold a table rewritten by a pass of its own (ORC)? */
bool is_own_pass_sec(const struct verifier *v, const struct kmeta_sec *sec);
/* The raw Elf64_Rela entries of a relocation section, in the file's image */
const unsigned char *rela_bytes(struct kmeta_image *img, struct kmeta_sec *sec, uint64_t *size);
/*
 * For each relocation section of an allocated section: fn(v, the new section, the
 * section it relocates, old entries, new entries, number of old entries, arg).
 */
typedef void (*rela_pair_fn)(struct verifier *v, struct kmeta_sec *rsb, struct kmeta_sec *target,
			     const unsigned char *ra, const unsigned char *rb, uint64_t nr,
			     void *arg);
void for_each_rela_pair(struct verifier *v, rela_pair_fn fn, void *arg);
/* Drop the pages of img's code until read again (after a pass over all of it) */
void release_code(struct kmeta_image *img);
/* Index in img->funcs of the function containing addr, -1 if none */
long func_index(struct kmeta_image *img, uint64_t addr);
/* qsort() order of table entries: by site, then by every value */
int cmp_entry_site(const void *x, const void *y);
/* A sorted table's slots in site order: (site, slot) pairs, 16 bytes a slot */
struct slot_key {
	uint64_t site, slot;
};

/*
 * walk.c: the walk, run first; the others need its map.  equiv(): are old and
 * new the same place, modulo the jmps a layout adds?  Reads the map only, so the
 * checks after the walk may ask it from several threads.
 */
bool equiv(struct verifier *v, uint64_t old, uint64_t new);
void verify_walk(struct verifier *v);
void verify_coverage(struct verifier *v);
void verify_branches(struct verifier *v);

/* meta.c */
void verify_orc(struct verifier *v);
void verify_tables(struct verifier *v);
/*
 * The relocations, in runs that threads may check at once: verify_relocs_plan() lists
 * them, verify_relocs_chunk() checks run k of verify_relocs_nr()
 */
struct reloc_checks;
struct reloc_checks *verify_relocs_plan(struct verifier *v);
size_t verify_relocs_nr(const struct reloc_checks *rc);
void verify_relocs_chunk(struct reloc_checks *rc, size_t k);
void verify_relocs_free(struct reloc_checks *rc);

/*
 * flow.c: the old instruction p[0..len) certainly never resumes at the next one
 * (warn: the bug table calls it a WARN); the verifier's own rule, not kmeta's kinds
 */
bool verify_insn_never_resumes(const unsigned char *p, unsigned int len, bool warn);

/*
 * dwarf.c: the line rows and (what: VERIFY_DEBUG_*) scopes at each walked
 * instruction's new address are the old ones (needs the walk's map); the functions and
 * instructions compared.  0, or a
 * negative errno after reporting that an image's DWARF cannot be read.
 */
int verify_dwarf(struct verifier *v, unsigned int what, size_t *nr_funcs, size_t *nr_insns);
/* dwarf.c: a libdw handle of the file at path (*fd its descriptor); 0 or -errno, said */
typedef struct Dwarf Dwarf;
int verify_dwarf_open(const char *path, int *fd, Dwarf **dbg);
/*
 * dwarf_tree.c: every unit of .debug_info whose bytes changed reads as the same tree of
 * DIEs; an error if the DWARF could not be read (said)
 */
int verify_dwarf_tree(struct verifier *v);

/*
 * in_place.c: old code the walk did not map that stayed where it was, in a function
 * that kept its layout (unreached alignment padding, the plain jmps the walk followed),
 * mapped to itself; after the walk, before what reads the map
 */
void verify_in_place(struct verifier *v);

/* values.c: without relocations, no address in data may point into moved code */
void verify_values(struct verifier *v);

#endif
