// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt: the optimizer's command front end: optimize (pass/optimize.c) and verify
 * (verify/verify.c), check-profile, which validates a profile against the kernel it claims to
 * describe, and profile-to-bolt, which writes a profile for llvm-bolt.  Options are
 * validated in one place (each command says which it takes) and commands accept unique
 * prefixes, as in kmeta.  heatmap (report/heatmap.c) draws where the profile's code lies;
 * fix-sites (report/fix_sites.c) repairs the site lists of another tool's output;
 * profile merge (profile/merge.c) adds up profiles of one kernel; profile portable
 * (profile/portable.c) writes one for other builds of the same source; profile
 * translate (profile/translate.c) one of kbolt's output for its input; record
 * (record/record_cmd.c) profiles the running kernel with a BPF program.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/json.h"
#include "../common/util.h"
#include "../kmeta/kmeta.h"
#include "lib/outfile.h"
#include "pass/optimize.h"
#include "profile/bolt_yaml.h"
#include "profile/check_profile.h"
#include "profile/portable.h"
#include "profile/profile.h"
#include "profile/profile_match.h"
#include "profile/translate.h"
#include "record/record.h"
#include "report/fix_sites.h"
#include "report/heatmap.h"
#include "verify/verify.h"
#include "version.h"

struct kbolt_opts {
	bool json, pretty, force;
	const char *output;	/* -o, or the input with --in-place */
	bool in_place;		/* --in-place: the output replaces the input */
	bool stats, layout_set, seed_set;
	unsigned int debug_info;	/* verify --debug-info: VERIFY_DEBUG_* */
	bool update_debug, no_update_debug;	/* optimize: given */
	struct opt_options opt;
	const char *optimized;	/* heatmap --optimized */
	enum bolt_format { BOLT_PRE, BOLT_FDATA, BOLT_YAML } format;	/* profile-to-bolt */
	uint64_t *weights;	/* -w, in the order given */
	size_t nr_weights;
	struct record_options rec;	/* record's options */
	char **args;
	int nr_args;
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kbolt [OPTIONS] COMMAND ARGS\n"
		"Reorder the basic blocks of a linked x86-64 Linux kernel (in progress).\n"
		"\n"
		"Commands (any unique prefix works):\n"
		"  optimize VMLINUX -o OUT         write VMLINUX with its blocks reordered, verified, to OUT\n"
		"  verify ORIG NEW                 prove that NEW is ORIG with blocks moved inside functions\n"
		"  check-profile VMLINUX PROFILE   check every recorded edge against the kernel's code\n"
		"  profile-to-bolt -o OUT [VMLINUX] PROFILE  write PROFILE in BOLT's format\n"
		"  heatmap VMLINUX PROFILE -o FILE draw where executed code lies (FILE.svg, FILE.png)\n"
		"  fix-sites VMLINUX -o OUT        repair another tool's stale site lists\n"
		"  profile merge PROFILE... -o OUT add up profiles of one kernel (-w: weights)\n"
		"  profile portable VMLINUX PROFILE -o OUT  PROFILE for other builds of VMLINUX's source\n"
		"  profile translate OPTIMIZED PROFILE -o OUT  PROFILE of kbolt's output, for its input\n"
		"  record -o OUT                   profile the running kernel (root, BPF, perf)\n"
		"\n"
		"Options:\n"
		"  -j, --json     JSON output\n"
		"  -p, --pretty   indented JSON output (implies -j)\n"
		"  -f, --force    use a profile whose build-id is not the kernel's, or whose\n"
		"                 addresses miss its instructions\n"
		"  -o, --output FILE  optimize, profile-to-bolt, heatmap, fix-sites, profile:\n"
		"                     the file to write; never one of the inputs\n"
		"      --in-place     optimize, fix-sites: write over VMLINUX instead (no -o)\n"
		"  -w, --weight N     profile merge: the counts of the Kth profile times the\n"
		"                     Kth N (once per profile, or not at all)\n"
		"      --profile FILE     optimize: lay the functions out by this profile\n"
		"      --layout profile|greedy|random  optimize: by the profile with ext-TSP\n"
		"                         (the default with --profile), by the profile with\n"
		"                         greedy chains, or a seeded random order (a test)\n"
		"      --seed N           optimize: the seed of --layout random (default 0)\n"
		"      --funcs GLOB       optimize: rewrite only functions matching GLOB (repeatable)\n"
		"      --skip-funcs GLOB  optimize: never rewrite functions matching GLOB (repeatable)\n"
		"      --stats            optimize: print what was rewritten, and why not, and\n"
		"                         with --profile the executed branches before and after\n"
		"      --require-rewrite  optimize: write nothing and fail when no function (with\n"
		"                         --profile: none with profile weight) is rewritten,\n"
		"                         naming the reason that skipped the most (a kernel build)\n"
		"      --update-debug     optimize, the default: rewrite the line table\n"
		"                         (.debug_line), the call frame information\n"
		"                         (.debug_frame), the code addresses of .debug_info\n"
		"                         (scopes, call sites) and the location lists\n"
		"                         (.debug_loclists, .debug_loc) of moved code, and prove\n"
		"                         them\n"
		"      --no-update-debug  optimize: copy the DWARF as it is, describing the old\n"
		"                         code of moved functions (faster)\n"
		"      --strip-debug      optimize: leave the DWARF (.debug_*) out of OUT\n"
		"      --debug-info[=LIST]  verify: prove the DWARF of every moved instruction\n"
		"                         unchanged too: LIST of lines (rows), frame (CFI),\n"
		"                         scopes (inline chains, blocks, call sites), locations\n"
		"                         (variables' location lists); alone, all\n"
		"      --optimized OUT    heatmap: a second panel, the same code in kbolt's OUT\n"
		"      --duration SECONDS  record: stop after SECONDS (default: at SIGINT or\n"
		"                         SIGTERM)\n"
		"      --event cpu-clock|cycles  record: the perf event sampled (default cycles, as\n"
		"                         precise as the PMU allows; without a PMU cpu-clock,\n"
		"                         with a note)\n"
		"      --frequency HZ     record: samples a second on each CPU (default 1000)\n"
		"      --branches         record: count the branch stacks (LBR) of the samples\n"
		"      --map-entries N    record: the size of the in-kernel counts map (default 65536)\n"
		"      --bpf-stats        record: measure what the program costs (switches on the\n"
		"                         kernel's BPF run-time statistics, for every program)\n"
		"      --check            record: load the program through the verifier, and stop\n"
		"      --format pre|fdata|yaml  profile-to-bolt: BOLT's pre-aggregated text\n"
		"                          (the default, perf2bolt -pa), its fdata or its YAML\n"
		"                          (llvm-bolt -data; both need VMLINUX)\n"
		"  -h, --help     this help\n"
		"  -V, --version  print the version\n"
		"\n"
		"Exit status: 0 success; 1 failure or a profile that disagrees with the kernel;\n"
		"2 usage error.  See kbolt(1).\n");
}

