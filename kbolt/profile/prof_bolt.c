// SPDX-License-Identifier: GPL-2.0
/*
 * BOLT's pre-aggregated profile (llvm-bolt's DataAggregator, "perf2bolt -pa"), so that
 * one profile feeds kbolt and llvm-bolt (Documentation/profile-format.rst):
 *
 *   B FROM TO COUNT MISPREDS   a taken branch
 *   F START END COUNT          straight-line execution from START to END, both
 *   f START END COUNT          instruction addresses; f: entered from outside
 *   E EVENT                    the perf event's name (BOLT 20 and later), ignored
 *
 * Addresses are hexadecimal without "0x", counts decimal, fields separated by spaces;
 * BOLT also takes BUILDID:OFFSET locations for shared objects, which we refuse: a kernel
 * profile is in addresses.  The format has no header, so no build-id and no release:
 * profile_match() checks that the addresses land on the kernel's instructions instead.
 * B records carry no kind (PK_BRANCH); F and f records are PK_FALLTHROUGH ranges.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "profile.h"

#define MAX_FIELDS 6

static bool bolt_probe(const char *first_line)
{
	const char *s = first_line + strspn(first_line, " ");

	return s[0] && strchr("BFfE", s[0]) && s[1] == ' ';
}

/* BOLT's counts are int64 */
static int parse_count(const char *s, uint64_t *v)
{
	return prof_parse_number(s, 10, INT64_MAX, v);
}

static int parse_addr(const char *s, uint64_t *addr)
{
	return strchr(s, ':') ? -EXDEV : prof_parse_number(s, 16, UINT64_MAX, addr);
}

/* One record, split into fields; 0, -EXDEV for a BUILDID:OFFSET location, -EINVAL */
static int parse_record(struct prof *p, char **field, int nr)
{
	uint64_t from, to, count, mispreds;
	int err;

	if (!strcmp(field[0], "E"))
		return nr == 2 ? 0 : -EINVAL;
	if (nr != (field[0][0] == 'B' ? 5 : 4))
		return -EINVAL;
	err = parse_addr(field[1], &from);
	if (!err)
		err = parse_addr(field[2], &to);
	if (err)
		return err;
	if (parse_count(field[3], &count) || (nr == 5 && parse_count(field[4], &mispreds)))
		return -EINVAL;
	prof_add_edge(p, from, to, count, field[0][0] == 'B' ? PK_BRANCH : PK_FALLTHROUGH);
	return 0;
}

static const char *record_syntax(const char *type)
{
	if (!strcmp(type, "B"))
		return "malformed: want B FROM TO COUNT MISPREDS";
	if (!strcmp(type, "F") || !strcmp(type, "f"))
		return "malformed: want F|f START END COUNT";
	if (!strcmp(type, "E"))
		return "malformed: want E EVENT";
	return "not a B, F, f or E record";
}

static int bolt_read(struct prof *p, FILE *f)
{
	char line[512], copy[512], *field[MAX_FIELDS];
	size_t lineno = 0;
	int err, nr;

	while ((err = prof_read_line(p, f, line, sizeof(line), &lineno)) > 0) {
		const char *why;

		memcpy(copy, line, sizeof(copy));
		nr = prof_split_fields(copy, " ", field, MAX_FIELDS);
		/* BOLT takes no trailing blank: "expected end of line" */
		if (nr > 0 && line[strlen(line) - 1] != ' ') {
			err = parse_record(p, field, nr);
			if (!err)
				continue;
		}
		if (err == -EXDEV)
			why = "a BUILDID:OFFSET location (kbolt reads kernel addresses only)";
		else
			why = record_syntax(nr > 0 ? field[0] : "");
		pr_err(p->path, "line %zu: %s: %s", lineno, why, line);
		return -EINVAL;
	}
	return err;
}

/*
 * Interrupts and exceptions are left out: they are no transfer the code makes, and
 * BOLT would take them for branches of the instruction they interrupted.  Samples too:
 * LLVM 19's pre-aggregated format has no record for them.
 */
static bool is_written(const struct prof_edge *e)
{
	return e->kind != PK_INT && e->kind != PK_SAMPLE;
}

int prof_check_bolt(const struct prof *p)
{
	if (prof_need_addresses(p))
		return -EINVAL;
	for (size_t i = 0; i < p->nr_edges; i++) {
		if (p->edges[i].count > INT64_MAX && is_written(&p->edges[i])) {
			pr_err(p->path, "a count of %llu, above BOLT's limit of 2^63 - 1: "
			       "BOLT would not read it", (unsigned long long)p->edges[i].count);
			return -EOVERFLOW;
		}
	}
	return 0;
}

size_t prof_write_bolt(const struct prof *p, FILE *f)
{
	size_t nr = 0;

	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_edge *e = &p->edges[i];

		if (!is_written(e))
			continue;
		/* the plugin counts no mispredictions: B records say 0 */
		fprintf(f, "%c %" PRIx64 " %" PRIx64 " %" PRIu64 "%s\n",
			e->kind == PK_FALLTHROUGH ? 'F' : 'B', e->from, e->to, e->count,
			e->kind == PK_FALLTHROUGH ? "" : " 0");
		nr++;
	}
	return nr;
}

const struct prof_format prof_format_bolt = {
	.name = "bolt",
	.probe = bolt_probe,
	.read = bolt_read,
};
