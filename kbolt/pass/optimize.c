// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt optimize: the pipeline, as a table of contents.
 *
 *   open the image, read the profile and check it is this kernel's
 *   orc_read        the old ORC table: states for every old address
 *   decode_init_funcs  functions, aliases, skips for options, areas, symbols
 *   prof_map_weigh_funcs  profile weight per function
 *   decode_funcs    ops of every function (lite: of those with weight, and of the code
 *                   that may point into them); skips for bad bytes
 *   refs_collect    references into bodies (needs every function decoded)
 *   cfg_build       blocks (needs the references: they make leaders)
 *   prof_map_apply  weights onto blocks (needs the blocks)
 *   layout_func     an order per function, planned by emit (needs the weights)
 *   orc_fit_budget  functions whose ORC would overflow the table keep their code
 *   dwarf_line_judge  --update-debug: a line table kbolt cannot update moves nothing
 *   dwarf_frame_check  and a function whose CFI kbolt cannot update does not move
 *   dwarf_info_check  nor one whose code addresses in .debug_info it cannot map (the
 *                   line table's check, which changes nothing, runs beside these two)
 *   rewrite_image   code, tables, relocations, ORC (needs the final set of moves)
 *   bat_build       the translation table of the moves (needs emit's plans, so
 *                   before the model is freed)
 *   dwarf_line_rewrite  --update-debug: .debug_line for the new code (needs emit's plan)
 *   dwarf_frame_rewrite  and .debug_frame
 *   dwarf_info_rewrite  and the code addresses of .debug_info, the new range lists
 *                   (beside the first two), as patches
 *   dwarf_patches_apply  the patches written, once the model is freed
 *   output          a temporary file, verified against the input, then renamed
 *
 * Each step's functions are declared by its stage's header (decode.h, refs.h, cfg.h,
 * prof_map.h, layout.h, emit.h, orc_gen.h, rewrite.h, bat_build.h, ../dwarf/dwarf.h),
 * prefixed with the stage's name; the model they share is ../model/opt.h.
 *
 * verify_prepare() reads what the proof needs of the input in a second thread: the
 * proof shares no memory with the optimizer.  It runs while the output is written
 * (mostly the kernel's work, copying), after the optimizer's model is freed, so that
 * the two never hold their memory at once; with --update-debug it runs from the start,
 * beside the passes that leave a core idle (on 6.1, a profile layout: 0.3 s sooner,
 * 37 MB more at the most, below the proof's own peak).
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../../common/json.h"
#include "../../common/util.h"
#include "../../kmeta/table.h"
#include "../dwarf/dwarf.h"
#include "../dwarf/io.h"
#include "../lib/bat.h"
#include "../lib/output.h"
#include "../lib/parallel.h"
#include "../model/opt.h"
#include "../profile/portable.h"
#include "../profile/profile_match.h"
#include "../report/dyno.h"
#include "../verify/verify.h"
#include "../version.h"
#include "bat_build.h"
#include "cfg.h"
#include "decode.h"
#include "emit.h"
#include "layout.h"
#include "optimize.h"
#include "orc_gen.h"
#include "prof_map.h"
#include "refs.h"
#include "rewrite.h"

struct opt_stats {
	size_t funcs, multi_block, moved, moved_multi, unchanged;
	size_t multi_safe;	/* multi-block functions kbolt proved it can rewrite */
	size_t not_analysed;	/* lite: no weight, and nothing of them matters */
	size_t skips[SKIP_NR];
	uint64_t skip_weight[SKIP_NR];
	uint64_t moved_weight, unchanged_weight, total_weight;
	size_t added_jmps, elided_jmps, inverted, widened_jl;
	size_t grown, grown_bytes;	/* functions whose new code runs into their padding */
	size_t inner_pads, inner_pad_bytes;	/* unreached alignment nops inside, dropped */
	size_t orc_entries;
	bool no_relocs;
	struct dyno_stats dyno;	/* with a profile */
	bool portable;		/* a portable profile, matched so: */
	struct portable_report match;
};

static int open_inputs(struct opt *opt, const char *in)
{
	opt->img = kmeta_open(in);
	if (!opt->img)
		return -EINVAL;
	if (opt->img->is_module) {
		pr_err(in, "a module: kbolt rewrites a linked vmlinux");
		return -EINVAL;
	}
	if (!opt->img->nr_funcs) {
		pr_err(in, "no function symbols (stripped?): kbolt needs the vmlinux with its "
		       "symbol table");
		return -EINVAL;
	}
	opt->no_relocs = !kmeta_find_sec_by_name(opt->img, ".rela.text");
	kmeta_claim_padding(opt->img);	/* room to grow into; verify claims the same */
	if (!opt->o->profile)
		return 0;
	opt->prof = prof_read(opt->o->profile);
	if (!opt->prof || profile_match(opt->img, opt->prof, opt->o->force))
		return -EINVAL;
	return 0;
}

/* Each function's blocks: each touches only its function, and reads the image */
static void cfg_item(void *arg, size_t i, unsigned int worker)
{
	struct opt *opt = arg;

	if (opt->funcs[i].decoded)
		cfg_build(opt, &opt->funcs[i]);
}

static void choose_layout(void *arg, size_t i, unsigned int worker)
{
	struct opt *opt = arg;
	struct func *f = &opt->funcs[i];
	int err;

	if (!is_rewritable(f) || !f->nr_bbs)
		return;
	err = layout_func(opt, f);
	if (err == -ENOSPC)
		skip_func(opt, f, SKIP_NO_FIT, f->sym->addr);
	if (err)
		return;
	f->moved = true;
	orc_count_func(opt, f);
}

/* Decide each function's layout (emit plans it): each touches only its function */
static void choose_layouts(struct opt *opt)
{
	parallel_for(opt->nr_funcs, choose_layout, opt);
}

/* Does f's new code run past its ELF end, into the padding after it? */
static void count_growth(const struct func *f, struct opt_stats *s)
{
	uint64_t end = emit_plan_size(f), body = kmeta_elf_size(f->sym);

	if (end > body) {
		s->grown++;
		s->grown_bytes += end - body;
	}
}

/* The blocks of alignment nops inside f's body that nothing reaches: not emitted */
static void count_dropped(const struct func *f, struct opt_stats *s)
{
	for (uint32_t b = 0; b < cfg_nr_body_bbs(f); b++) {
		const struct bb *bb = &f->bbs[b];

		if (!bb->drop)
			continue;
		s->inner_pads++;
		for (uint32_t i = bb->first; i < bb->first + bb->nr; i++)
			s->inner_pad_bytes += f->ops[i].len;
	}
}

static void count_items(const struct func *f, struct opt_stats *s)
{
	for (uint32_t k = 0; k < f->nr_items; k++) {
		const struct item *it = &f->items[k];
		const struct op *op = &f->ops[it->op];

		if (it->added)
			s->added_jmps++;
		else if (it->type == ITEM_JCC && f->bbs[it->bb].taken != it->target_bb)
			s->inverted++;
		else if (it->type == ITEM_JL && it->size != op->len)
			s->widened_jl++;
	}
	for (uint32_t b = 0; b < f->nr_bbs; b++) {
		const struct bb *bb = &f->bbs[b];
		bool emitted = false;

		if (bb->term != TERM_JMP || bb->drop)
			continue;
		for (uint32_t k = 0; k < f->nr_items && !emitted; k++)
			emitted = f->items[k].bb == b && f->items[k].type == ITEM_JMP &&
				  !f->items[k].added;
		s->elided_jmps += !emitted;
	}
}

static void gather_stats(struct opt *opt, struct opt_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->total_weight = opt->total_weight;
	s->no_relocs = opt->no_relocs;
	if (opt->prof && opt->prof->portable) {
		s->portable = true;
		s->match = opt->prof->portable->report;
	}
	for (size_t i = 0; i < opt->nr_funcs; i++) {
		const struct func *f = &opt->funcs[i];
		bool multi = cfg_nr_body_bbs(f) >= 2;

		if (f->alias || f->pad)
			continue;
		s->funcs++;
		s->multi_block += multi;
		s->multi_safe += multi && (f->skip == SKIP_NONE || f->skip == SKIP_NO_FIT ||
					   f->skip == SKIP_ORC_BUDGET);
		if (!f->decoded && f->skip == SKIP_NONE) {
			s->not_analysed++;
			continue;
		}
		if (f->moved) {
			s->moved++;
			s->moved_multi += multi;
			s->moved_weight += f->weight;
			s->orc_entries += f->orc_new;
			count_items(f, s);
			count_growth(f, s);
			count_dropped(f, s);
		} else if (f->skip == SKIP_NONE) {
			s->unchanged++;
			s->unchanged_weight += f->weight;
		} else {
			s->skips[f->skip]++;
			s->skip_weight[f->skip] += f->weight;
		}
	}
	dyno_gather(opt, &s->dyno);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * part / whole : 0.0;
}

/*
 * --require-rewrite: a kernel build that asked for a layout must not ship the input
 * under a new build-id.  Nothing rewritten (with a profile: nothing of its weight) is an
 * error naming the reason that skipped the most: by weight with a profile, else by count.
 */
static int check_rewritten(const char *in, const struct opt_stats *s, bool have_profile)
{
	bool by_weight = have_profile && s->total_weight;
	unsigned int top = SKIP_NONE;

	if (by_weight ? s->moved_weight : s->moved)
		return 0;
	for (unsigned int r = SKIP_FILTERED; r < SKIP_NR; r++) {
		if (r == SKIP_PADDING)
			continue;
		if (by_weight ? s->skip_weight[r] > s->skip_weight[top] : s->skips[r] > s->skips[top])
			top = r;
	}
	if (top == SKIP_NONE && by_weight)
		pr_err(in, "no function with profile weight is rewritten: none has a better layout; "
		       "nothing written (--require-rewrite)");
	else if (top == SKIP_NONE)
		pr_err(in, "no function is rewritten: none has a better layout; nothing written "
		       "(--require-rewrite)");
	else if (by_weight)
		pr_err(in, "no function with profile weight is rewritten: %.1f%% of the weight "
		       "skipped as %s (%s); nothing written (--require-rewrite)",
		       pct(s->skip_weight[top], s->total_weight), skip_reason_id(top),
		       skip_reason_name(top));
	else
		pr_err(in, "no function is rewritten: %zu of %zu functions skipped as %s (%s); "
		       "nothing written (--require-rewrite)", s->skips[top], s->funcs,
		       skip_reason_id(top), skip_reason_name(top));
	return -1;
}

static void print_stats_text(const struct opt_stats *s, bool have_profile)
{
	if (s->portable)
		portable_print_report(&s->match, stdout);
	printf("functions: %zu, %zu with two or more blocks, of which %zu (%.1f%%) proven safe "
	       "to rewrite\n", s->funcs, s->multi_block, s->multi_safe,
	       pct(s->multi_safe, s->multi_block));
	printf("  rewritten with a new layout: %zu (%.1f%% of those with two or more blocks)\n",
	       s->moved, pct(s->moved_multi, s->multi_block));
	printf("  kept as they were, proven safe: %zu (one block, or no better layout)\n",
	       s->unchanged);
	if (s->not_analysed)
		printf("  kept as they were, not analysed: %zu (no profile weight)\n",
		       s->not_analysed);
	for (unsigned int r = SKIP_FILTERED; r < SKIP_NR; r++) {
		if (!s->skips[r] || r == SKIP_PADDING)
			continue;
		printf("  skipped, %s: %zu", skip_reason_name(r), s->skips[r]);
		if (have_profile)
			printf(" (%.2f%% of profile weight)", pct(s->skip_weight[r], s->total_weight));
		printf("\n");
	}
	if (have_profile)
		printf("profile weight: %.2f%% in rewritten functions, %.2f%% in functions kept "
		       "as they were\n", pct(s->moved_weight, s->total_weight),
		       pct(s->unchanged_weight, s->total_weight));
	printf("branches: %zu jmps added, %zu jmps removed, %zu jccs inverted, %zu jump-label "
	       "sites widened to 5 bytes\n", s->added_jmps, s->elided_jmps, s->inverted,
	       s->widened_jl);
	printf("padding: %zu functions grew into the alignment padding after them, %zu bytes "
	       "in all\n", s->grown, s->grown_bytes);
	printf("padding inside functions: %zu runs of alignment nops that nothing reaches "
	       "dropped, %zu bytes in all\n", s->inner_pads, s->inner_pad_bytes);
	if (s->no_relocs)
		printf("relocations: none: addresses in data and immediates found by reading "
		       "every loaded byte as one, %zu functions left alone for a value that may "
		       "point inside\n", s->skips[SKIP_DATA_VALUE]);
	if (have_profile)
		dyno_print_text(&s->dyno);
}

/* The figures of --stats -j, as data: a key and its value, in the order printed */
struct figure {
	const char *key;
	uint64_t value;
};

static void print_figures(struct json *j, const struct figure *f, size_t nr)
{
	for (size_t i = 0; i < nr; i++)
		json_member_u64(j, f[i].key, f[i].value);
}

static void print_stats_json(const struct opt_stats *s, bool pretty)
{
	const struct figure functions[] = {
		{ "functions", s->funcs }, { "multi_block", s->multi_block },
		{ "multi_block_safe", s->multi_safe }, { "rewritten", s->moved },
		{ "rewritten_multi_block", s->moved_multi }, { "kept", s->unchanged },
		{ "not_analysed", s->not_analysed },
	}, weights[] = {
		{ "profile_weight", s->total_weight }, { "rewritten_weight", s->moved_weight },
		{ "kept_weight", s->unchanged_weight },
	}, code[] = {
		{ "padding_functions", s->grown }, { "padding_bytes", s->grown_bytes },
		{ "inner_padding_runs", s->inner_pads },
		{ "inner_padding_bytes", s->inner_pad_bytes },
		{ "jmps_added", s->added_jmps }, { "jmps_removed", s->elided_jmps },
		{ "jccs_inverted", s->inverted }, { "jump_labels_widened", s->widened_jl },
	};
	struct json j;

	json_init(&j, stdout, pretty);
	json_obj_open(&j);
	print_figures(&j, functions, ARRAY_SIZE(functions));
	if (s->portable) {
		json_key(&j, "portable");
		portable_report_json(&s->match, &j);
	}
	json_key(&j, "skipped");
	json_obj_open(&j);
	for (unsigned int r = SKIP_FILTERED; r < SKIP_NR; r++) {
		const struct figure skip[] = {
			{ "functions", s->skips[r] }, { "weight", s->skip_weight[r] },
		};

		if (r == SKIP_PADDING)
			continue;
		json_key(&j, skip_reason_id(r));
		json_obj_open(&j);
		print_figures(&j, skip, ARRAY_SIZE(skip));
		json_obj_close(&j);
	}
	json_obj_close(&j);
	print_figures(&j, weights, ARRAY_SIZE(weights));
	json_member_bool(&j, "relocations", !s->no_relocs);
	print_figures(&j, code, ARRAY_SIZE(code));
	if (s->total_weight) {
		json_key(&j, "dyno_stats");
		dyno_print_json(&s->dyno, &j);
	}
	json_obj_close(&j);
	json_end(&j);
}

/* What the note records: enough to redo the run */
static char *make_record(const struct opt_options *o, uint64_t prof_digest)
{
	const char *layout = o->layout == LAYOUT_RANDOM ? "random" :
			     o->layout == LAYOUT_GREEDY ? "greedy" : "profile";
	char *funcs = xstrdup(""), *s;

	for (size_t i = 0; i < o->nr_funcs; i++) {
		s = xasprintf("%s --funcs %s", funcs, o->funcs[i]);
		free(funcs);
		funcs = s;
	}
	for (size_t i = 0; i < o->nr_skip_funcs; i++) {
		s = xasprintf("%s --skip-funcs %s", funcs, o->skip_funcs[i]);
		free(funcs);
		funcs = s;
	}
	s = xasprintf("kbolt %s; options: --layout %s --seed %" PRIu64 "%s%s%s; profile: %016" PRIx64,
		      KBOLT_VERSION_STRING, layout, o->seed, funcs,
		      o->strip_debug ? " --strip-debug" : "",
		      o->update_debug ? " --update-debug" : "", prof_digest);
	free(funcs);
	return s;
}

static void debug_dump(struct opt *opt)
{
	const char *name = getenv("KBOLT_DEBUG_FUNC");

	for (size_t i = 0; getenv("KBOLT_DEBUG_SKIPS") && i < opt->nr_funcs; i++) {
		struct func *f = &opt->funcs[i];
		char at[KMETA_ADDR_STR_SIZE];

		if (f->skip && f->weight)
			fprintf(stderr, "skip %-50s %10" PRIu64 " %s at %s\n", f->sym->name,
				f->weight, skip_reason_name(f->skip),
				kmeta_addr_str(opt->img, f->skip_addr, at, sizeof(at)));
	}

	for (size_t i = 0; name && i < opt->nr_funcs; i++) {
		struct func *f = &opt->funcs[i];

		if (strcmp(f->sym->name, name))
			continue;
		fprintf(stderr, "%s: %s, %u ops, %u blocks\n", name,
			f->moved ? "moved" : f->skip ? skip_reason_name(f->skip) : "kept",
			f->nr_ops, f->nr_bbs);
		for (uint32_t b = 0; b < f->nr_bbs; b++)
			fprintf(stderr, "  bb%u +0x%x nr %u taken %d fall %d term %d drop %d new +0x%x\n",
				b, f->ops[f->bbs[b].first].off, f->bbs[b].nr, f->bbs[b].taken,
				f->bbs[b].fall, f->bbs[b].term, f->bbs[b].drop, f->bbs[b].new_off);
		for (uint32_t k = 0; k < f->nr_ops; k++)
			fprintf(stderr, "  op +0x%x len %u kind %u flags 0x%x iflags 0x%x new +0x%x\n",
				f->ops[k].off, f->ops[k].len, f->ops[k].kind, f->ops[k].flags,
				f->ops[k].insn_flags, f->ops[k].new_off);
	}
}

/* What --update-debug rewrites, and so proves */
#define UPDATED_DEBUG (VERIFY_DEBUG_LINES | VERIFY_DEBUG_FRAME | VERIFY_DEBUG_SCOPES | \
		       VERIFY_DEBUG_LOCATIONS)

/*
 * The checks of --update-debug: the line table's, which changes nothing, beside the
 * others, which keep functions (a second thread's skips would race theirs)
 */
struct debug_checks {
	struct opt *opt;
	struct line_verdict line;
};

static void check_debug_part(void *arg, size_t k, unsigned int worker)
{
	struct debug_checks *c = arg;

	if (k) {
		dwarf_line_judge(c->opt, &c->line);
		return;
	}
	dwarf_frame_check(c->opt);
	dwarf_info_check(c->opt);
}

static void check_debug(struct opt *opt)
{
	struct debug_checks c = { .opt = opt };

	parallel_for(2, check_debug_part, &c);
	dwarf_line_keep(opt, &c.line);
}

/*
 * The DWARF of the new code (--update-debug): new sections into debug, and patches of
 * .debug_info into ps.  The line table and the call frame information are rewritten
 * beside the DIEs and their lists, which change no unit's first DIE (the line table's
 * rewrite reads those).
 */
struct debug_rewrite {
	struct opt *opt;
	struct output_secs out[2];
	struct dwarf_patches ps[2];
	int err[2];
};

static void rewrite_debug_part(void *arg, size_t k, unsigned int worker)
{
	struct debug_rewrite *r = arg;

	if (k) {
		r->err[1] = dwarf_info_rewrite(r->opt, &r->out[1], &r->ps[1]);
		return;
	}
	r->err[0] = dwarf_line_rewrite(r->opt, &r->out[0], &r->ps[0]);
	if (!r->err[0])
		r->err[0] = dwarf_frame_rewrite(r->opt, &r->out[0]);
}

static int rewrite_debug(struct opt *opt, struct output_secs *debug, struct dwarf_patches *ps)
{
	struct debug_rewrite r = { .opt = opt };

	parallel_for(2, rewrite_debug_part, &r);
	for (size_t k = 0; k < 2; k++) {
		output_secs_take(debug, &r.out[k]);
		dwarf_patches_take(ps, &r.ps[k]);
	}
	return r.err[0] ? r.err[0] : r.err[1];
}

static int run_pipeline(struct opt *opt, struct output_secs *debug, struct dwarf_patches *ps)
{
	int err;

	opt->lite = opt->o->layout != LAYOUT_RANDOM;	/* profile layouts */
	if (orc_read(opt))
		return -EINVAL;
	decode_init_funcs(opt);
	prof_map_weigh_funcs(opt);	/* lite mode decodes by weight */
	if (decode_funcs(opt))
		return -EINVAL;
	kmeta_release_image(opt->img);	/* the scan read all code */
	if (refs_collect(opt))
		return -EINVAL;
	kmeta_release_image(opt->img);	/* and this every relocation */
	parallel_for(opt->nr_funcs, cfg_item, opt);
	prof_map_apply(opt);
	if (opt->o->update_debug)	/* before any function is chosen to move */
		check_debug(opt);
	choose_layouts(opt);
	orc_fit_budget(opt);
	debug_dump(opt);
	err = rewrite_image(opt);
	if (!err && opt->o->update_debug)
		err = rewrite_debug(opt, debug, ps);
	return err;
}

/* All but the image, which the output is written from */

struct preparation {
	const char *in;
	struct verifier *v;
	pthread_t thread;
	bool started;
};

static void *prepare_verify(void *arg)
{
	struct preparation *p = arg;

	p->v = verify_prepare(p->in);
	kmeta_insn_thread_exit();	/* a kCFI unit's call was decoded here (kcfi_traps) */
	return NULL;
}

static void start_preparation(struct preparation *p, const char *in)
{
	p->in = in;
	p->started = !pthread_create(&p->thread, NULL, prepare_verify, p);
}

/* The prepared verifier, made here if no thread could; NULL after an error (said) */
static struct verifier *finish_preparation(struct preparation *p)
{
	if (p->started)
		pthread_join(p->thread, NULL);
	else
		p->v = verify_prepare(p->in);
	return p->v;
}

/* The translation table of the moves, encoded into *bytes (lib/bat.h), as out says */
static void make_bat(const struct opt *opt, unsigned char **bytes, struct output_extra *out)
{
	struct bat bat;

	bat_build(opt, &bat);
	bat_encode(&bat, bytes, &out->size);
	out->data = *bytes;
	bat_free(&bat);
}

int kbolt_optimize(const char *in, const char *out, const struct opt_options *opts,
		   const struct optimize_report *rep)
{
	struct opt_options eff = *opts;	/* update_debug: only where there is DWARF */
	const struct opt_options *o = &eff;
	struct preparation prep = { 0 };
	struct verifier *v;
	struct opt opt = { .o = o };
	struct opt_stats s;
	uint64_t prof_digest = 0;
	bool have_profile = o->profile;
	struct outfile of = { .fd = -1 };
	struct output_secs debug = { 0 };
	struct dwarf_patches patches = { 0 };
	struct stat st;
	char *record = NULL;
	unsigned char *bat_bytes = NULL;
	struct output_extra bat_out = { 0 };
	int err;

	err = outfile_check_dir(out);
	if (!err)
		err = open_inputs(&opt, in);
	if (!err)	/* a table kmeta cannot read stops kbolt here, said once */
		err = kmeta_table_get_all(opt.img);
	if (!err && !kmeta_find_sec_by_name(opt.img, ".debug_info") &&
	    !kmeta_find_sec_by_name(opt.img, ".debug_line"))
		eff.update_debug = false;	/* nothing to keep true: no limit on growth */
	if (!err && o->profile)
		err = digest_file(o->profile, &prof_digest);
	if (!err && o->update_debug)	/* beside the DWARF passes, which leave a core idle */
		start_preparation(&prep, in);
	if (!err)
		err = run_pipeline(&opt, &debug, &patches);
	gather_stats(&opt, &s);
	if (!err && o->require_rewrite)
		err = check_rewritten(in, &s, have_profile);
	if (!err)
		make_bat(&opt, &bat_bytes, &bat_out);
	opt_free_model(&opt);	/* the proof needs room: only the image is left */
	malloc_trim(0);
	if (!err && !prep.in)	/* beside the writing, mostly the kernel's */
		start_preparation(&prep, in);
	if (!err)
		err = dwarf_patches_apply(opt.img, &patches, &debug);
	dwarf_patches_free(&patches);
	if (!err) {
		record = make_record(o, prof_digest);
		err = stat(in, &st) ? -errno : 0;
	}
	if (!err)
		err = outfile_create(&of, out, st.st_mode);
	if (!err)
		err = output_write_secs(opt.img, &of, record, &bat_out, o->strip_debug, &debug);
	free(bat_bytes);
	output_secs_free(&debug);
	kmeta_close(opt.img);	/* verify opens the output afresh */
	malloc_trim(0);
	v = prep.in ? finish_preparation(&prep) : NULL;
	if (!err)
		err = v ? verify_run(v, of.tmp, &(struct verify_report){ .quiet = true,
			.name = out, .debug_info = o->update_debug ? UPDATED_DEBUG : 0 }) : 1;
	else
		verifier_free(v);
	err = outfile_finish(&of, err);
	if (!err && s.no_relocs)
		pr_info(in, "no relocations: the output cannot be made into a KASLR bzImage "
			"(run kbolt on the vmlinux before the build strips its .rela sections)");
	if (!err && rep->stats) {
		if (rep->json)
			print_stats_json(&s, rep->pretty);
		else
			print_stats_text(&s, have_profile);
	}
	free(record);
	return err ? 1 : 0;
}
