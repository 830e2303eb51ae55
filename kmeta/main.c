// SPDX-License-Identifier: GPL-2.0
/*
 * kmeta: dump, check and compare the patch-site metadata of a kernel image or module.
 * Parses options (validated in one place, validate_opts()), picks the subcommand by
 * unique prefix as bpftool does, and opens the image it is given.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "cmd.h"
#include "module.h"
#include "table.h"

#define KMETA_VERSION_STRING "0.1"

struct cmd {
	const char *name;
	int (*fn)(struct opts *o);
	int nr_images;		/* FILE arguments, -m NAME counting as the first */
	const char *usage;
};

static const struct cmd cmds[] = {
	{ "summary", cmd_summary, 1, "summary [-j|-p] FILE" },
	{ "dump", cmd_dump, 1, "dump TABLE FILE [--func GLOB] [--addr A[-B]] [-j|-p]" },
	{ "check", cmd_check, 1, "check [-j|-p] [-v] FILE" },
	{ "diff", cmd_diff, 2, "diff [-j|-p] A B" },
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kmeta [OPTIONS] COMMAND ARGS\n"
		"Dump, check and compare the patch-site tables of an x86-64 Linux kernel image\n"
		"(vmlinux) or module (.ko, .ko.xz, .ko.zst).\n"
		"\n"
		"Commands (any unique prefix works):\n"
		"  summary FILE          entries of every table, and where their sites are\n"
		"  dump TABLE FILE       one entry of TABLE per line, sites as func+0xoff\n"
		"  check FILE            validate every entry against the code it points to\n"
		"  diff A B              entries that differ between two images of one kernel\n"
		"\n"
		"Options:\n"
		"  -j, --json            JSON output\n"
		"  -p, --pretty          indented JSON output (implies -j)\n"
		"  -m, --module NAME     the installed module NAME instead of FILE (libkmod)\n"
		"  -r, --release REL     with -m: the module tree of kernel release REL\n"
		"  -d, --moddir DIR      with -m: look under DIR/lib/modules (needs -r)\n"
		"      --func GLOB       dump: only entries whose site is in a matching function\n"
		"      --addr A[-B]      dump: only entries whose site is A, or in [A, B)\n"
		"  -v, --verbose         check: also print per-table counts\n"
		"  -h, --help            this help\n"
		"  -V, --version         print the version\n"
		"\n"
		"Tables: alternatives paravirt smp_locks retpoline_sites return_sites call_sites\n"
		"        ibt_endbr_seal cfi_sites kcfi_traps jump_table static_call_sites\n"
		"        mcount_loc ex_table bug_table orc pci_fixup kprobe_blacklist runtime_const\n"
		"\n"
		"Exit status: 0 success; 1 failure, check violations, or diff differences;\n"
		"2 usage error.  See kmeta(1).\n");
}

static const struct cmd *find_cmd(const char *name)
{
	long i = find_cmd_by_prefix(name, cmds, ARRAY_SIZE(cmds), sizeof(cmds[0]));

	return i < 0 ? NULL : &cmds[i];
}

static int parse_addr_range(struct opts *o, const char *arg)
{
	char *end;

	errno = 0;
	o->addr_lo = strtoull(arg, &end, 0);
	o->addr_hi = o->addr_lo + 1;
	if (*end == '-')
		o->addr_hi = strtoull(end + 1, &end, 0);
	if (errno || *end || o->addr_hi <= o->addr_lo) {
		pr_err(NULL, "--addr '%s': expected ADDR or START-END with START < END", arg);
		return -EINVAL;
	}
	o->has_addr = true;
	return 0;
}

/* Every option combination rule, in one place */
static int validate_opts(struct opts *o, const struct cmd *c)
{
	bool dump = c->fn == cmd_dump;
	int images = o->nr_args - dump + !!o->module;

	if ((o->func_glob || o->has_addr) && !dump) {
		pr_err(NULL, "--func and --addr only filter 'dump'");
		return -EINVAL;
	}
	if ((o->release || o->root) && !o->module) {
		pr_err(NULL, "-r and -d choose where -m looks; give -m NAME too");
		return -EINVAL;
	}
	if (o->root && !o->release) {
		pr_err(NULL, "-d DIR needs -r RELEASE: the tree is DIR/lib/modules/RELEASE");
		return -EINVAL;
	}
	if (o->nr_args < dump || images != c->nr_images) {
		pr_err(NULL, "usage: kmeta %s%s", c->usage,
		       o->module ? " (-m NAME stands for the first FILE)" : "");
		return -EINVAL;
	}
	return 0;
}

enum { OPT_FUNC = 256, OPT_ADDR };

static int parse_opts(int argc, char **argv, struct opts *o)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "module", required_argument, NULL, 'm' },
		{ "release", required_argument, NULL, 'r' },
		{ "moddir", required_argument, NULL, 'd' },
		{ "func", required_argument, NULL, OPT_FUNC },
		{ "addr", required_argument, NULL, OPT_ADDR },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	int c;

	opterr = 0;	/* our own messages, in the tool's format */
	while ((c = getopt_long(argc, argv, ":jpm:r:d:vhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': o->pretty = true; /* fall through */
		case 'j': o->json = true; break;
		case 'm': o->module = optarg; break;
		case 'r': o->release = optarg; break;
		case 'd': o->root = optarg; break;
		case 'v': o->verbose = true; break;
		case OPT_FUNC: o->func_glob = optarg; break;
		case OPT_ADDR:
			if (parse_addr_range(o, optarg))
				return 2;
			break;
		case 'h': usage(stdout); exit(0);
		case 'V': printf("kmeta %s\n", KMETA_VERSION_STRING); exit(0);
		case ':':
			pr_err(NULL, "option '%s' needs an argument; try 'kmeta --help'",
			       argv[optind - 1]);
			return 2;
		default:
			pr_err(NULL, "unknown option '%s'; try 'kmeta --help'", argv[optind - 1]);
			return 2;
		}
	}
	return 0;
}

struct kmeta_image *cmd_open_tables(struct opts *o, int idx)
{
	struct kmeta_image *img = cmd_open_image(o, idx);

	for (unsigned int i = 0; img && i < kmeta_nr_table_descs; i++) {
		if (!kmeta_table_get(img, kmeta_table_descs[i])) {
			kmeta_close(img);
			return NULL;
		}
	}
	return img;
}

struct kmeta_image *cmd_open_image(struct opts *o, int idx)
{
	struct kmeta_image *img;
	char *path;

	if (!o->module)
		return kmeta_open(o->args[idx]);
	if (idx > 0)
		return kmeta_open(o->args[idx - 1]);
	path = kmeta_module_find_path(o->module, o->release, o->root);
	if (!path)
		return NULL;
	img = kmeta_open(path);
	free(path);
	return img;
}

/* The library's allocations never fail back: the command ends here */
static void out_of_memory(size_t size)
{
	fprintf(stderr, "kmeta: error: out of memory (%zu bytes)\n", size);
	exit(1);
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	const struct cmd *c;
	int err;

	msg_tool = "kmeta";
	kmeta_set_oom_handler(out_of_memory);
	if (parse_opts(argc, argv, &o))
		return 2;
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	c = find_cmd(argv[optind]);
	if (!c)
		return 2;
	o.args = argv + optind + 1;
	o.nr_args = argc - optind - 1;
	msg_json = o.json;
	if (validate_opts(&o, c))
		return 2;
	json_init(&o.json_out, stdout, o.pretty);
	err = c->fn(&o);
	fflush(stdout);
	return err < 0 ? 1 : err;
}