static void report_edge(struct kmeta_image *img, const struct prof_edge *e, const char *why,
			void *arg)
{
	struct kbolt_opts *o = arg;
	char from[KMETA_ADDR_STR_SIZE], to[KMETA_ADDR_STR_SIZE];

	if (o->json)
		return;
	printf("%s: %s -> %s (%s, %" PRIu64 " times): %s\n", img->path,
	       kmeta_addr_str(img, e->from, from, sizeof(from)),
	       kmeta_addr_str(img, e->to, to, sizeof(to)), prof_kind_name(e->kind), e->count, why);
}

static void print_stats(struct kbolt_opts *o, const struct prof *p, const struct profile_check *r)
{
	struct json j;

	if (!o->json) {
		if (p->portable) {
			printf("%s: ", p->path);
			portable_print_report(&p->portable->report, stdout);
		}
		printf("%s: %zu records (weight %" PRIu64 "): %zu agree with the code, %zu from "
		       "sites patched at boot, %zu outside the image, %zu disagree (weight %" PRIu64
		       ")\n", p->path, r->records, r->weight, r->agree, r->patched, r->outside,
		       r->disagree, r->disagree_weight);
		if (r->by_kind[PK_SAMPLE])
			printf("%s: of these, %zu samples (weight %" PRIu64 "), %zu of them "
			       "disagree\n", p->path, r->by_kind[PK_SAMPLE], r->sample_weight,
			       r->sample_disagree);
		return;
	}
	json_init(&j, stdout, o->pretty);
	json_obj_open(&j);
	json_member_str(&j, "profile", p->path);
	json_member_u64(&j, "records", r->records);
	json_key(&j, "by_kind");
	json_obj_open(&j);
	for (int k = 0; k < PK_NR; k++) {
		json_member_u64(&j, prof_kind_name(k), r->by_kind[k]);
	}
	json_obj_close(&j);
	json_member_u64(&j, "agree", r->agree);
	json_member_u64(&j, "patched", r->patched);
	json_member_u64(&j, "outside", r->outside);
	json_member_u64(&j, "disagree", r->disagree);
	json_member_u64(&j, "sample_disagree", r->sample_disagree);
	if (p->portable) {
		json_key(&j, "portable");
		portable_report_json(&p->portable->report, &j);
	}
	json_obj_close(&j);
	json_end(&j);
}

