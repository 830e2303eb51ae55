// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the translation table's bytes (kbolt/lib/bat_format.c): a table with every
 * kind of entry (placed, a jcc with a target before and after its function's start, an
 * added jmp, removed instructions) reads back as written; every cut of its bytes, a
 * byte too many, another version, an offset past its function are refused.  TAP.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../../kbolt/lib/bat.h"
#include "tap.h"

static struct bat_entry f0[] = {
	{ .new_off = 0, .old_off = 0x10, .old_len = 3 },
	{ .new_off = 3, .old_off = 0x13, .old_len = 2, .flags = BAT_JCC,
	  .target = 0xffffffff81000000ULL + 0x40 },
	{ .new_off = 5, .old_off = 0x0, .old_len = 0, .flags = BAT_ADDED },
	{ .new_off = 7, .old_off = 0x20, .old_len = 6, .flags = BAT_JCC,
	  .target = 0xffffffff80fff000ULL },
	{ .new_off = UINT32_MAX, .old_off = 0x15, .old_len = 2, .flags = BAT_REMOVED },
	{ .new_off = UINT32_MAX, .old_off = 0x17, .old_len = 1, .flags = BAT_REMOVED },
};
static struct bat_entry f1[] = {
	{ .new_off = 0, .old_off = 0, .old_len = 1 },
	{ .new_off = 200, .old_off = 300, .old_len = 15 },
};
static struct bat_func funcs[] = {
	{ 0xffffffff81000000ULL, 0x80, 6, f0 },
	{ 0xffffffff81000100ULL, 400, 2, f1 },
};

static bool same_table(const struct bat *a, const struct bat *b)
{
	if (a->nr != b->nr || strcmp(a->build_id, b->build_id))
		return false;
	for (size_t i = 0; i < a->nr; i++) {
		const struct bat_func *x = &a->funcs[i], *y = &b->funcs[i];

		if (x->addr != y->addr || x->size != y->size || x->nr != y->nr)
			return false;
		for (uint32_t k = 0; k < x->nr; k++) {
			const struct bat_entry *e = &x->entries[k], *g = &y->entries[k];

			if (e->new_off != g->new_off || e->old_off != g->old_off ||
			    e->old_len != g->old_len || e->flags != g->flags ||
			    ((e->flags & BAT_JCC) && e->target != g->target)) {
				printf("# function %zu entry %u differs\n", i, k);
				return false;
			}
		}
	}
	return true;
}

int main(void)
{
	struct bat t = { .build_id = "01d2640d3a13145ee314eb05b155f141b7b7058b", .funcs = funcs,
			 .nr = 2 }, back;
	unsigned char *bytes, *more;
	size_t size, refused = 0;

	bat_encode(&t, &bytes, &size);
	ok(!bat_decode(bytes, size, &back) && same_table(&t, &back),
	   "a table of every kind of entry reads back as written (%zu bytes)", size);
	bat_free(&back);
	for (size_t n = 0; n < size; n++)
		refused += bat_decode(bytes, n, &back) != 0;
	ok(refused == size, "every cut of it is refused (%zu of %zu)", refused, size);
	more = malloc(size + 1);
	memcpy(more, bytes, size);
	more[size] = 0;
	ok(bat_decode(more, size + 1, &back) != 0, "a byte too many is refused");
	more[4] = 2;
	ok(bat_decode(more, size, &back) != 0, "another version is refused");
	f1[1].old_off = 400;
	free(bytes);
	bat_encode(&t, &bytes, &size);
	ok(bat_decode(bytes, size, &back) != 0, "an old offset past its function is refused");
	free(bytes);
	free(more);
	return tap_done();
}
