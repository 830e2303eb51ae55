// SPDX-License-Identifier: GPL-2.0
/*
 * Reading a profile: pick the format by its first line, let the format's reader fill
 * the edge list.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../kmeta/util.h"
#include "profile.h"

static const struct prof_format *const formats[] = {
	&prof_format_kbolt,
};

static const char *const kind_names[PK_NR] = {
	"ft", "jcc", "jmp", "call", "ret", "ijmp", "icall", "int", "other",
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
	free(p->edges);
	free(p->path);
	free(p);
}
