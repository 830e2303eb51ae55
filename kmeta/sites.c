// SPDX-License-Identifier: GPL-2.0
/*
 * Patch-site ranges: [site, site + len) of every entry of the tables whose units the
 * kernel overwrites at boot (TR_PATCHED_UNIT: alternatives, paravirt), and the units a
 * table's unit() hook finds around its sites (kcfi_traps: the kCFI check and its call,
 * which the trap handler decodes and FineIBT rewrites as one piece).  Inside one,
 * other tables describe the replacement's instructions (objtool emits ORC for the
 * replacement at the original site's offsets), so boundaries there are not the
 * original code's.  kbolt moves each range as one unit.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "internal.h"
#include "table.h"

extern const struct table_desc alternatives_table;

int kmeta_cmp_range(const void *a, const void *b)
{
	const struct kmeta_range *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

static int add_site_ranges(struct kmeta_table *t, unsigned int fixed_len,
			   struct kmeta_range **arr, size_t *nr, size_t *cap)
{
	struct kmeta_entry e;

	for (size_t i = 0; t->present && i < t->nr_slots; i++) {
		struct kmeta_range r;
		uint64_t len;

		if (kmeta_table_read_entry(t, i, &e))
			return -EINVAL;
		if (e.filler)
			continue;
		if (t->desc->unit && !fixed_len) {
			if (!t->desc->unit(t, &e, &r))
				continue;	/* no unit: kbolt leaves its function alone */
		} else {
			len = fixed_len ? fixed_len : kmeta_table_rewrite_value(t, &e);
			if (!len)
				continue;
			r = (struct kmeta_range){ e.site, e.site + len };
		}
		GROW(*arr, *cap, *nr + 1);
		(*arr)[(*nr)++] = r;
	}
	return 0;
}

int kmeta_table_site_ranges(struct kmeta_image *img, unsigned int flag, unsigned int fixed_len,
			    struct kmeta_range **arr, size_t *nr, size_t *cap)
{
	for (unsigned int d = 0; d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *t;

		if (!(kmeta_table_descs[d]->rewrite.flags & flag))
			continue;
		t = kmeta_table_get(img, kmeta_table_descs[d]);
		if (!t || add_site_ranges(t, fixed_len, arr, nr, cap))
			return -EINVAL;
	}
	return 0;
}

/* Sorted, overlapping sites merged (nested ALTERNATIVE()s share a start) */
int kmeta_patch_sites(struct kmeta_image *img, const struct kmeta_range **ranges, size_t *nr)
{
	size_t cap = 0, out = 0;

	if (!img->site_ranges_ready) {
		if (kmeta_table_site_ranges(img, TR_PATCHED_UNIT, 0, &img->site_ranges,
				      &img->nr_site_ranges, &cap))
			return -EINVAL;
		sort_array(img->site_ranges, img->nr_site_ranges, sizeof(*img->site_ranges),
			   kmeta_cmp_range);
		for (size_t i = 0; i < img->nr_site_ranges; i++) {
			struct kmeta_range *r = &img->site_ranges[i];

			if (out && r->start < img->site_ranges[out - 1].end) {
				if (r->end > img->site_ranges[out - 1].end)
					img->site_ranges[out - 1].end = r->end;
				continue;
			}
			img->site_ranges[out++] = *r;
		}
		img->nr_site_ranges = out;
		img->site_ranges_ready = true;
	}
	*ranges = img->site_ranges;
	*nr = img->nr_site_ranges;
	return 0;
}

bool kmeta_is_inside_patch_site(struct kmeta_image *img, uint64_t addr)
{
	const struct kmeta_range *r;
	size_t nr, i;

	if (kmeta_patch_sites(img, &r, &nr))
		return false;
	/* the first range starting at or after addr */
	i = lower_bound_u64(r, nr, sizeof(*r), offsetof(struct kmeta_range, start), addr);
	return i > 0 && addr > r[i - 1].start && addr < r[i - 1].end;
}

int kmeta_alt_code_ranges(struct kmeta_image *img, struct kmeta_range **ranges, size_t *nr)
{
	struct kmeta_table *t = kmeta_table_get(img, &alternatives_table);
	struct kmeta_sec *aux = kmeta_find_sec_by_name(img, ".altinstr_aux");
	struct kmeta_entry e;
	size_t cap = 0;
	int repl, len;

	*ranges = NULL;
	*nr = 0;
	if (!t)
		return -EINVAL;
	repl = t->present ? table_field_idx(t, "replacement") : -1;
	len = t->present ? table_field_idx(t, "replacementlen") : -1;
	for (size_t k = 0; repl >= 0 && len >= 0 && k < t->nr_slots; k++) {
		if (kmeta_table_read_entry(t, k, &e)) {
			free(*ranges);
			*ranges = NULL;
			*nr = 0;
			return -EINVAL;
		}
		GROW(*ranges, cap, *nr + 1);
		(*ranges)[(*nr)++] = (struct kmeta_range){ e.val[repl], e.val[repl] + e.val[len] };
	}
	if (aux && aux->data) {
		GROW(*ranges, cap, *nr + 1);
		(*ranges)[(*nr)++] = (struct kmeta_range){ aux->addr, aux->addr + aux->size };
	}
	return 0;
}

bool kmeta_is_alt_code(struct kmeta_image *img, uint64_t addr)
{
	struct kmeta_sec *sec = kmeta_find_sec_containing(img, addr);

	return sec && (!strcmp(sec->name, ".altinstr_replacement") ||
		       !strcmp(sec->name, ".altinstr_aux"));
}