static int cmd_check_profile(struct kbolt_opts *o)
{
	struct kmeta_image *img = kmeta_open(o->args[0]);
	struct prof *p = img ? prof_read(o->args[1]) : NULL;
	struct profile_check r;
	int err = 1;

	if (p && !profile_match(img, p, o->force) &&
	    !profile_check(img, p, &r, report_edge, o)) {
		print_stats(o, p, &r);
		err = r.disagree ? 1 : 0;
	}
	prof_free(p);
	kmeta_close(img);
	return err;
}

struct bolt_out {
	struct kmeta_image *img;	/* fdata, YAML: the kernel, to name functions */
	const struct prof *p;
	enum bolt_format format;
};

static int write_bolt(FILE *f, const void *arg)
{
	const struct bolt_out *b = arg;

	int nr = b->format == BOLT_YAML ? yaml_write(b->img, b->p, f) :
		 b->format == BOLT_FDATA ? (int)!!profile_write_fdata(b->img, b->p, f) :
		 (int)!!prof_write_bolt(b->p, f);

	if (nr)
		return nr < 0 ? nr : 0;
	pr_err(b->p->path, "no records to write (%s are left out)", b->format == BOLT_YAML ?
	       "returns, interrupts, samples among branches and records of no function" :
	       "interrupts and samples");
	return -EINVAL;
}

/*
 * Through a temporary file (lib/outfile.h): an error leaves no OUT behind.  fdata and
 * YAML name functions: the profile is first matched to VMLINUX, as optimize does.
 */
static int cmd_profile_to_bolt(struct kbolt_opts *o)
{
	struct bolt_out b = { NULL, NULL, o->format };
	struct prof *p;
	int err;

	if (o->nr_args != (o->format != BOLT_PRE ? 2 : 1)) {
		if (o->format != BOLT_PRE)
			pr_err(NULL, "profile-to-bolt: --format %s names functions: give VMLINUX "
			       "PROFILE", o->format == BOLT_YAML ? "yaml" : "fdata");
		else
			pr_err(NULL, "profile-to-bolt: the pre-aggregated format needs PROFILE "
			       "only, no VMLINUX");
		return 2;
	}
	if (o->format != BOLT_PRE && !(b.img = kmeta_open(o->args[0])))
		return 1;
	p = prof_read(o->args[o->nr_args - 1]);
	b.p = p;
	err = !p || (b.img && profile_match(b.img, p, false)) || prof_check_bolt(p) ||
	      outfile_write(o->output, write_bolt, &b);
	prof_free(p);
	if (b.img)
		kmeta_close(b.img);
	return err ? 1 : 0;
}

static int cmd_optimize(struct kbolt_opts *o)
{
	struct optimize_report rep = { o->stats, o->json, o->pretty };

	if (!o->layout_set)
		o->opt.layout = o->opt.profile ? LAYOUT_PROFILE : LAYOUT_RANDOM;
	if (o->opt.layout != LAYOUT_RANDOM && !o->opt.profile) {
		pr_err(NULL, "--layout %s needs --profile FILE (or use --layout random)",
		       o->opt.layout == LAYOUT_GREEDY ? "greedy" : "profile");
		return 2;
	}
	if (o->opt.layout != LAYOUT_RANDOM && o->seed_set) {
		pr_err(NULL, "--seed is for --layout random; the profile layout has no chance in it");
		return 2;
	}
	if (o->opt.layout == LAYOUT_RANDOM && !o->seed_set && !o->layout_set) {
		pr_err(NULL, "without --profile, give --layout random --seed N (a test layout)");
		return 2;
	}
	return kbolt_optimize(o->args[0], o->output, &o->opt, &rep);
}

static int cmd_heatmap(struct kbolt_opts *o)
{
	struct heatmap_options ho = { o->optimized, o->force, o->json, o->pretty };
	size_t n = strlen(o->output);

	if (n < 4 || (strcasecmp(o->output + n - 4, ".svg") && strcasecmp(o->output + n - 4, ".png"))) {
		pr_err(NULL, "heatmap: -o FILE must end in .svg or .png, the format to write");
		return 2;
	}
	return kbolt_heatmap(o->args[0], o->args[1], o->output, &ho);
}

