/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Portable profiles: a profile of one build, with its addresses replaced by places
 * that another build of the same or a nearby source can find again (function name and
 * source file, basic block, instruction), each block with hashes of its code
 * (func_hash.h).  portable.c writes and reads the format (Documentation/
 * profile-format.rst, "The portable profile"); portable_match.c finds its places in
 * another build and turns it back into an address profile of that build.
 */
#ifndef KBOLT_PORTABLE_H
#define KBOLT_PORTABLE_H

#include <stdint.h>
#include <stdio.h>

#include "../../common/json.h"
#include "../../kmeta/kmeta.h"
#include "profile.h"

struct portable_block {
	uint32_t off, nr_insns;
	uint64_t strict, loose;
};

struct portable_func {
	char *name;
	char *file;		/* the STT_FILE symbol before a local one; "" for a global */
	uint64_t hash;
	uint32_t size, nr_blocks;
	struct portable_block *blocks;
};

/* One end of a record: instruction insn of block block of function func, + delta bytes */
struct portable_place {
	uint32_t func, block, insn, delta;
};

struct portable_rec {
	struct portable_place from, to;
	uint64_t count;
	unsigned char kind;	/* enum prof_kind */
};

/* How a portable profile matched a build: what --stats and check-profile print */
struct portable_report {
	char release[128], build_id[128];	/* of the build the profile was made on */
	size_t funcs, exact, by_hash, clones, dropped;
	size_t blocks_exact, blocks_loose, blocks_dropped;	/* of the functions matched by hash */
	size_t records, records_matched;
	size_t records_disagree;	/* found, but no longer what the code there does */
	uint64_t weight, weight_matched;
};

struct portable {
	struct portable_func *funcs;
	size_t nr_funcs, cap_funcs;
	struct portable_rec *recs;
	size_t nr_recs, cap_recs;
	struct portable_report report;	/* once matched (prof.need_match false) */
};

extern const struct prof_format prof_format_portable;

/*
 * kbolt profile portable: p, a profile of img (profile_match()ed), written portable to
 * out.  0 or a negative errno, after reporting.
 */
int portable_write(struct kmeta_image *img, const struct prof *p, const char *out);
/*
 * A portable profile p matched onto img: p's records, at the places found in img,
 * become p's edges (addresses of img), and p->portable->report says how it went.
 * 0, or -EINVAL after reporting (no record matched).
 */
int portable_match(struct kmeta_image *img, struct prof *p);
/* The report, one line of text, and as a JSON object */
void portable_print_report(const struct portable_report *r, FILE *f);
void portable_report_json(const struct portable_report *r, struct json *j);

#endif
