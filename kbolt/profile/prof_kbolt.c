// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt's own profile format (Documentation/profile-format.rst), as the QEMU plugin
 * (record/qemu_plugin.c) writes it:
 *
 *   # comment
 *   kbolt-profile 1
 *   build-id HEX | -
 *   release RELEASE | -
 *   recorder NAME
 *   text ADDR                 optional: where _text ran (the addresses are of that run)
 *   event NAME                optional: the perf event sampled (cpu-clock, cycles, ...)
 *   dropped N                 optional: samples or branches left out (not the kernel's)
 *   B FROM TO COUNT KIND      taken transfer, hex addresses, decimal count,
 *                             KIND jcc|jmp|call|ret|ijmp|icall|int|other|branch
 *   F FROM TO COUNT           fall-through from the instruction at FROM to TO
 *   S ADDR COUNT              the instruction at ADDR sampled COUNT times (kbolt record)
 *
 * Every line ends in a newline: a last line without one is a truncated file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "profile.h"

static bool kbolt_probe(const char *first_line)
{
	return !strncmp(first_line, "# kbolt profile", 15) || !strncmp(first_line, "kbolt-profile ", 14);
}

#define MAX_FIELDS 6
#define BLANKS " \t"

/* An address: hex digits, 1 to 16 of them, after an optional 0x */
static int parse_addr(const char *s, uint64_t *v)
{
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	return prof_parse_number(s, 16, UINT64_MAX, v);
}

static int parse_header(struct prof *p, const char *line)
{
	char key[32], val[64];

	if (sscanf(line, "%31s %63s", key, val) != 2)
		return -EINVAL;
	if (!strcmp(key, "kbolt-profile"))
		return strcmp(val, "1") ? -EPROTO : 0;
	if (!strcmp(key, "build-id"))
		snprintf(p->build_id, sizeof(p->build_id), "%s", strcmp(val, "-") ? val : "");
	else if (!strcmp(key, "release"))
		snprintf(p->release, sizeof(p->release), "%s", strcmp(val, "-") ? val : "");
	else if (!strcmp(key, "recorder"))
		snprintf(p->recorder, sizeof(p->recorder), "%s", val);
	else if (!strcmp(key, "event"))
		snprintf(p->event, sizeof(p->event), "%s", val);
	else if (!strcmp(key, "text"))	/* where _text ran, the addresses being of that run */
		return parse_addr(val, &p->text_runtime);
	else if (!strcmp(key, "dropped"))
		return prof_parse_number(val, 10, UINT64_MAX, &p->nr_dropped);
	else
		return -EINVAL;
	return 0;
}

/* "S ADDR COUNT": a sample, kept as a PK_SAMPLE edge from ADDR to itself */
static int parse_sample(struct prof *p, char **field, int nr)
{
	uint64_t addr, count;

	if (nr != 3 || parse_addr(field[1], &addr) ||
	    prof_parse_number(field[2], 10, UINT64_MAX, &count))
		return -EINVAL;
	prof_add_edge(p, addr, addr, count, PK_SAMPLE);
	return 0;
}

/*
 * "B FROM TO COUNT KIND", "F FROM TO COUNT" or "S ADDR COUNT", fields separated by
 * blanks: split first, so that a sign, a missing blank or a word too many is an
 * error, not a number scanf() would make of it
 */
static int parse_record(struct prof *p, const char *line)
{
	char copy[512], *field[MAX_FIELDS];
	uint64_t from, to, count;
	int nr, k;

	snprintf(copy, sizeof(copy), "%s", line);
	nr = prof_split_fields(copy, BLANKS, field, MAX_FIELDS);
	if (nr < 1 || strlen(field[0]) != 1)
		return -EINVAL;
	if (field[0][0] == 'S')
		return parse_sample(p, field, nr);
	if (nr < 4 || nr != (field[0][0] == 'B' ? 5 : 4) ||
	    parse_addr(field[1], &from) || parse_addr(field[2], &to) ||
	    prof_parse_number(field[3], 10, UINT64_MAX, &count))
		return -EINVAL;
	if (field[0][0] == 'F') {
		prof_add_edge(p, from, to, count, PK_FALLTHROUGH);
		return 0;
	}
	k = prof_kind_from_name(field[4]);
	if (k <= PK_FALLTHROUGH || k == PK_SAMPLE)
		return -EINVAL;
	prof_add_edge(p, from, to, count, k);
	return 0;
}

static int kbolt_read(struct prof *p, FILE *f)
{
	char line[512];
	bool seen_version = false;
	size_t lineno = 0;
	int err;

	while ((err = prof_read_line(p, f, line, sizeof(line), &lineno)) > 0) {
		if (line[0] == '#' || line[0] == '\0')
			continue;
		if (line[0] == 'B' || line[0] == 'F' || line[0] == 'S')
			err = seen_version ? parse_record(p, line) : -EINVAL;
		else
			err = parse_header(p, line);
		if (!err && !strncmp(line, "kbolt-profile", 13))
			seen_version = true;
		if (err) {
			pr_err(p->path, "line %zu: %s: %s", lineno,
			       err == -EPROTO ? "unsupported format version" : "malformed", line);
			return err;
		}
	}
	if (err)
		return err;
	if (!seen_version) {
		pr_err(p->path, "no 'kbolt-profile 1' line: not a kbolt profile");
		return -EINVAL;
	}
	return 0;
}

void prof_write_kbolt(const struct prof *p, FILE *f)
{
	fprintf(f, "# kbolt profile\nkbolt-profile 1\nbuild-id %s\nrelease %s\nrecorder %s\n",
		prof_or_dash(p->build_id), prof_or_dash(p->release), prof_or_dash(p->recorder));
	if (p->event[0])
		fprintf(f, "event %s\n", p->event);
	if (p->text_runtime)
		fprintf(f, "text %" PRIx64 "\n", p->text_runtime);
	if (p->nr_dropped)
		fprintf(f, "dropped %" PRIu64 "\n", p->nr_dropped);
	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_edge *e = &p->edges[i];

		if (e->kind == PK_SAMPLE)
			fprintf(f, "S %" PRIx64 " %" PRIu64 "\n", e->from, e->count);
		else if (e->kind == PK_FALLTHROUGH)
			fprintf(f, "F %" PRIx64 " %" PRIx64 " %" PRIu64 "\n", e->from, e->to, e->count);
		else
			fprintf(f, "B %" PRIx64 " %" PRIx64 " %" PRIu64 " %s\n", e->from, e->to,
				e->count, prof_kind_name(e->kind));
	}
}

const struct prof_format prof_format_kbolt = {
	.name = "kbolt",
	.probe = kbolt_probe,
	.read = kbolt_read,
};
