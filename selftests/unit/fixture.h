/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stage tests' fixture: a miniature kernel of selftests/fixtures/ assembled and
 * linked into a temporary directory at test time (as selftests/flow.sh does), and
 * kbolt's model of it set up as kbolt/pass/optimize.c sets it up for kbolt optimize,
 * up to the blocks: open the image and claim the padding after functions, orc_read,
 * decode_init_funcs, decode_funcs (every function, as with a random layout: no profile, not
 * lite), refs_collect, cfg_build.  What comes after (layout_func, emit_plan, ORC,
 * table remapping) is each test's to call.  fixture_close() frees the model
 * (opt_free_model()) and the image.
 */
#ifndef KBOLT_SELFTESTS_FIXTURE_H
#define KBOLT_SELFTESTS_FIXTURE_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../../kbolt/model/opt.h"
#include "../../kbolt/pass/cfg.h"
#include "../../kbolt/pass/decode.h"
#include "../../kbolt/pass/orc_gen.h"
#include "../../kbolt/pass/refs.h"
#include "tap.h"

#ifndef KBOLT_SRCDIR
#define KBOLT_SRCDIR "."	/* the Makefile says where the tree is */
#endif

/* An op that was not planned (emit.c's NO_OFF) */
struct fixture {
	char dir[PATH_MAX];	/* the temporary directory */
	char path[PATH_MAX + NAME_MAX + 2];	/* the linked image in it */
	struct opt_options o;
	struct opt opt;
};

/*
 * Assemble selftests/fixtures/NAME.S (with the cpp flags given, may be "") and link it
 * with vmlinux.lds, entry at the symbol given, into fx->path: 0, or -1 after saying why
 */
static inline int fixture_build(struct fixture *fx, const char *name, const char *entry,
				const char *cppflags)
{
	const char *tmpdir = getenv("TMPDIR");
	char cmd[8 * PATH_MAX];

	memset(fx, 0, sizeof(*fx));
	snprintf(fx->dir, sizeof(fx->dir), "%s/kbolt-unit.XXXXXX",
		 tmpdir && *tmpdir ? tmpdir : "/tmp");
	if (!mkdtemp(fx->dir)) {
		printf("# mkdtemp %s failed\n", fx->dir);
		return -1;
	}
	snprintf(fx->path, sizeof(fx->path), "%s/%s", fx->dir, name);
	snprintf(cmd, sizeof(cmd),
		 "gcc -c %s -o '%s.o' '%s/selftests/fixtures/%s.S' && "
		 "ld -q -e %s -T '%s/selftests/fixtures/vmlinux.lds' --no-warn-rwx-segments "
		 "-o '%s' '%s.o'", cppflags, fx->path, KBOLT_SRCDIR, name, entry, KBOLT_SRCDIR,
		 fx->path, fx->path);
	if (system(cmd)) {
		printf("# could not assemble and link the fixture: %s\n", cmd);
		return -1;
	}
	return 0;
}

static inline void fixture_remove(struct fixture *fx)
{
	char o[sizeof(fx->path) + 2];

	snprintf(o, sizeof(o), "%s.o", fx->path);
	unlink(o);
	unlink(fx->path);
	rmdir(fx->dir);
}

/*
 * Build the fixture NAME (selftests/fixtures/NAME.S, entry _text) and kbolt's model of
 * it up to the blocks, with that layout and seed: 0, or -1 after saying where it failed
 */
static inline int fixture_open(struct fixture *fx, const char *name, enum layout_kind layout,
			       uint64_t seed)
{
	struct opt *opt = &fx->opt;

	if (fixture_build(fx, name, "_text", ""))
		return -1;
	fx->o.layout = layout;
	fx->o.seed = seed;
	opt->o = &fx->o;
	opt->img = kmeta_open(fx->path);
	if (!opt->img) {
		printf("# kmeta_open %s failed\n", fx->path);
		return -1;
	}
	opt->no_relocs = !kmeta_find_sec_by_name(opt->img, ".rela.text");
	kmeta_claim_padding(opt->img);
	opt->lite = false;	/* decode every function: no profile */
	if (orc_read(opt)) {
		printf("# orc_read failed\n");
		return -1;
	}
	decode_init_funcs(opt);
	if (decode_funcs(opt) || refs_collect(opt)) {
		printf("# decode_funcs or refs_collect failed\n");
		return -1;
	}
	for (size_t i = 0; i < opt->nr_funcs; i++)
		if (opt->funcs[i].decoded)
			cfg_build(opt, &opt->funcs[i]);
	return 0;
}

