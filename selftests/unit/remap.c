// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of kmeta's kmeta_table_remap() (kmeta/remap.c).  On the stages fixture
 * (selftests/fixtures/stages.S), through kbolt's address map of a planned layout
 * (emit_map_addr()): every op's old address maps to its new one, the middle of an op to
 * nothing; the exception table's sites and fixups follow their code and the table is
 * sorted again (the permutation given), the jump label's target and the bug table's
 * sites follow theirs in place, data fields and flags stay; a map that fails stops the
 * remap; ORC is not remapped here.  On the tables fixture (selftests/fixtures/tables.S,
 * kmeta's), with a map that swaps func_a and func_b: each table's code fields, pc-
 * relative and absolute, re-encoded, the sorted ones (ex_table, mcount_loc) sorted
 * again, filler slots left alone; the identity changes nothing.  TAP output.
 */
#include "../../kbolt/pass/cfg.h"
#include "../../kbolt/pass/emit.h"
#include "../../kmeta/table.h"
#include "fixture.h"
#include "tap.h"

static bool map_cb(void *ctx, uint64_t addr, uint64_t *out)
{
	return emit_map_addr(ctx, addr, out);
}

static bool map_none(void *ctx, uint64_t addr, uint64_t *out)
{
	*out = addr;
	return false;
}

static struct kmeta_table *get_table(struct kmeta_image *img, const char *name)
{
	const struct table_desc *d = kmeta_table_find_desc(name);
	struct kmeta_table *t = d ? kmeta_table_get(img, d) : NULL;

	if (!t || !t->present) {
		printf("# no %s table\n", name);
		return NULL;
	}
	return t;
}

/* Entry k of t has that site and value of field i (its code field) */
static bool entry_is(struct kmeta_table *t, size_t k, uint64_t site, unsigned int i, uint64_t val)
{
	struct kmeta_entry e;

	if (kmeta_table_read_entry(t, k, &e))
		return false;
	if (e.site == site && e.val[i] == val)
		return true;
	printf("# %s[%zu]: site 0x%llx, field %u 0x%llx; want 0x%llx, 0x%llx\n", t->desc->name, k,
	       (unsigned long long)e.site, i, (unsigned long long)e.val[i],
	       (unsigned long long)site, (unsigned long long)val);
	return false;
}

/* Remap t through map: 0 or the error; *perm freed, 1 if it was {1, 0} */
static int remap(struct kmeta_table *t, kmeta_map_fn map, void *ctx, size_t *changed,
		 int *swapped)
{
	size_t *perm = NULL;
	int err = kmeta_table_remap(t, map, ctx, &perm, changed);

	*swapped = perm ? perm[0] == 1 && perm[1] == 0 : 0;
	if (perm && !*swapped)
		*swapped = -1;	/* a permutation, not that one */
	free(perm);
	return err;
}

/* cfg_meta laid out 0 1 7 8 5 6 2 3 4 (emit.c's test gives the new offsets) */
static void test_kbolt_map(void)
{
	static const uint32_t order[] = { 0, 1, 7, 8, 5, 6, 2, 3, 4 };
	struct fixture fx;
	struct kmeta_table *ex, *jl, *bug, *orc;
	struct kmeta_entry before[2], after;
	struct func *f;
	size_t changed;
	bool mapped = true;
	uint64_t a, to;
	int swapped, err;

	if (fixture_open(&fx, "stages", LAYOUT_RANDOM, 1) || !(f = fixture_func(&fx, "cfg_meta"))) {
		ok(0, "the stages fixture assembled and modelled");
		fixture_close(&fx);
		return;
	}
	a = f->sym->addr;
	set_order(f, order, 9);
	f->moved = !emit_plan(&fx.opt, f);
	note_moved_code(&fx.opt);
	for (uint32_t i = 0; i < f->nr_ops; i++)
		if (!f->bbs[cfg_find_bb_of_op(f, i)].drop)
			mapped &= emit_map_addr(&fx.opt, a + f->ops[i].off, &to) &&
				  to == a + f->ops[i].new_off;
	ok(f->moved && mapped, "cfg_meta 0 1 7 8 5 6 2 3 4: each op's old address maps to its new");
	ok(!emit_map_addr(&fx.opt, a + 0x11, &to), "cfg_meta: the middle of an op maps to nothing");
	ok(emit_map_addr(&fx.opt, a - 1, &to) && to == a - 1,
	   "cfg_meta: what is outside moved code maps to itself");

	ex = get_table(fx.opt.img, "ex_table");
	jl = get_table(fx.opt.img, "jump_table");
	bug = get_table(fx.opt.img, "bug_table");
	orc = get_table(fx.opt.img, "orc");
	if (!ex || !jl || !bug || !orc || kmeta_table_read_entry(ex, 0, &before[0]) ||
	    kmeta_table_read_entry(jl, 0, &before[1])) {
		ok(0, "stages: the tables read");
		fixture_close(&fx);
		return;
	}
	err = remap(ex, map_cb, &fx.opt, &changed, &swapped);
	ok(!err && changed == 4 && swapped == 1,
	   "ex_table: 4 fields rewritten, its 2 entries swapped (%d, %zu, %d)", err, changed,
	   swapped);
	ok(entry_is(ex, 0, a + 0x10, 1, a + 0x12) && entry_is(ex, 1, a + 0x27, 1, a + 0xb),
	   "ex_table: sorted by new site: +0x10 (fixup +0x12, glued), +0x27 (fixup +0xb)");
	ok(!kmeta_table_read_entry(ex, 1, &after) && after.val[2] == before[0].val[2] &&
	   after.val[2] == 3,
	   "ex_table: the moved entry keeps its data (EX_TYPE_UACCESS)");
	err = remap(jl, map_cb, &fx.opt, &changed, &swapped);
	ok(!err && changed == 1 && !swapped && entry_is(jl, 0, a + 0x7, 1, a + 0x19),
	   "jump_table: the site stays at +0x7, the target follows bb5 to +0x19 (%d, %zu)", err,
	   changed);
	ok(!kmeta_table_read_entry(jl, 0, &after) && after.val[2] == before[1].val[2] &&
	   after.flags[2] == 1,
	   "jump_table: the key and its polarity bit are as they were");
	err = remap(bug, map_cb, &fx.opt, &changed, &swapped);
	ok(!err && changed == 2 && !swapped && entry_is(bug, 0, a + 0x25, 3, 1) &&
	   entry_is(bug, 1, a + 0x1e, 3, 0),
	   "bug_table: the WARN to +0x25, the BUG to +0x1e, in their slots, flags kept (%d, %zu)",
	   err, changed);
	err = remap(orc, map_cb, &fx.opt, &changed, &swapped);
	ok(err == -EINVAL, "orc: not remapped by kmeta_table_remap (%d)", err);
	err = remap(ex, map_none, NULL, &changed, &swapped);
	ok(err == -EINVAL && !changed, "ex_table: a map that fails stops the remap (%d)", err);
	fixture_close(&fx);
}

/* tables.S laid out func_b first, then func_a */
struct swap {
	uint64_t a, a_size, b, b_size;
};

static bool map_swap(void *ctx, uint64_t addr, uint64_t *out)
{
	const struct swap *s = ctx;

	*out = addr;
	if (addr >= s->a && addr < s->a + s->a_size)
		*out = addr + s->b_size;
	else if (addr >= s->b && addr < s->b + s->b_size)
		*out = addr - s->b + s->a;
	return true;
}

static bool map_same(void *ctx, uint64_t addr, uint64_t *out)
{
	*out = addr;
	return true;
}

static void test_swap(void)
{
	static const char *const names[] = {
		"alternatives", "smp_locks", "return_sites", "jump_table", "mcount_loc", "ex_table",
		"bug_table",
	};
	struct fixture fx;
	struct kmeta_image *img = NULL;
	struct kmeta_sym *fa, *fb;
	struct kmeta_table *t;
	struct kmeta_entry e;
	struct swap s;
	size_t changed, total = 0;
	int swapped, err, nr_err = 0, any_perm = 0;

	if (!fixture_build(&fx, "tables", "func_a", "-DRELEASE='\"6.1.0-test\"'"))
		img = kmeta_open(fx.path);
	fa = img ? kmeta_find_sym_by_name(img, "func_a") : NULL;
	fb = img ? kmeta_find_sym_by_name(img, "func_b") : NULL;
	if (!fa || !fb || fa->size != 0x1c || fb->size != 0xc || fb->addr != fa->addr + 0x1c) {
		ok(0, "the tables fixture: func_a (0x1c bytes) then func_b (0xc)");
		goto out;
	}
	for (size_t k = 0; k < ARRAY_SIZE(names); k++) {
		t = get_table(img, names[k]);
		nr_err += !t || remap(t, map_same, NULL, &changed, &swapped) != 0;
		total += t ? changed : 0;
		any_perm |= t ? swapped : 0;
	}
	ok(!nr_err && !total && !any_perm, "tables: the identity rewrites nothing, sorts nothing");

	s = (struct swap){ fa->addr, fa->size, fb->addr, fb->size };
	t = get_table(img, "ex_table");
	err = t ? remap(t, map_swap, &s, &changed, &swapped) : -1;
	ok(!err && changed == 4 && swapped == 1 &&
	   entry_is(t, 0, fa->addr + 0x5, 1, fa->addr + 0x7) &&
	   entry_is(t, 1, fa->addr + 0x14, 1, fa->addr + 0x17),
	   "ex_table (pc-relative, sorted): func_b's entry first, func_a's after it");
	t = get_table(img, "mcount_loc");
	err = t ? remap(t, map_swap, &s, &changed, &swapped) : -1;
	ok(!err && changed == 2 && swapped == 1 && entry_is(t, 0, fa->addr, 0, fa->addr) &&
	   entry_is(t, 1, fa->addr + 0xc, 0, fa->addr + 0xc),
	   "mcount_loc (absolute, sorted): func_b's call site first, func_a's at +0xc");
	t = get_table(img, "return_sites");
	err = t ? remap(t, map_swap, &s, &changed, &swapped) : -1;
	ok(!err && changed == 2 && !swapped &&
	   entry_is(t, 0, fa->addr + 0x22, 0, fa->addr + 0x22) &&
	   entry_is(t, 1, fa->addr + 0x7, 0, fa->addr + 0x7),
	   "return_sites (not sorted): both sites moved, in their slots");
	t = get_table(img, "smp_locks");
	err = t ? remap(t, map_swap, &s, &changed, &swapped) : -1;
	ok(!err && changed == 1 && !kmeta_table_read_entry(t, 0, &e) && e.site == fa->addr + 0x11 &&
	   !kmeta_table_read_entry(t, 1, &e) && e.filler,
	   "smp_locks: the lock prefix moved, the zero filler slot left alone");
	t = get_table(img, "alternatives");
	err = t ? remap(t, map_swap, &s, &changed, &swapped) : -1;
	ok(!err && changed == 1 && !kmeta_table_read_entry(t, 0, &e) && e.site == fa->addr + 0x1d &&
	   kmeta_find_sec_containing(img, e.val[1]) &&
	   !strcmp(kmeta_find_sec_containing(img, e.val[1])->name, ".altinstr_replacement"),
	   "alternatives: the site moved, the replacement (outside the code) kept");
	t = get_table(img, "jump_table");
	err = t ? remap(t, map_swap, &s, &changed, &swapped) : -1;
	ok(!err && changed == 2 && entry_is(t, 0, fa->addr + 0x19, 1, fa->addr + 0x27),
	   "jump_table: site and target both moved with func_a");
out:
	if (img)
		kmeta_close(img);
	fixture_remove(&fx);
}

int main(void)
{
	test_kbolt_map();
	test_swap();
	return tap_done();
}
