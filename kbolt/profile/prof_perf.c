// SPDX-License-Identifier: GPL-2.0
/*
 * The text of "perf script --show-mmap-events" (perf-script(1), builtin-script.c) of a
 * recording with branch stacks ("perf record -j any,k", printed with -F brstack), as
 * perf2bolt reads it, or of sampled instruction pointers (printed with -F ip, alone or
 * with other fields):
 *
 *   ... PERF_RECORD_MMAP -1/0: [0xffffffffa4a00000(0x1600000) @ ...]: x [kernel.kallsyms]_text
 *   ... 0xFROM/0xTO/P/-/-/CYCLES 0xFROM/0xTO/M/-/-/CYCLES ...           -F brstack
 *   ffffffffa4b2c0de                                                     -F ip
 *   ffffffffa4b2c0de tcp_sendmsg                                         -F ip,sym
 *   bash 1234 [001] 10.000250: 250000 cpu-clock: ffffffffa4b2c0de tcp_sendmsg+0x1e ([kernel.kallsyms])
 *
 * A line's branch entries, the most recent first: every entry is a taken branch
 * (PK_BRANCH: the stack does not say its kind), and between an entry and the one
 * before it in time, execution went straight from the older one's TO to the newer
 * one's FROM: a fall-through range.  Other fields of the line (comm, pid, ...) are
 * skipped.  A line without entries is an ip sample (PK_SAMPLE): perf prints the ip,
 * right-aligned hex without 0x, first or after the last field that ends in a colon
 * (the event, or the time), which names the event.  A recording with callchains
 * prints the ips on the lines that follow the sample's, each after a tab, the sampled
 * one first: that one is the sample.  Only kernel addresses are kept; the rest (user
 * space, kernel-to-user entries) are counted as dropped.  Addresses are where the
 * kernel ran: the kernel's mmap event gives its _text, and profile_match() takes the
 * KASLR slide out once it knows the vmlinux.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../kmeta/kernel_addr.h"
#include "profile.h"

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
	return addr >= KERNEL_HALF_START;
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

struct perf_state {
	bool want_leaf;		/* the sample line had no ip: the callchain's first is it */
	bool seen_brstack;
	uint64_t nr_ips;
	size_t first_odd;	/* the first line with neither entries nor an ip, 0 if none */
	char odd_line[81];
};

static void add_ip(struct prof *p, struct perf_state *st, uint64_t ip)
{
	st->nr_ips++;
	if (in_kernel(ip))
		prof_add_edge(p, ip, ip, 1, PK_SAMPLE);
	else
		p->nr_dropped++;
}

static bool ends_in_colon(const char *tok)
{
	return tok[strlen(tok) - 1] == ':';
}

/*
 * A sample line without branch entries: its ip is the field after the last one
 * ending in a colon, or the first.  None (the line ends in that colon, or is empty):
 * the callchain lines that follow have it.
 */
static int parse_ip_line(struct prof *p, struct perf_state *st, char **tok, int nr)
{
	int at = 0;
	uint64_t ip;

	for (int i = 0; i < nr; i++)
		if (ends_in_colon(tok[i]))
			at = i + 1;
	if (at == nr) {
		st->want_leaf = true;
		return 0;
	}
	if (prof_parse_number(tok[at], 16, UINT64_MAX, &ip))
		return 1;	/* an empty branch stack, or not perf's text: perf_read() decides */
	/* the event, unless that field is the time ("10.000250:") */
	if (at && strspn(tok[at - 1], "0123456789.:") != strlen(tok[at - 1]))
		snprintf(p->event, sizeof(p->event), "%.*s", (int)strlen(tok[at - 1]) - 1,
			 tok[at - 1]);
	add_ip(p, st, ip);
	return 0;
}

static int parse_sample(struct prof *p, struct perf_state *st, const char *line)
{
	char copy[4096], *save, *tok[MAX_STACK + 16];
	struct branch b[MAX_STACK];
	size_t nr = 0;
	int nr_tok = 0;
	uint64_t ip;

	snprintf(copy, sizeof(copy), "%s", line);
	if (line[0] == '\t') {	/* a callchain entry: "\tIP SYM (DSO)" */
		char *t = strtok_r(copy, " \t", &save);

		if (!st->want_leaf)
			return 0;	/* a caller */
		st->want_leaf = false;
		if (!t || prof_parse_number(t, 16, UINT64_MAX, &ip))
			return -EINVAL;
		add_ip(p, st, ip);
		return 0;
	}
	for (char *t = strtok_r(copy, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (nr_tok < (int)ARRAY_SIZE(tok))
			tok[nr_tok++] = t;
		if (!is_brstack_entry(t))
			continue;
		if (nr == MAX_STACK || parse_entry(t, &b[nr]))
			return -EINVAL;
		nr++;
	}
	st->want_leaf = false;
	if (!nr)
		return parse_ip_line(p, st, tok, nr_tok);
	st->seen_brstack = true;
	add_sample(p, b, nr);
	return 0;
}

static int not_perf(const struct prof *p, size_t lineno, const char *line)
{
	pr_err(p->path, "line %zu: not perf script -F brstack or -F ip output: %.80s", lineno, line);
	return -EINVAL;
}

static int perf_read(struct prof *p, FILE *f)
{
	struct perf_state st = { .want_leaf = false };
	char line[4096];
	size_t lineno = 0;
	int err;

	while ((err = prof_read_line(p, f, line, sizeof(line), &lineno)) > 0) {
		if (line[0] == '#')
			continue;
		err = strstr(line, "PERF_RECORD_") ? parse_mmap(p, line) :
		      parse_sample(p, &st, line);
		if (err > 0 && !st.first_odd) {
			st.first_odd = lineno;
			snprintf(st.odd_line, sizeof(st.odd_line), "%.80s", line);
		}
		if (err < 0)
			return not_perf(p, lineno, line);
	}
	if (err)
		return err;
	/*
	 * A line with neither entries nor an ip is an empty branch stack in a recording of
	 * branch stacks (any line of it, the first too); in anything else, it is not perf's.
	 */
	if (st.first_odd && !st.seen_brstack)
		return not_perf(p, st.first_odd, st.odd_line);
	/* a recording of ips only: the branch stacks' name otherwise, as before */
	snprintf(p->recorder, sizeof(p->recorder), "%s",
		 st.nr_ips && !st.seen_brstack ? "perf-ip" : "perf-brstack");
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