static int write_kbolt(FILE *f, const void *p)
{
	prof_write_kbolt(p, f);
	return 0;
}

/* The profiles, each read once, merged (profile/merge.c) and written as kbolt's format */
static int profile_merge(struct kbolt_opts *o)
{
	size_t nr = o->nr_args - 1;
	struct prof **in = xcalloc(nr, sizeof(*in)), *m = NULL;
	int err = -EINVAL;

	for (size_t k = 0; k < nr && (k == 0 || in[k - 1]); k++) {
		in[k] = prof_read(o->args[k + 1]);
		if (in[k] && prof_need_addresses(in[k])) {
			prof_free(in[k]);
			in[k] = NULL;
		}
	}
	if (in[nr - 1])
		m = prof_merge(in, o->weights, nr);
	if (m)
		err = outfile_write(o->output, write_kbolt, m);
	prof_free(m);
	for (size_t k = 0; k < nr; k++)
		prof_free(in[k]);
	free(in);
	return err ? 1 : 0;
}

/* A profile of VMLINUX (checked to be its own) written portable (profile/portable.c) */
static int profile_portable(struct kbolt_opts *o)
{
	struct kmeta_image *img = kmeta_open(o->args[1]);
	struct prof *p = img ? prof_read(o->args[2]) : NULL;
	int err = !p || profile_match(img, p, false) || prof_aggregate(p) ||
		  portable_write(img, p, o->output);

	prof_free(p);
	kmeta_close(img);
	return err ? 1 : 0;
}

/* A profile of kbolt's output, in its input's addresses (profile/translate.c) */
static int profile_translate(struct kbolt_opts *o)
{
	struct kmeta_image *img = kmeta_open(o->args[1]);
	struct prof *p = img ? prof_read(o->args[2]) : NULL;
	struct prof_translation res;
	int err = !p || profile_match(img, p, false) || prof_translate(img, p, &res) ||
		  outfile_write(o->output, write_kbolt, p);

	prof_free(p);
	kmeta_close(img);
	return err ? 1 : 0;
}

/* kbolt profile SUBCOMMAND: what is done to profiles as files */
static int cmd_profile(struct kbolt_opts *o)
{
	if (!strcmp(o->args[0], "portable") || !strcmp(o->args[0], "translate")) {
		bool portable = !strcmp(o->args[0], "portable");

		if (o->nr_args != 3 || o->nr_weights) {
			pr_err(NULL, "usage: kbolt profile %s", portable ?
			       "portable VMLINUX PROFILE -o OUT" : "translate OPTIMIZED PROFILE -o OUT");
			return 2;
		}
		return portable ? profile_portable(o) : profile_translate(o);
	}
	if (!strcmp(o->args[0], "merge")) {
		if (o->nr_weights && o->nr_weights != (size_t)o->nr_args - 1) {
			pr_err(NULL, "profile merge: give -w once for every profile (%d), or not "
			       "at all, not %zu times", o->nr_args - 1, o->nr_weights);
			return 2;
		}
		return profile_merge(o);
	}
	pr_err(NULL, "profile: unknown subcommand '%s' (merge, portable, translate)", o->args[0]);
	return 2;
}

static int cmd_fix_sites(struct kbolt_opts *o)
{
	return kbolt_fix_sites(o->args[0], o->output);
}

static int cmd_record(struct kbolt_opts *o)
{
	if (o->rec.check && o->output) {
		pr_err(NULL, "record --check records nothing: leave out -o");
		return 2;
	}
	if (!o->rec.check && !o->output) {
		pr_err(NULL, "usage: kbolt record -o OUT (or --check)");
		return 2;
	}
	o->rec.output = o->output;
	o->rec.json = o->json;
	o->rec.pretty = o->pretty;
	return kbolt_record(&o->rec);
}

static int cmd_verify(struct kbolt_opts *o)
{
	return kbolt_verify(o->args[0], o->args[1],
			    &(struct verify_report){ .debug_info = o->debug_info });
}

/* The library's allocations never fail back: kbolt ends here, its output not begun */
static void out_of_memory(size_t size)
{
	outfile_remove_current();
	fprintf(stderr, "kbolt: error: out of memory (%zu bytes)\n", size);
	exit(1);
}

