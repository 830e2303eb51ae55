// SPDX-License-Identifier: GPL-2.0
/*
 * Without relocations (6.2+ builds strip the .rela sections), an address in data or in
 * an immediate is a number like any other: nothing says it is one, so nothing could
 * have rewritten it.  Every loaded byte of the original outside the tables (which
 * verify_tables() checks) is read as a possible address inside a rewritten function
 * (kmeta_scan_abs_refs(), a superset of the real ones); each must still lead to the
 * same instruction in the output, which holds only where the code did not move.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "internal.h"

static void check_value(void *ctx, uint64_t at, uint64_t target)
{
	struct verifier *v = ctx;
	uint64_t n;

	if ((vmap(v, target, &n) && n == target) || (vmap_place(v, target, &n) && n == target))
		return;
	verify_fail(v, at, "holds 0x%" PRIx64 ", an address inside rewritten code that moved, "
		    "and without relocations it cannot be rewritten", target);
}

void verify_values(struct verifier *v)
{
	int err;

	if (kmeta_find_sec_by_name(v->a, ".rela.text") || !v->nr_f)
		return;		/* relocations say where the addresses are: verify_relocs() */
	err = kmeta_scan_abs_refs(v->a, v->spans, v->nr_f, check_value, v);
	if (err)
		verify_fail(v, 0, "cannot scan the original for addresses: %s", strerror(-err));
}
