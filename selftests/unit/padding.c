// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kmeta_claim_padding() (kmeta/padding.c) on Debian's 6.1 vmlinux
 * ($VMLINUX_61; skipped without it): tens of thousands of functions get the padding
 * after them; capstone decodes every claimed gap as nops and int3s only, as the byte
 * recognizer did; every gap ends at the next symbol; no gap follows a function that a
 * symbol follows at once; a known gap (__get_user_nocheck_8's, bounded by the
 * bad_get_user label) has its exact size; claiming "like" a claimed image gives the
 * same sizes, and is refused for another kernel's image.  TAP output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../kmeta/kmeta.h"
#include "tap.h"

/* Does capstone decode [start, end) as nops and int3s, instruction by instruction? */
static bool decodes_as_padding(struct kmeta_image *img, uint64_t start, uint64_t end)
{
	struct kmeta_insn *in = NULL;
	uint64_t bad = 0, at = start;
	size_t nr = 0;
	bool ok;

	ok = !kmeta_insn_decode_range(img, start, end, &in, &nr, &bad) && !bad;
	for (size_t k = 0; ok && k < nr; k++) {
		const unsigned char *p = kmeta_bytes_at(img, in[k].addr, 1);

		ok = in[k].addr == at && ((in[k].flags & KIF_NOP) || (p && *p == 0xcc));
		at += in[k].len;
	}
	free(in);
	return ok && at == end;
}

/* Is the first symbol at or after the end of f's ELF size at f->addr + f->size? */
static bool ends_at_next_symbol(struct kmeta_image *img, const struct kmeta_sym *f)
{
	uint64_t end = f->addr + f->size - f->padding;

	for (uint64_t a = end; a < f->addr + f->size; a++)
		if (kmeta_find_sym_at(img, a))
			return false;
	return kmeta_find_sym_at(img, f->addr + f->size) ||
	       !kmeta_find_func_containing(img, f->addr + f->size);
}

static void test_claimed_gaps(struct kmeta_image *img, size_t nr)
{
	size_t bad_decode = 0, bad_end = 0, claimed = 0;

	for (size_t i = 0; i < img->nr_funcs; i++) {
		const struct kmeta_sym *f = img->funcs[i];

		if (!f->padding)
			continue;
		claimed++;
		bad_decode += !decodes_as_padding(img, f->addr + f->size - f->padding,
						  f->addr + f->size);
		bad_end += !ends_at_next_symbol(img, f);
	}
	ok(nr > 30000 && claimed >= nr, "6.1: %zu functions get the padding after them", nr);
	ok(!bad_decode, "capstone decodes every claimed gap as nops and int3s (%zu do not)",
	   bad_decode);
	ok(!bad_end, "every claimed gap ends at the next symbol (%zu do not)", bad_end);
}

static void test_known(struct kmeta_image *img)
{
	struct kmeta_sym *g = kmeta_find_sym_by_name(img, "__get_user_nocheck_8");
	struct kmeta_sym *bad = kmeta_find_sym_by_name(img, "bad_get_user");
	struct kmeta_sym *f = kmeta_find_sym_by_name(img, "do_set_pte");

	ok(g && bad && g->addr + g->size == bad->addr && g->padding == bad->addr - g->addr - 19,
	   "__get_user_nocheck_8 (19 bytes) claims up to the bad_get_user label (%u bytes)",
	   g ? g->padding : 0);
	ok(f && f->padding == 11 && f->size == 480,
	   "do_set_pte (469 bytes) claims the 11 bytes before finish_fault");
}

static void test_like(const char *path, struct kmeta_image *img)
{
	struct kmeta_image *again = kmeta_open(path);
	const char *other = getenv("VMLINUX_612");
	struct kmeta_image *k612 = other && *other ? kmeta_open(other) : NULL;
	bool same = again && !kmeta_claim_padding_like(again, img);

	for (size_t i = 0; same && i < img->nr_funcs; i++)
		same = again->funcs[i]->size == img->funcs[i]->size &&
		       again->funcs[i]->padding == img->funcs[i]->padding;
	ok(same, "claiming like the claimed image gives every function the same size");
	ok(again && kmeta_claim_padding_like(again, img) == -EINVAL,
	   "... and claiming twice is refused");
	if (k612)
		ok(kmeta_claim_padding_like(k612, img) == -EINVAL,
		   "claiming like another kernel's image is refused");
	else
		skip("claiming like another kernel's image is refused", "no $VMLINUX_612");
	kmeta_close(again);
	kmeta_close(k612);
}

int main(void)
{
	const char *path = getenv("VMLINUX_61");
	struct kmeta_image *img;
	size_t nr;

	if (!path || !*path) {
		skip("padding claimed on Debian's 6.1", "no $VMLINUX_61");
		return tap_done();
	}
	img = kmeta_open(path);
	ok(img != NULL, "6.1 opened");
	if (!img)
		return tap_done();
	nr = kmeta_claim_padding(img);
	test_claimed_gaps(img, nr);
	test_known(img);
	test_like(path, img);
	kmeta_close(img);
	return tap_done();
}