/* Is a file the same as path, after links of either kind? */
static bool same_file(const char *path, const char *other)
{
	struct stat a, b;

	return path && other && !stat(path, &a) && !stat(other, &b) && a.st_dev == b.st_dev &&
	       a.st_ino == b.st_ino;
}

/*
 * -o naming an input would replace the only copy of what the command reads (the
 * kernel a profile names): refused, said once, unless --in-place asks for it
 */
static bool output_is_an_input(const struct kbolt_opts *o, bool in_place_allowed)
{
	const char *inputs[] = { o->opt.profile, o->optimized };

	for (int i = 0; i < o->nr_args + (int)ARRAY_SIZE(inputs); i++) {
		const char *in = i < o->nr_args ? o->args[i] : inputs[i - o->nr_args];

		if (!same_file(o->output, in))
			continue;
		pr_err(o->output, "-o names an input (%s): give another file%s", in,
		       in_place_allowed && i == 0 ? ", or --in-place to replace it" : "");
		return true;
	}
	return false;
}

/* A command's nr_args: exactly, or AT_LEAST(n) */
static bool nr_args_fit(int given, int wanted)
{
	return wanted < 0 ? given >= -wanted : given == wanted;
}

/* A decimal number without a sign, as --seed and -w take it: 0 or -EINVAL */
static int parse_decimal(const char *arg, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(arg, &end, 10);
	return errno || !*arg || *end || *arg == '-' || *arg == '+' ? -EINVAL : 0;
}

/* -w N: a count multiplier, 1 or more, decimal */
static int add_weight(struct kbolt_opts *o, const char *arg)
{
	uint64_t w;

	if (parse_decimal(arg, &w) || !w)
		return -EINVAL;
	o->weights = xrealloc(o->weights, (o->nr_weights + 1) * sizeof(*o->weights));
	o->weights[o->nr_weights++] = w;
	return 0;
}

/* record's numbers: a positive decimal that fits an unsigned int */
static int parse_count(const char *arg, unsigned int *v)
{
	uint64_t n;

	if (parse_decimal(arg, &n) || !n || n > UINT32_MAX)
		return -EINVAL;
	*v = n;
	return 0;
}

/* --layout NAME, --seed N */
static int parse_layout(struct kbolt_opts *o, const char *arg)
{
	if (!strcmp(arg, "profile"))
		o->opt.layout = LAYOUT_PROFILE;
	else if (!strcmp(arg, "greedy"))
		o->opt.layout = LAYOUT_GREEDY;
	else if (!strcmp(arg, "random"))
		o->opt.layout = LAYOUT_RANDOM;
	else
		return -EINVAL;
	o->layout_set = true;
	return 0;
}

static int parse_seed(struct kbolt_opts *o, const char *arg)
{
	if (parse_decimal(arg, &o->opt.seed))
		return -EINVAL;
	o->seed_set = true;
	return 0;
}

/*
 * --debug-info[=LIST]: what of the DWARF verify proves (VERIFY_DEBUG_*), 0 if LIST
 * names something else.  Alone, everything.
 */
static unsigned int debug_info_parts(const char *list)
{
	static const struct {
		const char *name;
		unsigned int what;
	} parts[] = {
		{ "lines", VERIFY_DEBUG_LINES },
		{ "frame", VERIFY_DEBUG_FRAME },
		{ "scopes", VERIFY_DEBUG_SCOPES },
		{ "locations", VERIFY_DEBUG_LOCATIONS },
		{ "all", VERIFY_DEBUG_LINES | VERIFY_DEBUG_FRAME | VERIFY_DEBUG_SCOPES |
			 VERIFY_DEBUG_LOCATIONS },
	};
	unsigned int what = 0;

	if (!list)
		return parts[ARRAY_SIZE(parts) - 1].what;
	while (*list) {
		size_t len = strcspn(list, ","), k;

		for (k = 0; k < ARRAY_SIZE(parts); k++)
			if (strlen(parts[k].name) == len && !strncmp(list, parts[k].name, len))
				break;
		if (k == ARRAY_SIZE(parts) || !len)
			return 0;
		what |= parts[k].what;
		list += len + (list[len] == ',');
	}
	return what;
}

static void add_glob(const char ***v, size_t *nr, const char *glob)
{
	*v = xrealloc(*v, (*nr + 1) * sizeof(**v));
	(*v)[(*nr)++] = glob;
}

