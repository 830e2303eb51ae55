// SPDX-License-Identifier: GPL-2.0
/*
 * kmeta dump TABLE FILE: one entry per line, the site as func+0xoff, then each field
 * decoded symbolically (or the table's own notation, such as objtool's for ORC).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "table.h"

static bool entry_selected(struct opts *o, struct kmeta_table *t, const struct kmeta_entry *e)
{
	struct kmeta_sym *func;

	if (e->filler)
		return false;
	if (o->has_addr && (e->site < o->addr_lo || e->site >= o->addr_hi))
		return false;
	if (o->func_glob) {
		func = kmeta_find_func_containing(t->img, e->site);
		if (!func || !glob_match(o->func_glob, func->name))
			return false;
	}
	return true;
}

static void print_text(struct kmeta_table *t, const struct kmeta_entry *e)
{
	const struct layout *l = t->layout;
	char buf[KMETA_ADDR_STR_SIZE];

	printf("%s", kmeta_addr_str(t->img, e->site, buf, sizeof(buf)));
	if (t->nr_ranges > 1 && !t->desc->read)
		printf(" %s", t->ranges[e->range].name);
	if (t->desc->format_entry) {
		t->desc->format_entry(t, e, buf, sizeof(buf));
		printf(" %s\n", buf);
		return;
	}
	for (unsigned int i = 0; i < TABLE_MAX_FIELDS && l->fields[i].name; i++) {
		if (l->fields[i].role == FR_SITE)
			continue;
		kmeta_table_format_field(t, e, i, buf, sizeof(buf));
		printf(" %s=%s", l->fields[i].name, buf);
	}
	putchar('\n');
}

static void print_json(struct json *j, struct kmeta_table *t, const struct kmeta_entry *e)
{
	const struct layout *l = t->layout;
	char buf[KMETA_ADDR_STR_SIZE];

	json_obj_open(j);
	json_member_u64(j, "index", e->idx);
	json_member_str(j, "site", kmeta_addr_str(t->img, e->site, buf, sizeof(buf)));
	json_member_hex(j, "site_addr", e->site);
	if (t->nr_ranges > 1 && !t->desc->read) {
		json_member_str(j, "range", t->ranges[e->range].name);
	}
	for (unsigned int i = 0; i < TABLE_MAX_FIELDS && l->fields[i].name; i++) {
		const struct field *f = &l->fields[i];

		if (f->role == FR_SITE)
			continue;
		kmeta_table_format_field(t, e, i, buf, sizeof(buf));
		json_member_str(j, f->name, buf);
		if (f->role == FR_CODE || f->role == FR_DATA) {
			char key[64];

			snprintf(key, sizeof(key), "%s_addr", f->name);
			json_member_hex(j, key, e->val[i]);
		} else {
			char key[64];

			snprintf(key, sizeof(key), "%s_raw", f->name);
			json_member_s64(j, key, (int64_t)e->raw[i]);
		}
	}
	json_obj_close(j);
}

static int dump_table(struct opts *o, struct kmeta_table *t)
{
	struct kmeta_entry e;

	if (o->json) {
		json_obj_open(&o->json_out);
		json_member_str(&o->json_out, "table", t->desc->name);
		json_member_str(&o->json_out, "layout", t->present ? t->layout->name : "");
		json_key(&o->json_out, "entries");
		json_arr_open(&o->json_out);
	}
	for (size_t i = 0; t->present && i < t->nr_slots; i++) {
		int err = kmeta_table_read_entry(t, i, &e);

		if (err)
			return err;
		if (!entry_selected(o, t, &e))
			continue;
		if (o->json)
			print_json(&o->json_out, t, &e);
		else
			print_text(t, &e);
	}
	if (o->json) {
		json_arr_close(&o->json_out);
		json_obj_close(&o->json_out);
		json_end(&o->json_out);
	}
	return 0;
}

int cmd_dump(struct opts *o)
{
	const struct table_desc *d = kmeta_table_find_desc(o->args[0]);
	struct kmeta_image *img;
	struct kmeta_table *t;
	int err;

	if (!d) {
		pr_err(NULL, "unknown table '%s'; 'kmeta --help' lists them", o->args[0]);
		return 2;
	}
	o->args++;
	o->nr_args--;
	img = cmd_open_image(o, 0);
	if (!img)
		return 1;
	t = kmeta_table_get(img, d);
	err = t ? dump_table(o, t) : -1;
	if (t && !t->present && !o->json)
		pr_info(img->path, "%s: no such table in this image", d->name);
	kmeta_close(img);
	return err ? 1 : 0;
}
