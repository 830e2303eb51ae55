// SPDX-License-Identifier: GPL-2.0
/*
 * kmeta summary: per table, its layout, slots, real entries, filler slots, and where the
 * entries' sites are (.text, .init.text, elsewhere).
 */
#include <stdio.h>
#include <string.h>

#include "cmd.h"
#include "table.h"

struct table_counts {
	size_t entries, filler, text, init_text, other;
};

static int count_table(struct kmeta_table *t, struct table_counts *n)
{
	struct kmeta_entry e;

	memset(n, 0, sizeof(*n));
	for (size_t i = 0; t->present && i < t->nr_slots; i++) {
		const char *area;
		int err = kmeta_table_read_entry(t, i, &e);

		if (err)
			return err;
		if (e.filler) {
			n->filler++;
			continue;
		}
		n->entries++;
		area = kmeta_table_site_area(t, e.site);
		if (!strcmp(area, ".text"))
			n->text++;
		else if (!strcmp(area, ".init.text"))
			n->init_text++;
		else
			n->other++;
	}
	return 0;
}

static void print_json_table(struct json *j, struct kmeta_table *t, struct table_counts *n)
{
	json_key(j, t->desc->name);
	json_obj_open(j);
	json_member_bool(j, "present", t->present);
	json_member_str(j, "layout", t->present ? t->layout->name : "");
	json_member_u64(j, "slots", t->nr_slots);
	json_member_u64(j, "entries", n->entries);
	json_member_u64(j, "filler", n->filler);
	json_member_u64(j, "text", n->text);
	json_member_u64(j, "init_text", n->init_text);
	json_member_u64(j, "other", n->other);
	json_obj_close(j);
}

static void print_header(struct opts *o, struct kmeta_image *img)
{
	if (o->json) {
		json_obj_open(&o->json_out);
		json_member_str(&o->json_out, "file", img->path);
		json_member_str(&o->json_out, "kind", img->is_module ? "module" : "vmlinux");
		json_member_str(&o->json_out, "release", img->release);
		json_key(&o->json_out, "tables");
		json_obj_open(&o->json_out);
		return;
	}
	printf("%s: %s, release %s\n", img->path, img->is_module ? "module" : "vmlinux",
	       img->release[0] ? img->release : "unknown");
	printf("%-18s %-7s %9s %9s %7s %9s %10s %7s\n", "table", "layout", "slots", "entries",
	       "filler", ".text", ".init.text", "other");
}

int cmd_summary(struct opts *o)
{
	struct kmeta_image *img = cmd_open_tables(o, 0);
	int err = 0;

	if (!img)
		return 1;
	print_header(o, img);
	for (unsigned int i = 0; i < kmeta_nr_table_descs; i++) {
		struct kmeta_table *t = kmeta_table_get(img, kmeta_table_descs[i]);
		struct table_counts n;

		if (!t || count_table(t, &n)) {
			err = 1;
			break;
		}
		if (o->json)
			print_json_table(&o->json_out, t, &n);
		else if (!t->present)
			printf("%-18s %-7s %9s\n", t->desc->name, "-", "absent");
		else
			printf("%-18s %-7s %9zu %9zu %7zu %9zu %10zu %7zu\n", t->desc->name,
			       t->layout->name, t->nr_slots, n.entries, n.filler, n.text,
			       n.init_text, n.other);
	}
	if (o->json && !err) {
		json_obj_close(&o->json_out);
		json_obj_close(&o->json_out);
		json_end(&o->json_out);
	}
	kmeta_close(img);
	return err;
}