enum { OPT_PROFILE = 256, OPT_LAYOUT, OPT_SEED, OPT_FUNCS, OPT_SKIP_FUNCS, OPT_STATS,
       OPT_REQUIRE_REWRITE, OPT_STRIP_DEBUG, OPT_UPDATE_DEBUG, OPT_NO_UPDATE_DEBUG, OPT_OPTIMIZED, OPT_IN_PLACE,
       OPT_DURATION, OPT_EVENT, OPT_FREQUENCY, OPT_BRANCHES, OPT_MAP_ENTRIES, OPT_BPF_STATS,
       OPT_CHECK,
       OPT_FORMAT, OPT_DEBUG_INFO };

/* Which options a command takes: a bit per option */
enum {
	TAKES_JSON = 1 << 0, TAKES_FORCE = 1 << 1, TAKES_OUTPUT = 1 << 2,
	TAKES_OPTIMIZE = 1 << 3,	/* --profile --layout --seed --funcs --skip-funcs --stats */
	TAKES_OPTIMIZED = 1 << 4,	/* --optimized */
	TAKES_IN_PLACE = 1 << 5,	/* --in-place */
	TAKES_WEIGHT = 1 << 6,		/* -w */
	TAKES_RECORD = 1 << 7,	/* --duration --event --frequency --branches --map-entries
				   --bpf-stats --check */
	TAKES_FORMAT = 1 << 8,		/* --format */
	TAKES_DEBUG_INFO = 1 << 9,	/* --debug-info */
	TAKES_LAST = TAKES_DEBUG_INFO
};

#define AT_LEAST(n) (-(n))	/* nr_args: n or more */

static const struct {
	const char *name;
	int (*fn)(struct kbolt_opts *o);
	int nr_args;		/* or AT_LEAST(n) */
	const char *usage;
	bool output;	/* takes -o OUT, and needs it */
	unsigned int takes;
} cmds[] = {
	{ "check-profile", cmd_check_profile, 2, "check-profile [-j|-p] [-f] VMLINUX PROFILE",
	  false, TAKES_JSON | TAKES_FORCE },
	{ "profile-to-bolt", cmd_profile_to_bolt, AT_LEAST(1),
	  "profile-to-bolt [--format pre|fdata|yaml] -o OUT [VMLINUX] PROFILE", true,
	  TAKES_OUTPUT | TAKES_FORMAT },
	{ "optimize", cmd_optimize, 1, "optimize VMLINUX -o OUT|--in-place [--profile FILE] "
	  "[--layout profile|greedy|random] [--seed N] [--funcs GLOB] [--skip-funcs GLOB] "
	  "[--update-debug|--no-update-debug|--strip-debug] [--stats] [--require-rewrite] [-j]", true,
	  TAKES_JSON | TAKES_FORCE | TAKES_OUTPUT | TAKES_OPTIMIZE | TAKES_IN_PLACE },
	{ "verify", cmd_verify, 2, "verify [--debug-info[=LIST]] ORIG NEW", false, TAKES_DEBUG_INFO },
	{ "heatmap", cmd_heatmap, 2, "heatmap [-j|-p] [-f] VMLINUX PROFILE [--optimized OUT] "
	  "-o FILE.svg|FILE.png", true, TAKES_JSON | TAKES_FORCE | TAKES_OUTPUT | TAKES_OPTIMIZED },
	{ "fix-sites", cmd_fix_sites, 1, "fix-sites VMLINUX -o OUT|--in-place", true,
	  TAKES_OUTPUT | TAKES_IN_PLACE },
	{ "profile", cmd_profile, AT_LEAST(2), "profile merge [-w N]... PROFILE... -o OUT | "
	  "profile portable VMLINUX PROFILE -o OUT | profile translate OPTIMIZED PROFILE -o OUT",
	  true, TAKES_OUTPUT | TAKES_WEIGHT },
	{ "profile", cmd_profile, AT_LEAST(2), "profile merge [-w N]... PROFILE... -o OUT", true,
	  TAKES_OUTPUT | TAKES_WEIGHT },
	/* -o checked by cmd_record: --check takes none */
	{ "record", cmd_record, 0, "record -o OUT|--check [--duration SECONDS] [--event "
	  "cpu-clock|cycles] [--frequency HZ] [--branches] [--map-entries N] [--bpf-stats] [-j]",
	  false,
	  TAKES_JSON | TAKES_OUTPUT | TAKES_RECORD },
};

