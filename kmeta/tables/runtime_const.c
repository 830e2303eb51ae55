// SPDX-License-Identifier: GPL-2.0
/*
 * Runtime constants (6.11+, arch/x86/include/asm/runtime-const.h): for each constant a
 * section runtime_ptr_<sym> or runtime_shift_<sym>, bounded by __start_/__stop_ symbols,
 * of s32 pointers to the immediate field inside an instruction: the imm64 of
 * "movabs $0x0123456789abcdef, %reg" or the imm8 of "shrl $12, %reg".  At boot
 * runtime_const_init() writes the value there blindly, so the field must move with its
 * instruction.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "../table.h"

DEFINE_SITE_LIST_LAYOUT(runtime_const_layouts);

#define PTR_PLACEHOLDER 0x0123456789abcdefULL
#define SHIFT_PLACEHOLDER 12

static int cmp_range(const void *a, const void *b)
{
	const struct table_range *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int runtime_const_locate(struct kmeta_table *t)
{
	struct kmeta_image *img = t->img;

	if (img->is_module)	/* runtime-const.h: #error for modules */
		return 0;
	for (size_t i = 1; i < img->nr_syms; i++) {
		const char *name = img->syms[i].name;
		struct kmeta_sym *stop;
		char *stop_name;
		int err;

		if (strncmp(name, "__start_runtime_ptr_", 20) &&
		    strncmp(name, "__start_runtime_shift_", 22))
			continue;
		stop_name = xasprintf("__stop_%s", name + 8);
		stop = kmeta_find_sym_by_name(img, stop_name);
		free(stop_name);
		if (!stop) {
			pr_err(img->path, "runtime_const: %s has no __stop_ symbol", name);
			return -EINVAL;
		}
		err = table_add_range(t, img->syms[i].addr, stop->addr, name + 8);
		if (err)
			return err;
	}
	sort_array(t->ranges, t->nr_ranges, sizeof(*t->ranges), cmp_range);
	return 0;
}

static bool runtime_const_probe(struct kmeta_table *t)
{
	struct kmeta_image *img = t->img;

	for (size_t i = 1; !img->is_module && i < img->nr_syms; i++)
		if (!strncmp(img->syms[i].name, "__start_runtime_", 16))
			return true;
	return false;
}

static bool is_shift(const struct kmeta_table *t, const struct kmeta_entry *e)
{
	return !strncmp(t->ranges[e->range].name, "runtime_shift_", 14);
}

static void runtime_const_check(struct kmeta_table *t, const struct kmeta_entry *e,
				struct check_ctx *c)
{
	const unsigned char *p;

	if (!check_site_is_code(c, e->site, "runtime constant"))
		return;
	if (is_shift(t, e)) {
		/* shrl $imm8, %r32: c1 /5 ib, with an optional REX prefix */
		p = kmeta_bytes_at(t->img, e->site - 3, 4);
		if (!p || p[3] != SHIFT_PLACEHOLDER || !((p[0] == 0xc1 && (p[1] & 0x38) == 0x28) ||
							  (p[1] == 0xc1 && (p[2] & 0x38) == 0x28)))
			check_report(c, e->site, "expected the imm8 (12) of shrl $12, %%reg");
		return;
	}
	/* movabs $imm64, %reg: REX.W b8+r imm64 */
	p = kmeta_bytes_at(t->img, e->site - 2, 10);
	if (!p || (p[0] & 0xf8) != 0x48 || (p[1] & 0xf8) != 0xb8 ||
	    get_u64(p + 2) != PTR_PLACEHOLDER)
		check_report(c, e->site, "expected the imm64 (0x0123456789abcdef) of movabs");
	else
		check_insn_boundary(c, e->site - 2, "runtime constant's movabs");
}

const struct table_desc runtime_const_table = {
	.name = "runtime_const",
	.layouts = runtime_const_layouts,
	.nr_layouts = 1,
	.probe = runtime_const_probe,
	.locate = runtime_const_locate,
	.check = runtime_const_check,
	.rewrite = { TR_SITE_IN_INSN },
};
