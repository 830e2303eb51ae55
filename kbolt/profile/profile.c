// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a profile: pick the format by its first line, let the format's reader fill
 * the edge list.  The text formats are one item a line, read by prof_read_line();
 * BOLT's YAML is parsed by libyaml (prof_yaml.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "profile.h"

static const struct prof_format *const formats[] = {
	&prof_format_kbolt,
	&prof_format_portable,
	&prof_format_bolt,	/* after kbolt's: a kbolt profile starts with its header */
	&prof_format_fdata,
	&prof_format_yaml,	/* "---": no other format starts so */
	&prof_format_perf,	/* last: its samples have no marker of their own */
};

static const char *const kind_names[PK_NR] = {
	"ft", "jcc", "jmp", "call", "ret", "ijmp", "icall", "int", "other", "branch", "sample",
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

static uint32_t hash_name(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* The index of name in p->names, added if new (an open-addressing table, half full) */
static uint32_t intern_name(struct prof *p, const char *name)
{
	size_t mask, i;

	if (2 * (p->nr_names + 1) > p->name_hash_size) {
		size_t size = p->name_hash_size ? 2 * p->name_hash_size : 1024;

		free(p->name_hash);
		p->name_hash = xcalloc(size, sizeof(*p->name_hash));
		p->name_hash_size = size;
		for (size_t k = 0; k < p->nr_names; k++) {
			for (i = hash_name(p->names[k]) & (size - 1); p->name_hash[i];
			     i = (i + 1) & (size - 1))
				;
			p->name_hash[i] = k + 1;
		}
	}
	mask = p->name_hash_size - 1;
	for (i = hash_name(name) & mask; p->name_hash[i]; i = (i + 1) & mask)
		if (!strcmp(p->names[p->name_hash[i] - 1], name))
			return p->name_hash[i] - 1;
	GROW(p->names, p->names_cap, p->nr_names + 1);
	p->names[p->nr_names] = xstrdup(name);
	p->name_hash[i] = ++p->nr_names;
	return p->nr_names - 1;
}

void prof_add_symbolic(struct prof *p, const char *from, uint64_t from_off, const char *to,
		       uint64_t to_off, uint64_t count, unsigned int kind, size_t lineno)
{
	GROW(p->symlocs, p->symlocs_cap, p->nr_edges + 1);
	p->symlocs[p->nr_edges] = (struct prof_symloc){
		intern_name(p, from), intern_name(p, to), from_off, to_off, lineno
	};
	prof_add_edge(p, 0, 0, count, kind);
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

int prof_need_addresses(const struct prof *p)
{
	if (prof_is_symbolic(p)) {
		pr_err(p->path, "its records name functions (BOLT's %s), not addresses: only "
		       "the commands that read the vmlinux (check-profile, optimize, heatmap) use it",
		       p->yaml ? "YAML" : "fdata");
		return -EINVAL;
	}
	if (p->need_match) {
		pr_err(p->path, "a portable profile has no addresses until matched onto a vmlinux: "
		       "give it to optimize or check-profile, or use the address profile it was "
		       "made from");
		return -EINVAL;
	}
	return 0;
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


void prof_free(struct prof *p)
{
	if (!p)
		return;
	if (p->fmt && p->fmt->release)
		p->fmt->release(p);
	free(p->edges);
	free(p->symlocs);
	for (size_t i = 0; i < p->nr_names; i++)
		free(p->names[i]);
	free(p->names);
	free(p->name_hash);
	free(p->path);
	free(p);
}