static inline void fixture_close(struct fixture *fx)
{
	struct opt *opt = &fx->opt;

	opt_free_model(opt);
	if (opt->img)
		kmeta_close(opt->img);
	fixture_remove(fx);
	memset(fx, 0, sizeof(*fx));
}

/* fixture_open(), and on failure the one failed test that says so (then tap_done()) */
static inline bool fixture_open_or_fail(struct fixture *fx, const char *name,
					enum layout_kind layout, uint64_t seed)
{
	if (!fixture_open(fx, name, layout, seed))
		return true;
	ok(0, "the %s fixture assembled and modelled", name);
	fixture_close(fx);
	return false;
}

/* The function of that name, or NULL (said) */
static inline struct func *fixture_func(struct fixture *fx, const char *name)
{
	for (size_t i = 0; i < fx->opt.nr_funcs; i++)
		if (!strcmp(fx->opt.funcs[i].sym->name, name))
			return &fx->opt.funcs[i];
	printf("# no function %s in the fixture\n", name);
	return NULL;
}

/* Index of the op at offset off of f, -1 if no op starts there */
static inline long op_at(const struct func *f, uint32_t off)
{
	long i = find_op_containing(f, f->sym->addr + off);

	return i >= 0 && f->ops[i].off == off ? i : -1;
}

/* The op at offset off of f has all the flags of set and none of clear */
static inline bool op_flags_are(const struct func *f, uint32_t off, unsigned int set,
				unsigned int clear)
{
	long i = op_at(f, off);

	if (i < 0) {
		printf("# %s: no op at +0x%x\n", f->sym->name, off);
		return false;
	}
	if ((f->ops[i].flags & set) != set || (f->ops[i].flags & clear)) {
		printf("# %s+0x%x: flags 0x%x, want 0x%x set and 0x%x clear\n", f->sym->name, off,
		       f->ops[i].flags, set, clear);
		return false;
	}
	return true;
}

/* Lay f out in this order of blocks (as layout_func() leaves f->order) */
static inline void set_order(struct func *f, const uint32_t *order, uint32_t nr)
{
	free(f->order);
	f->order = malloc(f->nr_bbs * sizeof(*f->order));
	memcpy(f->order, order, nr * sizeof(*order));
	f->nr_order = nr;
}

/* The offsets at which f's blocks start are these (said if not) */
static inline bool bb_starts_are(const struct func *f, const uint32_t *off, uint32_t nr)
{
	bool same = f->nr_bbs == nr;

	for (uint32_t b = 0; same && b < nr; b++)
		same = f->ops[f->bbs[b].first].off == off[b];
	if (!same) {
		printf("# %s: %u blocks at", f->sym->name, f->nr_bbs);
		for (uint32_t b = 0; b < f->nr_bbs; b++)
			printf(" +0x%x", f->ops[f->bbs[b].first].off);
		printf("\n");
	}
	return same;
}

/* Block b of f has nr ops, those successors and that terminator (said if not) */
static inline bool bb_is(const struct func *f, uint32_t b, uint32_t nr, int32_t taken,
			 int32_t fall, enum term_kind term)
{
	const struct bb *bb = b < f->nr_bbs ? &f->bbs[b] : NULL;

	if (bb && bb->nr == nr && bb->taken == taken && bb->fall == fall && bb->term == term)
		return true;
	if (bb)
		printf("# %s bb%u: %u ops, taken %d, fall %d, term %u\n", f->sym->name, b, bb->nr,
		       bb->taken, bb->fall, bb->term);
	return false;
}

#endif
