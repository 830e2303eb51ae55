/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Profiles: control-flow edges of a kernel with counts, read from one of several formats
 * behind one ops struct (as pahole's debug_fmt_ops): kbolt's own (prof_kbolt.c),
 * BOLT's pre-aggregated text (prof_bolt.c), fdata (prof_fdata.c) and YAML (prof_yaml.c),
 * and perf script text (prof_perf.c).
 */
#ifndef KBOLT_PROFILE_H
#define KBOLT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/*
 * The QEMU plugin writes the kinds up to PK_OTHER, in this order.  PK_BRANCH is a taken
 * transfer whose kind the format does not say (BOLT's B records): check_profile and
 * profile_match accept any control transfer for it.  PK_SAMPLE is no transfer: a
 * sampled instruction address (kbolt's S records, perf script's ip), kept as an edge
 * with from == to so that everything that sorts, merges, slides and counts edges
 * handles samples unchanged; the consumers that follow control flow skip it
 * (prof_is_transfer()) and the optimizer infers block counts from samples (infer.c).
 */
enum prof_kind {
	PK_FALLTHROUGH, PK_JCC, PK_JMP, PK_CALL, PK_RET, PK_IJMP, PK_ICALL, PK_INT, PK_OTHER,
	PK_BRANCH, PK_SAMPLE,
	PK_NR
};

/*
 * A fall-through (PK_FALLTHROUGH) is straight-line execution from the instruction at
 * from to the instruction at to, no branch taken in between: the plugin's go to the
 * next instruction, BOLT's F ranges may span several.
 */
struct prof_edge {
	uint64_t from;		/* address of the instruction the transfer leaves */
	uint64_t to;		/* address of the instruction it reaches */
	uint64_t count;
	unsigned char kind;	/* enum prof_kind */
};

/*
 * A record whose ends are named as a function and an offset, as BOLT's fdata does
 * (prof_fdata.c): kept so, parallel to edges[], until profile_match() resolves the
 * names against the image (profile_symbols.c) and fills in the addresses and the kind.
 */
struct prof_symloc {
	uint32_t from_name, to_name;	/* index in prof.names */
	uint64_t from_off, to_off;
	size_t lineno;			/* for messages */
};

struct prof {
	char *path;
	const struct prof_format *fmt;
	char build_id[128];	/* hex, "" if the format has none */
	char release[128];
	char recorder[64];
	char event[64];		/* the perf event sampled ("cpu-clock", ...), "" if none said */
	/*
	 * Where the kernel's _text ran when recorded (perf: the mmap event; kbolt's
	 * format: "text"), 0 if the addresses are link addresses: profile_match() takes
	 * the KASLR slide out
	 */
	uint64_t text_runtime;
	/* branches with an end outside the kernel and samples outside it, left out */
	uint64_t nr_dropped;
	/*
	 * A portable profile (portable.h): its records, by function and block, until
	 * profile_match() finds them in a build and makes them the edges (need_match
	 * until then)
	 */
	struct portable *portable;
	bool need_match;
	/*
	 * BOLT's YAML (bolt_yaml.h): its records, by function and BOLT's block ids, until
	 * profile_match() finds the blocks in the vmlinux and makes them the edges
	 */
	struct bolt_yaml *yaml;
	struct prof_edge *edges;
	size_t nr_edges, cap;
	/* a symbolic profile: symlocs parallel to edges, the names they use */
	struct prof_symloc *symlocs;
	size_t symlocs_cap;
	char **names;
	size_t nr_names, names_cap;
	uint32_t *name_hash;		/* open addressing: index + 1 into names, 0 empty */
	size_t name_hash_size;
};

struct prof_format {
	const char *name;
	/* does the file start like this format? */
	bool (*probe)(const char *first_line);
	/* read the whole stream; 0 or a negative errno after reporting "path:line: ..." */
	int (*read)(struct prof *p, FILE *f);
	/* free what read() hung on p besides the edges and names (NULL: nothing) */
	void (*release)(struct prof *p);
};

extern const struct prof_format prof_format_kbolt, prof_format_bolt, prof_format_perf,
	prof_format_fdata, prof_format_portable, prof_format_yaml;

const char *prof_kind_name(unsigned int kind);
/* Is the record a transfer of control (not a sample)? */
static inline bool prof_is_transfer(const struct prof_edge *e)
{
	return e->kind != PK_SAMPLE;
}
int prof_kind_from_name(const char *name);
void prof_add_edge(struct prof *p, uint64_t from, uint64_t to, uint64_t count, unsigned int kind);
/*
 * The next line of f into line (size bytes), without its newline, counting *lineno:
 * 1, 0 at the end of the file, or -EINVAL after reporting a truncated or overlong line.
 */
int prof_read_line(const struct prof *p, FILE *f, char *line, size_t size, size_t *lineno);
/*
 * Split line in place at runs of the characters of seps: the number of words, of
 * which the first max are put in field[]
 */
int prof_split_fields(char *line, const char *seps, char **field, int max);
/*
 * A number of the formats: digits of base (10 or 16) only, no sign, no blank, and at
 * most max.  0, or -EINVAL.
 */
int prof_parse_number(const char *s, unsigned int base, uint64_t max, uint64_t *v);
/* s, or "-" for the empty string: how the formats write a header value they lack */
static inline const char *prof_or_dash(const char *s)
{
	return s[0] ? s : "-";
}
/*
 * A record between two functions' offsets, its addresses and kind left for
 * profile_match() to find (kind PK_SAMPLE: a sample, from_* == to_*)
 */
void prof_add_symbolic(struct prof *p, const char *from, uint64_t from_off, const char *to,
		       uint64_t to_off, uint64_t count, unsigned int kind, size_t lineno);
/* A profile whose records still name functions: the image is needed to use it */
static inline bool prof_is_symbolic(const struct prof *p)
{
	return p->symlocs != NULL || p->yaml != NULL;
}
/*
 * 0 if p's records are addresses, else -EINVAL after saying that p needs the image
 * (records that name functions) or a build to be matched onto (a portable profile)
 */
int prof_need_addresses(const struct prof *p);
/* Read path in whichever known format it is; NULL after reporting. */
struct prof *prof_read(const char *path);
void prof_free(struct prof *p);

/* prof_kbolt.c: p in kbolt's format, its records in the order they are */
void prof_write_kbolt(const struct prof *p, FILE *f);

/*
 * merge.c: the profiles in[0..nr) of one kernel, each record's count times the
 * profile's weight, summed per (from, to, kind), sorted by them: integers, so merging
 * is exactly associative and commutative.  NULL after reporting (other kernels, a
 * count that overflows 64 bits).
 */
struct prof *prof_merge(struct prof *const *in, const uint64_t *weights, size_t nr);
/* Equal records of p summed into one, sorted: 0, or -EOVERFLOW after reporting */
int prof_aggregate(struct prof *p);

/* prof_bolt.c: can BOLT read p's counts (int64)?  0, or -EOVERFLOW after reporting */
int prof_check_bolt(const struct prof *p);
/* prof_bolt.c: p as BOLT pre-aggregated text; the number of lines written */
size_t prof_write_bolt(const struct prof *p, FILE *f);

#endif
