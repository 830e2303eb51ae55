/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KBOLT_VERIFY_H
#define KBOLT_VERIFY_H

#include <stdbool.h>
#include <stdint.h>

struct verifier;

enum {
	VERIFY_DEBUG_LINES = 1, VERIFY_DEBUG_SCOPES = 2, VERIFY_DEBUG_FRAME = 4,
	VERIFY_DEBUG_LOCATIONS = 8,
};

struct verify_report {
	bool quiet;	/* print nothing when the output verifies; its failure as an error */
	const char *name;	/* what the messages call the new image, NULL: its path */
	/*
	 * Called when new verifies, before the verifier is freed: its vmap() and
	 * vmap_place() (below) then map every old address (heatmap.c).
	 */
	void (*verified)(struct verifier *v, void *arg);
	void *arg;
	/*
	 * Also prove the DWARF of moved instructions (dwarf.c): VERIFY_DEBUG_LINES their
	 * line rows, VERIFY_DEBUG_SCOPES their scopes (inline chains, lexical blocks),
	 * VERIFY_DEBUG_FRAME their call frame information (.debug_frame),
	 * VERIFY_DEBUG_LOCATIONS the location lists of their variables
	 */
	unsigned int debug_info;
};

/*
 * kbolt verify: prove that new is orig with blocks moved (verify.c).  0 if it is; 1
 * after reporting each problem (the first 20) as "NEW: error: kbolt: verify: ...".
 */
/* Old address -> new through the walks (identity outside rewritten functions) */
bool vmap(struct verifier *v, uint64_t addr, uint64_t *out);
/* The same for a byte inside a walked instruction (a relocated field) */
bool vmap_place(struct verifier *v, uint64_t addr, uint64_t *out);

int kbolt_verify(const char *orig, const char *new, const struct verify_report *rep);

/*
 * The same in two steps: what depends on orig alone (NULL after reporting an error),
 * then the proof against new, which frees the verifier.  kbolt optimize prepares
 * while it works.
 */
struct verifier *verify_prepare(const char *orig);
int verify_run(struct verifier *v, const char *new, const struct verify_report *rep);
void verifier_free(struct verifier *v);

#endif
