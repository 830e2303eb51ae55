// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the ORC generation (kbolt/pass/orc_gen.c) on the stages fixture
 * (selftests/fixtures/stages.S), whose ORC table has six entries and no slot to spare:
 * orc_count_func() counts the entries of a function's new code (a state written where
 * it changes, from the old state of each placed op), orc_write() writes the table
 * whole, in the same slots, so that every new instruction unwinds as its old one did
 * and everything outside the moved function as before, and refuses a table that
 * needs one slot more; orc_fit_budget() then keeps that function's old code.  TAP
 * output.
 */
#include "../../kbolt/pass/emit.h"
#include "../../kbolt/pass/orc_gen.h"
#include "fixture.h"
#include "tap.h"

#define NR_ORC 6	/* the fixture's entries: 2 in cfg_branches, 1 a function, the end */

/* A copy of the old table, to compare the new one with */
struct orc_copy {
	uint64_t ips[NR_ORC];
	unsigned char entries[NR_ORC * KMETA_ORC_SIZE];
};

static void orc_save(const struct opt *opt, struct orc_copy *c)
{
	memcpy(c->ips, opt->orc_ips, sizeof(c->ips));
	memcpy(c->entries, opt->orc_entries, sizeof(c->entries));
}

static const unsigned char *old_state(const struct orc_copy *c, uint64_t addr)
{
	return kmeta_orc_state(c->ips, c->entries, NR_ORC, addr);
}

/* The fixture's sp offset in a state: 8 (A), 16 (B), 24 (C) */
static int sp_of(const unsigned char *e)
{
	return e ? (int16_t)get_u16(e) : -1;
}

/* Plan f in that order and mark it moved, as layout_func() and choose_layout() do */
static int plan(struct fixture *fx, struct func *f, const uint32_t *order, uint32_t nr)
{
	int err;

	set_order(f, order, nr);
	err = emit_plan(&fx->opt, f);
	f->moved = !err;
	return err;
}

static void test_count(struct fixture *fx)
{
	static const uint32_t grows[] = { 0, 2, 3, 1 }, same[] = { 0, 1, 3, 2 };
	static const uint32_t meta_order[] = { 0, 1, 7, 8, 5, 6, 2, 3, 4 };
	struct func *br = fixture_func(fx, "cfg_branches");
	struct func *meta = fixture_func(fx, "cfg_meta");
	int err;

	if (!br || !meta) {
		ok(0, "cfg_branches, cfg_meta: found");
		return;
	}
	ok(fx->opt.nr_orc == NR_ORC, "the fixture has %d ORC entries (%zu)", NR_ORC,
	   fx->opt.nr_orc);
	err = plan(fx, br, grows, 4) || orc_count_func(&fx->opt, br);
	ok(!err && br->orc_old == 2 && br->orc_new == 3,
	   "cfg_branches 0 2 3 1: 2 entries (A, B at bb2) become 3: A, B at bb2, A at bb1 "
	   "(%u, %u)", br->orc_old, br->orc_new);
	err = plan(fx, br, same, 4) || orc_count_func(&fx->opt, br);
	ok(!err && br->orc_old == 2 && br->orc_new == 2,
	   "cfg_branches 0 1 3 2: 2 entries stay 2: A, B from bb3 on (%u, %u)", br->orc_old,
	   br->orc_new);
	err = plan(fx, meta, meta_order, 9) || orc_count_func(&fx->opt, meta);
	ok(!err && meta->orc_old == 1 && meta->orc_new == 1,
	   "cfg_meta 0 1 7 8 5 6 2 3 4: one state, one entry (%u, %u)", meta->orc_old,
	   meta->orc_new);
	br->moved = meta->moved = false;
}

/* Every item of f unwinds, at its new place, as the op it comes from did */
static bool items_keep_states(struct fixture *fx, const struct func *f,
			      const struct orc_copy *old)
{
	const struct opt *opt = &fx->opt;

	for (uint32_t k = 0; k < f->nr_items; k++) {
		const struct item *it = &f->items[k];
		uint64_t at = f->sym->addr + it->new_off;
		const unsigned char *now = kmeta_orc_state(opt->orc_ips, opt->orc_entries,
							   opt->nr_orc, at);
		const unsigned char *was = old_state(old, f->sym->addr + f->ops[it->op].off);

		if (!now || !was || memcmp(now, was, KMETA_ORC_SIZE)) {
			printf("# %s+0x%x (old +0x%x): sp %d, was %d\n", f->sym->name, it->new_off,
			       f->ops[it->op].off, sp_of(now), sp_of(was));
			return false;
		}
	}
	return true;
}

