// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a profile: pick the format by its first line, let the format's reader fill
 * the edge list.  Both formats are text, one item a line, read by prof_read_line().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "portable.h"
#include "profile.h"

static const struct prof_format *const formats[] = {
	&prof_format_kbolt,
	&prof_format_portable,
	&prof_format_bolt,	/* after kbolt's: a kbolt profile starts with its header */
	&prof_format_perf,	/* last: its samples have no marker of their own */
};

static const char *const kind_names[PK_NR] = {
	"ft", "jcc", "jmp", "call", "ret", "ijmp", "icall", "int", "other", "branch",
};

const char *prof_kind_name(unsigned int kind)
{
	return kind < PK_NR ? kind_names[kind] : "?";
}

int prof_kind_from_name(const char *name)
{
	for (int i = 0; i < PK_NR; i++)
		if (!strcmp(kind_names[i], name))
			return i;
	return -EINVAL;
}

void prof_add_edge(struct prof *p, uint64_t from, uint64_t to, uint64_t count, unsigned int kind)
{
	GROW(p->edges, p->cap, p->nr_edges + 1);
	p->edges[p->nr_edges++] = (struct prof_edge){ from, to, count, kind };
}

int prof_read_line(const struct prof *p, FILE *f, char *line, size_t size, size_t *lineno)
{
	size_t len;

	if (!fgets(line, size, f))
		return 0;
	len = strlen(line);
	++*lineno;
	/* a file cut short ends without a newline: the formats have no end marker */
	if (!len || line[len - 1] != '\n') {
		pr_err(p->path, "line %zu: %s", *lineno, len == size - 1 ?
		       "line too long" : "truncated (no newline at the end)");
		return -EINVAL;
	}
	line[len - 1] = '\0';
	return 1;
}

int prof_split_fields(char *line, const char *seps, char **field, int max)
{
	char *save;
	int nr = 0;

	for (char *s = strtok_r(line, seps, &save); s; s = strtok_r(NULL, seps, &save), nr++)
		if (nr < max)
			field[nr] = s;
	return nr;
}

int prof_parse_number(const char *s, unsigned int base, uint64_t max, uint64_t *v)
{
	size_t n = strspn(s, base == 16 ? "0123456789abcdefABCDEF" : "0123456789");

	if (!n || s[n] || n > (base == 16 ? 16 : 20))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, NULL, base);
	return errno || *v > max ? -EINVAL : 0;
}

struct prof *prof_read(const char *path)
{
	struct prof *p;
	char line[512];
	FILE *f = fopen(path, "r");

	if (!f) {
		pr_err(path, "%s", strerror(errno));
		return NULL;
	}
	if (!fgets(line, sizeof(line), f)) {
		pr_err(path, "empty profile");
		fclose(f);
		return NULL;
	}
	rewind(f);
	p = xcalloc(1, sizeof(*p));
	p->path = xstrdup(path);
	for (size_t i = 0; i < ARRAY_SIZE(formats) && !p->fmt; i++)
		if (formats[i]->probe(line))
			p->fmt = formats[i];
	if (!p->fmt) {
		pr_err(path, "not a profile format kbolt reads (see Documentation/profile-format.rst)");
	} else if (!p->fmt->read(p, f)) {
		fclose(f);
		return p;
	}
	fclose(f);
	prof_free(p);
	return NULL;
}

int prof_need_addresses(const struct prof *p)
{
	if (!p->portable || p->portable->matched)
		return 0;
	pr_err(p->path, "a portable profile has no addresses until matched onto a vmlinux: "
	       "give it to optimize or check-profile, or use the address profile it was "
	       "made from");
	return -EINVAL;
}

void prof_free(struct prof *p)
{
	if (!p)
		return;
	portable_free(p->portable);
	free(p->edges);
	free(p->path);
	free(p);
}
