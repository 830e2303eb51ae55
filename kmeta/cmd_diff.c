// SPDX-License-Identifier: GPL-2.0
/*
 * kmeta diff A B: per table, the entries of A that B lacks ("-") and those of B that A
 * lacks ("+").  Entries compare by their symbolic text (site as func+0xoff and every
 * field), as multisets: kbolt re-sorts tables, so slot order is not a difference.
 * Exit 1 when the images differ, like diff(1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "table.h"

struct lines {
	char **v;
	size_t nr, cap;
};

static char *entry_text(struct kmeta_table *t, const struct kmeta_entry *e)
{
	const struct layout *l = t->layout;
	char buf[KMETA_ADDR_STR_SIZE], *s;
	size_t len, cap = 512;

	s = xmalloc(cap);
	kmeta_addr_str(t->img, e->site, s, cap);
	len = strlen(s);
	for (unsigned int i = 0; i < TABLE_MAX_FIELDS && l->fields[i].name; i++) {
		if (l->fields[i].role == FR_SITE)
			continue;
		kmeta_table_format_field(t, e, i, buf, sizeof(buf));
		len += snprintf(s + len, cap > len ? cap - len : 0, " %s=%s", l->fields[i].name, buf);
		if (len >= cap)
			break;
	}
	return s;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char * const *)a, *(char * const *)b);
}

static int collect(struct kmeta_table *t, struct lines *out)
{
	struct kmeta_entry e;

	for (size_t i = 0; t && t->present && i < t->nr_slots; i++) {
		int err = kmeta_table_read_entry(t, i, &e);

		if (err)
			return err;
		if (e.filler)
			continue;
		GROW(out->v, out->cap, out->nr + 1);
		out->v[out->nr++] = entry_text(t, &e);
	}
	sort_array(out->v, out->nr, sizeof(*out->v), cmp_str);
	return 0;
}

static void free_lines(struct lines *l)
{
	for (size_t i = 0; i < l->nr; i++)
		free(l->v[i]);
	free(l->v);
}

static void emit(struct opts *o, const char *table, char sign, const char *line)
{
	if (o->json)
		json_str(&o->json_out, line);
	else
		printf("%s: %c %s\n", table, sign, line);
}

/* Print a \ b with sign; returns how many */
static size_t print_missing(struct opts *o, const char *table, char sign, struct lines *a,
			    struct lines *b)
{
	size_t i = 0, k = 0, n = 0;

	while (i < a->nr) {
		int c = k < b->nr ? strcmp(a->v[i], b->v[k]) : -1;

		if (c < 0) {
			emit(o, table, sign, a->v[i++]);
			n++;
		} else if (c > 0) {
			k++;
		} else {
			i++;
			k++;
		}
	}
	return n;
}

static size_t diff_table(struct opts *o, const char *name, struct lines *a, struct lines *b)
{
	size_t n;

	if (o->json) {
		json_key(&o->json_out, name);
		json_obj_open(&o->json_out);
		json_key(&o->json_out, "removed");
		json_arr_open(&o->json_out);
	}
	n = print_missing(o, name, '-', a, b);
	if (o->json) {
		json_arr_close(&o->json_out);
		json_key(&o->json_out, "added");
		json_arr_open(&o->json_out);
	}
	n += print_missing(o, name, '+', b, a);
	if (o->json) {
		json_arr_close(&o->json_out);
		json_obj_close(&o->json_out);
	}
	return n;
}

static int diff_images(struct opts *o, struct kmeta_image *a, struct kmeta_image *b,
		       size_t *nr_diff)
{
	for (unsigned int i = 0; i < kmeta_nr_table_descs; i++) {
		struct kmeta_table *ta = kmeta_table_get(a, kmeta_table_descs[i]);
		struct kmeta_table *tb = kmeta_table_get(b, kmeta_table_descs[i]);
		struct lines la = { 0 }, lb = { 0 };
		int err;

		if (!ta || !tb)
			return -EINVAL;
		err = collect(ta, &la);
		if (!err)
			err = collect(tb, &lb);
		if (!err)
			*nr_diff += diff_table(o, kmeta_table_descs[i]->name, &la, &lb);
		free_lines(&la);
		free_lines(&lb);
		if (err)
			return err;
	}
	return 0;
}

int cmd_diff(struct opts *o)
{
	struct kmeta_image *a = cmd_open_image(o, 0), *b = a ? cmd_open_image(o, 1) : NULL;
	size_t nr_diff = 0;
	int err;

	if (!a || !b) {
		kmeta_close(a);
		return 1;
	}
	for (unsigned int i = 0; i < kmeta_nr_table_descs; i++) {
		if (!kmeta_table_get(a, kmeta_table_descs[i]) || !kmeta_table_get(b, kmeta_table_descs[i])) {
			kmeta_close(a);
			kmeta_close(b);
			return 1;
		}
	}
	if (strcmp(a->release, b->release))
		pr_warn(b->path, "release %s differs from %s's %s: diff compares images of one "
			"kernel", b->release, a->path, a->release);
	if (o->json) {
		json_obj_open(&o->json_out);
		json_key(&o->json_out, "tables");
		json_obj_open(&o->json_out);
	}
	err = diff_images(o, a, b, &nr_diff);
	if (o->json && !err) {
		json_obj_close(&o->json_out);
		json_member_u64(&o->json_out, "nr_differences", nr_diff);
		json_obj_close(&o->json_out);
		json_end(&o->json_out);
	}
	kmeta_close(a);
	kmeta_close(b);
	return err ? 1 : nr_diff ? 1 : 0;
}