/* Outside f, every old ip unwinds as before */
static bool others_keep_states(struct fixture *fx, const struct func *f,
			       const struct orc_copy *old)
{
	const struct opt *opt = &fx->opt;

	for (size_t k = 0; k < NR_ORC; k++) {
		uint64_t ip = old->ips[k];
		const unsigned char *now = kmeta_orc_state(opt->orc_ips, opt->orc_entries,
							   opt->nr_orc, ip);

		if (ip >= f->sym->addr && ip < f->sym->addr + f->sym->size)
			continue;
		if (!now || memcmp(now, old->entries + k * KMETA_ORC_SIZE, KMETA_ORC_SIZE)) {
			printf("# ORC entry %zu at 0x%llx changed\n", k, (unsigned long long)ip);
			return false;
		}
	}
	return true;
}

/* What the sections hold now, read as kbolt reads them, is what orc_write() says */
static bool sections_hold(struct fixture *fx)
{
	uint64_t *ips;
	const unsigned char *entries;
	size_t nr;
	bool same;

	if (kmeta_orc_read(fx->opt.img, &ips, &entries, &nr))
		return false;
	same = nr == fx->opt.nr_orc && !memcmp(ips, fx->opt.orc_ips, nr * sizeof(*ips)) &&
	       entries == fx->opt.orc_entries;
	free(ips);
	return same;
}

/* cfg_branches 0 1 3 2 moved: the table written, in the same six slots */
static void test_write(void)
{
	static const uint32_t order[] = { 0, 1, 3, 2 };
	struct fixture fx;
	struct orc_copy old;
	struct func *f;
	uint64_t a;
	int err;

	if (fixture_open(&fx, "stages", LAYOUT_RANDOM, 1) ||
	    !(f = fixture_func(&fx, "cfg_branches"))) {
		ok(0, "the stages fixture assembled and modelled");
		fixture_close(&fx);
		return;
	}
	a = f->sym->addr;
	orc_save(&fx.opt, &old);
	plan(&fx, f, order, 4);
	err = orc_write(&fx.opt);
	ok(!err && fx.opt.nr_orc == NR_ORC, "cfg_branches 0 1 3 2: orc_write fits %d entries (%d)",
	   NR_ORC, err);
	ok(!err && fx.opt.orc_ips[0] == a && fx.opt.orc_ips[1] == a + 0xe &&
	   sp_of(fx.opt.orc_entries) == 8 && sp_of(fx.opt.orc_entries + KMETA_ORC_SIZE) == 16,
	   "cfg_branches 0 1 3 2: its entries are A at +0x0, B at +0xe (bb3's new place)");
	ok(!err && items_keep_states(&fx, f, &old),
	   "cfg_branches 0 1 3 2: every new instruction unwinds as its old one");
	ok(!err && others_keep_states(&fx, f, &old),
	   "cfg_branches 0 1 3 2: the other functions unwind as before");
	ok(!err && !memcmp(fx.opt.orc_ips + 2, old.ips + 2, (NR_ORC - 2) * sizeof(*old.ips)),
	   "cfg_branches 0 1 3 2: the other entries keep their slots");
	ok(!err && sections_hold(&fx),
	   "cfg_branches 0 1 3 2: .orc_unwind_ip and .orc_unwind hold the new table");
	fixture_close(&fx);
}

/* cfg_branches 0 2 3 1 needs a seventh slot: refused, then kept by orc_fit_budget() */
static void test_budget(void)
{
	static const uint32_t order[] = { 0, 2, 3, 1 };
	struct fixture fx;
	struct orc_copy old;
	struct func *f;
	int err;

	if (fixture_open(&fx, "stages", LAYOUT_RANDOM, 1) ||
	    !(f = fixture_func(&fx, "cfg_branches"))) {
		ok(0, "the stages fixture assembled and modelled");
		fixture_close(&fx);
		return;
	}
	orc_save(&fx.opt, &old);
	plan(&fx, f, order, 4);
	orc_count_func(&fx.opt, f);
	err = orc_write(&fx.opt);
	ok(err == -ENOSPC && !memcmp(fx.opt.orc_ips, old.ips, sizeof(old.ips)),
	   "cfg_branches 0 2 3 1: orc_write refuses 7 entries for 6 slots, writes nothing (%d)",
	   err);
	orc_fit_budget(&fx.opt);
	ok(!f->moved && f->skip == SKIP_ORC_BUDGET,
	   "cfg_branches 0 2 3 1: orc_fit_budget keeps its old code (skip: %s)",
	   skip_reason_name(f->skip));
	err = orc_write(&fx.opt);
	ok(!err && !memcmp(fx.opt.orc_ips, old.ips, sizeof(old.ips)) &&
	   !memcmp(fx.opt.orc_entries, old.entries, sizeof(old.entries)),
	   "cfg_branches kept: the table is written as it was (%d)", err);
	fixture_close(&fx);
}

int main(void)
{
	struct fixture fx;

	if (!fixture_open_or_fail(&fx, "stages", LAYOUT_RANDOM, 1))
		return tap_done();
	test_count(&fx);
	fixture_close(&fx);
	test_write();
	test_budget();
	return tap_done();
}
