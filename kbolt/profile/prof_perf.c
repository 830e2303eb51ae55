// SPDX-License-Identifier: GPL-2.0
/*
 * The text of "perf script -F brstack --show-mmap-events" (perf-script(1)) of a
 * recording with branch stacks ("perf record -j any,k"), as perf2bolt reads it:
 *
 *   ... PERF_RECORD_MMAP -1/0: [0xffffffffa4a00000(0x1600000) @ ...]: x [kernel.kallsyms]_text
 *   ... 0xFROM/0xTO/P/-/-/CYCLES 0xFROM/0xTO/M/-/-/CYCLES ...
 *
 * Each sample line's branch entries, the most recent first: every entry is a taken
 * branch (PK_BRANCH: the stack does not say its kind), and between an entry and the
 * one before it in time, execution went straight from the older one's TO to the
 * newer one's FROM: a fall-through range.  Other fields of the line (comm, pid, ...)
 * are skipped.  Only kernel-to-kernel entries are kept; the rest are counted.
 * Addresses are where the kernel ran: the kernel's mmap event gives its _text, and
 * profile_match() takes the KASLR slide out once it knows the vmlinux.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "profile.h"

#define KERNEL_START 0xffff800000000000ULL
#define MAX_STACK 256	/* LBR has 32 entries, arch LBR up to 64: room to spare */
#define KALLSYMS_TEXT "[kernel.kallsyms]_text"

struct branch {
	uint64_t from, to;
};

static bool is_brstack_entry(const char *tok)
{
	return !strncmp(tok, "0x", 2) && strchr(tok, '/') && strchr(strchr(tok, '/') + 1, '/');
}

static bool perf_probe(const char *first_line)
{
	char copy[512], *save;

	if (strstr(first_line, "PERF_RECORD_"))
		return true;
	snprintf(copy, sizeof(copy), "%s", first_line);
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		if (is_brstack_entry(t))
			return true;
	return false;
}

/* FROM/TO of "0xFROM/0xTO/FLAGS..."; -EINVAL if not two hex addresses */
static int parse_entry(const char *tok, struct branch *b)
{
	char *end;

	b->from = strtoull(tok, &end, 16);
	if (end == tok || *end != '/' || strncmp(end + 1, "0x", 2))
		return -EINVAL;
	tok = end + 1;
	b->to = strtoull(tok, &end, 16);
	return end != tok && *end == '/' ? 0 : -EINVAL;
}

static bool in_kernel(uint64_t addr)
{
	return addr >= KERNEL_START;
}

/* The kernel's mmap event: where its _text ran */
static int parse_mmap(struct prof *p, const char *line)
{
	const char *s = strstr(line, "[0x");
	char *end;

	if (!strstr(line, KALLSYMS_TEXT))
		return 0;
	if (!s)
		return -EINVAL;
	p->text_runtime = strtoull(s + 1, &end, 16);
	return end != s + 1 ? 0 : -EINVAL;
}

/* One sample: its entries as branches, and the ranges between them */
static void add_sample(struct prof *p, const struct branch *b, size_t nr)
{
	for (size_t i = 0; i < nr; i++) {
		if (!in_kernel(b[i].from) || !in_kernel(b[i].to)) {
			p->nr_dropped++;
			continue;
		}
		prof_add_edge(p, b[i].from, b[i].to, 1, PK_BRANCH);
		/*
		 * b[i + 1] came before b[i]: straight on from its TO to b[i]'s FROM.  A
		 * range of no instruction (the older branch landed on the newer one) says
		 * nothing the branches do not.
		 */
		if (i + 1 < nr && in_kernel(b[i + 1].to) && b[i + 1].to < b[i].from)
			prof_add_edge(p, b[i + 1].to, b[i].from, 1, PK_FALLTHROUGH);
	}
}

static int parse_sample(struct prof *p, const char *line)
{
	char copy[4096], *save;
	struct branch b[MAX_STACK];
	size_t nr = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (!is_brstack_entry(t))
			continue;
		if (nr == MAX_STACK || parse_entry(t, &b[nr]))
			return -EINVAL;
		nr++;
	}
	add_sample(p, b, nr);
	return 0;
}

static int perf_read(struct prof *p, FILE *f)
{
	char line[4096];
	size_t lineno = 0;
	int err;

	snprintf(p->recorder, sizeof(p->recorder), "perf-brstack");
	while ((err = prof_read_line(p, f, line, sizeof(line), &lineno)) > 0) {
		if (line[0] == '#')
			continue;
		err = strstr(line, "PERF_RECORD_") ? parse_mmap(p, line) : parse_sample(p, line);
		if (err) {
			pr_err(p->path, "line %zu: not perf script -F brstack output: %.80s",
			       lineno, line);
			return err;
		}
	}
	if (err)
		return err;
	if (!p->text_runtime) {
		pr_err(p->path, "no mmap event of " KALLSYMS_TEXT ": record with perf script "
		       "--show-mmap-events, which says where the kernel ran");
		return -EINVAL;
	}
	return prof_aggregate(p);
}

const struct prof_format prof_format_perf = {
	.name = "perf",
	.probe = perf_probe,
	.read = perf_read,
};
