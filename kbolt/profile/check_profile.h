/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KBOLT_CHECK_PROFILE_H
#define KBOLT_CHECK_PROFILE_H

#include "../../kmeta/kmeta.h"
#include "profile.h"

struct profile_check {
	size_t records;
	size_t by_kind[PK_NR];
	size_t agree;		/* the decoding confirms them */
	size_t patched;		/* from a site the kernel rewrites at boot */
	size_t outside;		/* an end outside the image's code */
	size_t disagree;
	uint64_t weight, disagree_weight;
	size_t sample_disagree;	/* of the by_kind[PK_SAMPLE] samples, in disagree too */
	uint64_t sample_weight;	/* of the samples, in weight too */
};

/*
 * Sites the kernel rewrites at boot, where what ran is not what the file holds: every
 * range, sorted (they may overlap), malloc'ed into *out.  0, or -EINVAL after reporting.
 */
int profile_patched_ranges(struct kmeta_image *img, struct kmeta_range **out, size_t *nr);
/* addr lies in one of the nr sorted ranges r */
bool profile_is_patched(const struct kmeta_range *r, size_t nr, uint64_t addr);

/* What the code says of a record */
enum edge_verdict {
	EDGE_AGREES,		/* the decoding confirms it */
	EDGE_DISAGREES,		/* it does not: *why says how */
	EDGE_PATCHED,		/* it leaves code the kernel rewrites at boot: not judged */
};

/*
 * The verdict on the edge e of img's code; *why, the reason, set for EDGE_DISAGREES
 * only (NULL otherwise)
 */
enum edge_verdict profile_edge_verdict(struct kmeta_image *img, const struct prof_edge *e,
				       const struct kmeta_range *patched, size_t nr_patched,
				       const char **why);
/* Check every edge of p against img; report() is called for each disagreement. */
int profile_check(struct kmeta_image *img, const struct prof *p, struct profile_check *res,
		  void (*report)(struct kmeta_image *img, const struct prof_edge *e,
				 const char *why, void *arg), void *arg);

#endif
