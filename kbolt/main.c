// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt: the optimizer's command front end.  So far: check-profile, which validates a
 * profile against the kernel it claims to describe.  Options are validated in one place
 * and commands accept unique prefixes, as in kmeta.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kmeta/json.h"
#include "../kmeta/kmeta.h"
#include "../kmeta/util.h"
#include "check_profile.h"
#include "profile.h"

#define KBOLT_VERSION_STRING "0.1"

struct kbolt_opts {
	bool json, pretty, force;
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
		"  check-profile VMLINUX PROFILE   check every recorded edge against the kernel's code\n"
		"\n"
		"Options:\n"
		"  -j, --json     JSON output\n"
		"  -p, --pretty   indented JSON output (implies -j)\n"
		"  -f, --force    use a profile whose build-id is not the kernel's\n"
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

/* Without a build-id on either side, the release must match */
static int same_release(struct kmeta_image *img, const struct prof *p, bool force)
{
	if (!p->release[0] || !img->release[0] || !strcmp(p->release, img->release))
		return 0;
	if (force) {
		pr_warn(p->path, "recorded on release %s, not %s's %s (--force)", p->release,
			img->path, img->release);
		return 0;
	}
	pr_err(p->path, "recorded on release %s, but %s is release %s: a profile of another "
	       "kernel (--force uses it anyway)", p->release, img->path, img->release);
	return -1;
}

static int same_kernel(struct kmeta_image *img, const struct prof *p, bool force)
{
	char id[128] = "";

	if (kmeta_build_id(img, id, sizeof(id)) || !p->build_id[0])
		return same_release(img, p, force);
	if (!strcmp(id, p->build_id))
		return 0;
	if (force) {
		pr_warn(p->path, "recorded on build-id %s, not %s's %s (--force)", p->build_id,
			img->path, id);
		return 0;
	}
	pr_err(p->path, "recorded on build-id %s, but %s has build-id %s: a profile of "
	       "another kernel (--force uses it anyway)", p->build_id, img->path, id);
	return -1;
}

static void print_stats(struct kbolt_opts *o, const struct prof *p, const struct profile_check *r)
{
	struct json j;

	if (!o->json) {
		printf("%s: %zu records (weight %" PRIu64 "): %zu agree with the code, %zu from "
		       "sites patched at boot, %zu outside the image, %zu disagree (weight %" PRIu64
		       ")\n", p->path, r->records, r->weight, r->agree, r->patched, r->outside,
		       r->disagree, r->disagree_weight);
		return;
	}
	json_init(&j, stdout, o->pretty);
	json_obj_open(&j);
	json_key(&j, "profile");
	json_str(&j, p->path);
	json_key(&j, "records");
	json_u64(&j, r->records);
	json_key(&j, "by_kind");
	json_obj_open(&j);
	for (int k = 0; k < PK_NR; k++) {
		json_key(&j, prof_kind_name(k));
		json_u64(&j, r->by_kind[k]);
	}
	json_obj_close(&j);
	json_key(&j, "agree");
	json_u64(&j, r->agree);
	json_key(&j, "patched");
	json_u64(&j, r->patched);
	json_key(&j, "outside");
	json_u64(&j, r->outside);
	json_key(&j, "disagree");
	json_u64(&j, r->disagree);
	json_obj_close(&j);
	json_end(&j);
}

static int cmd_check_profile(struct kbolt_opts *o)
{
	struct kmeta_image *img = kmeta_open(o->args[0]);
	struct prof *p = img ? prof_read(o->args[1]) : NULL;
	struct profile_check r;
	int err = 1;

	if (p && !same_kernel(img, p, o->force) &&
	    !profile_check(img, p, &r, report_edge, o)) {
		print_stats(o, p, &r);
		err = r.disagree ? 1 : 0;
	}
	prof_free(p);
	kmeta_close(img);
	return err;
}

static const struct {
	const char *name;
	int (*fn)(struct kbolt_opts *o);
	int nr_args;
	const char *usage;
} cmds[] = {
	{ "check-profile", cmd_check_profile, 2, "check-profile [-j|-p] [-f] VMLINUX PROFILE" },
};

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 }
	};
	struct kbolt_opts o = { 0 };
	int c, found = -1;

	msg_tool = "kbolt";
	opterr = 0;	/* our own messages, in the tool's format */
	while ((c = getopt_long(argc, argv, "jpfhV", longopts, NULL)) != -1) {
		switch (c) {
		case 'p': o.pretty = true; /* fall through */
		case 'j': o.json = true; break;
		case 'f': o.force = true; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("kbolt %s\n", KBOLT_VERSION_STRING); return 0;
		default:
			pr_err(NULL, "unknown option '%s'; try 'kbolt --help'", argv[optind - 1]);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < ARRAY_SIZE(cmds) && argv[optind][0]; i++) {
		if (strncmp(cmds[i].name, argv[optind], strlen(argv[optind])))
			continue;
		if (found >= 0) {
			pr_err(NULL, "command '%s' is ambiguous", argv[optind]);
			return 2;
		}
		found = i;
	}
	if (found < 0) {
		pr_err(NULL, "unknown command '%s'; try 'kbolt --help'", argv[optind]);
		return 2;
	}
	o.args = argv + optind + 1;
	o.nr_args = argc - optind - 1;
	msg_json = o.json;
	if (o.nr_args != cmds[found].nr_args) {
		pr_err(NULL, "usage: kbolt %s", cmds[found].usage);
		return 2;
	}
	return cmds[found].fn(&o);
}
