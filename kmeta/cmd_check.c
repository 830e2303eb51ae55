// SPDX-License-Identifier: GPL-2.0
/*
 * kmeta check FILE: every entry of every table against the bytes it points to; each
 * violation is one line "FILE: table: func+0xoff: message".  Exit 1 on any.
 */
#include <stdio.h>

#include "check.h"
#include "cmd.h"

struct check_out {
	struct opts *o;
	size_t nr_entries;
};

static void report(struct check_ctx *c, uint64_t addr, const char *msg)
{
	struct check_out *out = c->priv;
	struct kmeta_image *img = c->t->img;
	char where[KMETA_ADDR_STR_SIZE];

	kmeta_addr_str(img, addr, where, sizeof(where));
	if (!out->o->json) {
		printf("%s: %s: %s: %s (entry %zu)\n", img->path, c->t->desc->name, where, msg,
		       c->e ? c->e->idx : 0);
		return;
	}
	json_obj_open(&out->o->json_out);
	json_member_str(&out->o->json_out, "table", c->t->desc->name);
	json_member_u64(&out->o->json_out, "entry", c->e ? c->e->idx : 0);
	json_member_str(&out->o->json_out, "site", where);
	json_member_hex(&out->o->json_out, "site_addr", addr);
	json_member_str(&out->o->json_out, "message", msg);
	json_obj_close(&out->o->json_out);
}

int cmd_check(struct opts *o)
{
	struct kmeta_image *img = cmd_open_tables(o, 0);
	struct check_out out = { .o = o };
	struct check_ctx c = { .report = report, .priv = &out };
	int err = 0;

	if (!img)
		return 1;
	if (o->json) {
		json_obj_open(&o->json_out);
		json_member_str(&o->json_out, "file", img->path);
		json_key(&o->json_out, "violations");
		json_arr_open(&o->json_out);
	}
	for (unsigned int i = 0; i < kmeta_nr_table_descs && !err; i++) {
		struct kmeta_table *t = kmeta_table_get(img, kmeta_table_descs[i]);
		size_t before = c.nr_violations;

		err = t ? kmeta_check_table(&c, t) : -1;
		if (t && o->verbose && !o->json)
			pr_info(img->path, "%s: %zu slots checked, %zu violations", t->desc->name,
				t->nr_slots, c.nr_violations - before);
	}
	if (o->json) {
		json_arr_close(&o->json_out);
		json_member_u64(&o->json_out, "nr_violations", c.nr_violations);
		json_obj_close(&o->json_out);
		json_end(&o->json_out);
	} else if (!err) {
		pr_info(img->path, "%zu violation%s", c.nr_violations,
			c.nr_violations == 1 ? "" : "s");
	}
	kmeta_close(img);
	return err || c.nr_violations ? 1 : 0;
}
