// SPDX-License-Identifier: GPL-2.0
/*
 * BOLT's fdata profile (Documentation/profile-format.rst, "BOLT's fdata"), as perf2bolt
 * writes it and llvm-bolt -data reads it (DataReader.cpp in LLVM's bolt/lib/Profile):
 *
 *   1 FUNC OFF 1 FUNC OFF MISPREDS COUNT     a branch or fall-through, offsets in hex
 *   no_lbr [EVENT...]                        first line of a profile of samples:
 *   1 FUNC OFF COUNT                         COUNT samples at FUNC+OFF
 *
 * A location's first field says what names it: 1 a global symbol, 2 a local one (BOLT
 * names local functions NAME/N, see profile_symbols.c), 0 a DSO ("[unknown]": no
 * function).  Lines of memory events (locations of type 3, 4 and 5) are skipped.
 * Records are kept symbolic (prof_add_symbolic()); profile_match() resolves them
 * against the vmlinux, and tells a fall-through from a branch by the instruction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "profile.h"

#define MAX_FIELDS 10
#define NO_LBR "no_lbr"

static bool is_loc_type(const char *s, const char *types)
{
	return s[0] && !s[1] && strchr(types, s[0]);
}

static bool fdata_probe(const char *first_line)
{
	char copy[512], *field[MAX_FIELDS];
	int nr;

	if (!strncmp(first_line, NO_LBR, strlen(NO_LBR)) &&
	    (first_line[strlen(NO_LBR)] == ' ' || first_line[strlen(NO_LBR)] == '\n'))
		return true;
	snprintf(copy, sizeof(copy), "%s", first_line);
	nr = prof_split_fields(copy, " \n", field, MAX_FIELDS);
	return (nr == 8 && is_loc_type(field[0], "012") && is_loc_type(field[3], "012")) ||
	       (nr == 7 && is_loc_type(field[0], "345"));
}

/* "TYPE NAME OFF" at field: the name (NULL for a DSO, no function) and the offset */
static int parse_loc(char **field, const char **name, uint64_t *off)
{
	*name = field[0][0] == '0' ? NULL : field[1];
	return prof_parse_number(field[2], 16, UINT64_MAX, off);
}

static int parse_record(struct prof *p, const char *line, bool no_lbr, size_t lineno)
{
	char copy[512], *field[MAX_FIELDS];
	const char *from, *to;
	uint64_t from_off, to_off, count, mispreds;
	int nr;

	snprintf(copy, sizeof(copy), "%s", line);
	nr = prof_split_fields(copy, " ", field, MAX_FIELDS);

	if (nr == 7 && is_loc_type(field[0], "345"))
		return 0;	/* a memory access (perf2bolt -itrace or mem events): no flow */
	if (no_lbr) {
		if (nr != 4 || !is_loc_type(field[0], "012") || parse_loc(field, &from, &from_off) ||
		    prof_parse_number(field[3], 10, INT64_MAX, &count))
			return -EINVAL;
		if (!from)
			p->nr_dropped += count;
		else
			prof_add_symbolic(p, from, from_off, from, from_off, count, PK_SAMPLE,
					  lineno);
		return 0;
	}
	if (nr != 8 || !is_loc_type(field[0], "012") || !is_loc_type(field[3], "012") ||
	    parse_loc(field, &from, &from_off) || parse_loc(field + 3, &to, &to_off) ||
	    prof_parse_number(field[6], 10, INT64_MAX, &mispreds) ||
	    prof_parse_number(field[7], 10, INT64_MAX, &count))
		return -EINVAL;
	if (!from || !to)
		p->nr_dropped += count;	/* from or to code of no function: user, BPF, ... */
	else
		prof_add_symbolic(p, from, from_off, to, to_off, count, PK_BRANCH, lineno);
	return 0;
}

static int fdata_read(struct prof *p, FILE *f)
{
	char line[512];
	size_t lineno = 0;
	bool no_lbr = false;
	int err;

	snprintf(p->recorder, sizeof(p->recorder), "bolt-fdata");
	while ((err = prof_read_line(p, f, line, sizeof(line), &lineno)) > 0) {
		if (lineno == 1 && !strncmp(line, NO_LBR, strlen(NO_LBR)) &&
		    (!line[strlen(NO_LBR)] || line[strlen(NO_LBR)] == ' ')) {
			no_lbr = true;
			/* the events perf2bolt sampled, as "no_lbr cycles:u:" */
			snprintf(p->event, sizeof(p->event), "%.63s",
				 line[strlen(NO_LBR)] ? line + strlen(NO_LBR) + 1 : "");
			continue;
		}
		if (!strcmp(line, "boltedcollection")) {
			pr_err(p->path, "line %zu: a profile of a binary llvm-bolt rewrote "
			       "(boltedcollection): its offsets are not the input's", lineno);
			return -EINVAL;
		}
		err = parse_record(p, line, no_lbr, lineno);
		if (err) {
			pr_err(p->path, "line %zu: malformed: want %s: %s", lineno, no_lbr ?
			       "TYPE NAME OFF COUNT" : "TYPE NAME OFF TYPE NAME OFF MISPREDS COUNT",
			       line);
			return err;
		}
	}
	return err;
}

const struct prof_format prof_format_fdata = {
	.name = "fdata",
	.probe = fdata_probe,
	.read = fdata_read,
};
