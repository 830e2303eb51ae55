// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt verify --debug-info: every unit of .debug_info whose bytes changed reads, in
 * the new image, as the same tree of DIEs: at each offset a DIE of the same tag, with
 * children where it had them, and no more or fewer.  The rewrite patches DIEs in
 * place and gives some another abbreviation (a pair that became a range list, whose
 * filler must take exactly the bytes the pair left), so one DIE read at a wrong size
 * would misread every DIE after it in its unit: DIEs the proof of each instruction's
 * scopes (dwarf.c) need not reach, and readers that walk every unit (binutils'
 * addr2line and readelf, crash, drgn) do.  Read with libdw, each image on its own.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "../../common/util.h"
#include "internal.h"

struct tree_side {
	int fd;
	Dwarf *dbg;
	const unsigned char *info;	/* .debug_info's bytes, in kmeta's mapping */
	uint64_t size;
};

static int tree_open(struct tree_side *s, struct kmeta_image *img, const char *path)
{
	struct kmeta_sec *sec = kmeta_find_sec_by_name(img, ".debug_info");

	s->info = sec ? sec->data : NULL;
	s->size = sec ? sec->size : 0;
	return verify_dwarf_open(path, &s->fd, &s->dbg);
}

static void tree_close(struct tree_side *s)
{
	if (s->dbg)
		dwarf_end(s->dbg);
	if (s->fd >= 0)
		close(s->fd);
}

/* The first DIE where a and b, at one depth, differ (by offset, tag, children), or 0 */
static Dwarf_Off first_difference(Dwarf_Die *a, Dwarf_Die *b)
{
	for (;;) {
		Dwarf_Die ca, cb;
		int ra, rb;

		if (dwarf_dieoffset(a) != dwarf_dieoffset(b) || dwarf_tag(a) != dwarf_tag(b) ||
		    dwarf_haschildren(a) != dwarf_haschildren(b))
			return dwarf_dieoffset(b);
		ra = dwarf_child(a, &ca);
		rb = dwarf_child(b, &cb);
		if (ra != rb)
			return dwarf_dieoffset(b);
		if (ra == 0) {
			Dwarf_Off d = first_difference(&ca, &cb);

			if (d)
				return d;
		}
		ra = dwarf_siblingof(a, a);
		rb = dwarf_siblingof(b, b);
		if (ra != rb)
			return dwarf_dieoffset(b);
		if (ra)
			return 0;	/* both ended (or both failed where they were) */
	}
}

/* Do units [off, next) of both images hold the same bytes? */
static bool same_bytes(const struct tree_side *a, const struct tree_side *b, Dwarf_Off off,
		       Dwarf_Off next)
{
	return a->info && b->info && next <= a->size && next <= b->size &&
	       !memcmp(a->info + off, b->info + off, next - off);
}

int verify_dwarf_tree(struct verifier *v)
{
	struct tree_side a = { .fd = -1 }, b = { .fd = -1 };
	Dwarf_Off off = 0, next, nb;
	size_t hsize, hb;
	int err = tree_open(&a, v->a, v->a->path);

	if (!err)
		err = tree_open(&b, v->b, v->b_file);
	while (!err && dwarf_nextcu(a.dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die da, db;
		Dwarf_Off d;

		if (dwarf_nextcu(b.dbg, off, &nb, &hb, NULL, NULL, NULL) || nb != next ||
		    hb != hsize) {
			verify_fail(v, 0, "debug info: the unit at 0x%" PRIx64 " of .debug_info "
				    "is not where it was, or not of its size", (uint64_t)off);
			break;
		}
		if (!same_bytes(&a, &b, off, next)) {
			if (!dwarf_offdie(a.dbg, off + hsize, &da) ||
			    !dwarf_offdie(b.dbg, off + hsize, &db))
				d = off + hsize;
			else
				d = first_difference(&da, &db);
			if (d)
				verify_fail(v, 0, "debug info: the DIE at 0x%" PRIx64 " of the unit "
					    "at 0x%" PRIx64 " of .debug_info does not read as the "
					    "old one (its offset, tag or children)", (uint64_t)d,
					    (uint64_t)off);
		}
		off = next;
	}
	tree_close(&a);
	tree_close(&b);
	return err;
}