/* The option of a TAKES_ bit, for messages */
static const char *option_name(unsigned int bit)
{
	switch (bit) {
	case TAKES_JSON:	return "-j/--json";
	case TAKES_FORCE:	return "-f/--force";
	case TAKES_OUTPUT:	return "-o/--output";
	case TAKES_OPTIMIZED:	return "--optimized";
	case TAKES_IN_PLACE:	return "--in-place";
	case TAKES_WEIGHT:	return "-w/--weight";
	case TAKES_RECORD:	return "--duration, --event, --frequency, --branches, "
				       "--map-entries, --bpf-stats or --check";
	case TAKES_FORMAT:	return "--format";
	case TAKES_DEBUG_INFO:	return "--debug-info";
	default:		return "--profile, --layout, --seed, --funcs, --skip-funcs, --stats, "
				       "--require-rewrite, --strip-debug, --update-debug or --no-update-debug";
	}
}

/* The command line read and checked, and the command run: its exit status */
static int run(struct kbolt_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "force", no_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ "profile", required_argument, NULL, OPT_PROFILE },
		{ "layout", required_argument, NULL, OPT_LAYOUT },
		{ "seed", required_argument, NULL, OPT_SEED },
		{ "funcs", required_argument, NULL, OPT_FUNCS },
		{ "skip-funcs", required_argument, NULL, OPT_SKIP_FUNCS },
		{ "stats", no_argument, NULL, OPT_STATS },
		{ "require-rewrite", no_argument, NULL, OPT_REQUIRE_REWRITE },
		{ "strip-debug", no_argument, NULL, OPT_STRIP_DEBUG },
		{ "update-debug", no_argument, NULL, OPT_UPDATE_DEBUG },
		{ "no-update-debug", no_argument, NULL, OPT_NO_UPDATE_DEBUG },
		{ "debug-info", optional_argument, NULL, OPT_DEBUG_INFO },
		{ "optimized", required_argument, NULL, OPT_OPTIMIZED },
		{ "in-place", no_argument, NULL, OPT_IN_PLACE },
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "weight", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, OPT_DURATION },
		{ "event", required_argument, NULL, OPT_EVENT },
		{ "frequency", required_argument, NULL, OPT_FREQUENCY },
		{ "branches", no_argument, NULL, OPT_BRANCHES },
		{ "map-entries", required_argument, NULL, OPT_MAP_ENTRIES },
		{ "bpf-stats", no_argument, NULL, OPT_BPF_STATS },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	unsigned int given = 0;
	long found;
	int c;

	opterr = 0;	/* our own messages, in the tool's format */
	while ((c = getopt_long(argc, argv, ":jpfo:w:hV", longopts, NULL)) != -1) {
		if (c >= OPT_PROFILE && c <= OPT_NO_UPDATE_DEBUG)
			given |= TAKES_OPTIMIZE;
		if (c >= OPT_DURATION && c <= OPT_CHECK)
			given |= TAKES_RECORD;
		switch (c) {
		case 'p': o->pretty = true; /* fall through */
		case 'j': o->json = true; given |= TAKES_JSON; break;
		case 'f': o->force = true; given |= TAKES_FORCE; break;
		case 'o': o->output = optarg; given |= TAKES_OUTPUT; break;
		case OPT_PROFILE: o->opt.profile = optarg; break;
		case OPT_FUNCS: add_glob(&o->opt.funcs, &o->opt.nr_funcs, optarg); break;
		case OPT_SKIP_FUNCS:
			add_glob(&o->opt.skip_funcs, &o->opt.nr_skip_funcs, optarg);
			break;
		case OPT_STATS: o->stats = true; break;
		case OPT_REQUIRE_REWRITE: o->opt.require_rewrite = true; break;
		case OPT_STRIP_DEBUG: o->opt.strip_debug = true; break;
		case OPT_UPDATE_DEBUG: o->update_debug = true; break;
		case OPT_NO_UPDATE_DEBUG: o->no_update_debug = true; break;
		case OPT_DEBUG_INFO:
			o->debug_info = debug_info_parts(optarg);
			if (!o->debug_info) {
				pr_err(NULL, "--debug-info takes a list of lines, frame, scopes, "
				       "locations and all, not '%s'", optarg);
				return 2;
			}
			given |= TAKES_DEBUG_INFO;
			break;
		case OPT_OPTIMIZED: o->optimized = optarg; given |= TAKES_OPTIMIZED; break;
		case OPT_IN_PLACE: o->in_place = true; given |= TAKES_IN_PLACE; break;
		case OPT_FORMAT:
			given |= TAKES_FORMAT;
			if (strcmp(optarg, "pre") && strcmp(optarg, "fdata") && strcmp(optarg, "yaml")) {
				pr_err(NULL, "--format takes pre, fdata or yaml, not '%s'", optarg);
				return 2;
			}
			o->format = !strcmp(optarg, "yaml") ? BOLT_YAML :
				    !strcmp(optarg, "fdata") ? BOLT_FDATA : BOLT_PRE;
			break;
		case 'w':
			if (add_weight(o, optarg)) {
				pr_err(NULL, "-w takes a whole number from 1, not '%s'", optarg);
				return 2;
			}
			given |= TAKES_WEIGHT;
			break;
		case OPT_LAYOUT:
			if (parse_layout(o, optarg)) {
				pr_err(NULL, "--layout takes profile, greedy or random, not '%s'", optarg);
				return 2;
			}
			break;
		case OPT_SEED:
			if (parse_seed(o, optarg)) {
				pr_err(NULL, "--seed takes a number, not '%s'", optarg);
				return 2;
			}
			break;
		case OPT_EVENT:
			if (strcmp(optarg, "cpu-clock") && strcmp(optarg, "cycles")) {
				pr_err(NULL, "--event takes cpu-clock or cycles, not '%s'", optarg);
				return 2;
			}
			o->rec.event = optarg;
			break;
		case OPT_BRANCHES: o->rec.branches = true; break;
		case OPT_BPF_STATS: o->rec.bpf_stats = true; break;
		case OPT_CHECK: o->rec.check = true; break;
		case OPT_DURATION:
		case OPT_FREQUENCY:
		case OPT_MAP_ENTRIES:
			if (parse_count(optarg, c == OPT_DURATION ? &o->rec.duration :
					c == OPT_FREQUENCY ? &o->rec.frequency : &o->rec.map_entries)) {
				pr_err(NULL, "%s takes a whole number from 1, not '%s'",
				       c == OPT_DURATION ? "--duration" :
				       c == OPT_FREQUENCY ? "--frequency" : "--map-entries", optarg);
				return 2;
			}
			break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("kbolt %s\n", KBOLT_VERSION_STRING); return 0;
		case ':':
			pr_err(NULL, "option '%s' needs an argument; try 'kbolt --help'",
			       argv[optind - 1]);
			return 2;
		default:
			pr_err(NULL, "unknown option '%s'; try 'kbolt --help'", argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	found = find_cmd_by_prefix(argv[optind], cmds, ARRAY_SIZE(cmds), sizeof(cmds[0]));
	if (found < 0)
		return 2;
	for (unsigned int bit = 1; bit <= TAKES_LAST; bit <<= 1) {
		if ((given & bit) && !(cmds[found].takes & bit)) {
			pr_err(NULL, "%s does not apply to %s", option_name(bit), cmds[found].name);
			return 2;
		}
	}
	o->args = argv + optind + 1;
	o->nr_args = argc - optind - 1;
	msg_json = o->json;
	if (o->update_debug && o->opt.strip_debug) {
		pr_err(NULL, "--update-debug rewrites the DWARF that --strip-debug leaves out: "
		       "give one of them");
		return 2;
	}
	if (o->update_debug && o->no_update_debug) {
		pr_err(NULL, "--update-debug and --no-update-debug contradict each other: "
		       "give one of them");
		return 2;
	}
	/* the default: the DWARF kept true, unless stripped or kept stale on request */
	o->opt.update_debug = !o->opt.strip_debug && !o->no_update_debug;
	if (o->in_place && o->output) {
		pr_err(NULL, "--in-place writes over the input: give it or -o OUT, not both");
		return 2;
	}
	if (o->in_place && o->nr_args == cmds[found].nr_args)
		o->output = o->args[0];
	if (!nr_args_fit(o->nr_args, cmds[found].nr_args) ||
	    (!o->output == cmds[found].output && cmds[found].fn != cmd_record)) {
		pr_err(NULL, "usage: kbolt %s", cmds[found].usage);
		return 2;
	}
	if (!o->in_place && output_is_an_input(o, cmds[found].takes & TAKES_IN_PLACE))
		return 2;
	o->opt.force = o->force;
	return cmds[found].fn(o);
}

int main(int argc, char **argv)
{
	struct kbolt_opts o = { 0 };
	int ret;

	msg_tool = "kbolt";
	kmeta_set_oom_handler(out_of_memory);
	ret = run(&o, argc, argv);
	free(o.opt.funcs);
	free(o.opt.skip_funcs);
	free(o.weights);
	return ret;
}
