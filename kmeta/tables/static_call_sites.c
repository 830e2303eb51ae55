// SPDX-License-Identifier: GPL-2.0
/*
 * static_call_sites: struct static_call_site (include/linux/static_call_types.h): s32 ->
 * call site, s32 -> key (__SCK__name), key bit 0 = tail call, bit 1 = init section.
 * static_call_init() validates every site at boot (arch/x86/kernel/static_call.c,
 * __static_call_validate()): a call must be e8 or a nop5, a tail call e9, c3 or a Jcc32,
 * else BUG.  In the file, sites branch to the trampoline __SCT__name of their key.
 */
#include <string.h>

#include "../table.h"

enum { SC_ADDR, SC_KEY };

#define STATIC_CALL_SITE_TAIL 1

static const struct layout static_call_sites_layouts[] = {
	{ .name = "relative", .entry_size = 8, .fields = {
		{ "addr", NULL, 0, FK_PCREL32, FR_SITE, 0 },
		{ "key", NULL, 4, FK_PCREL32, FR_DATA, 2 },
	} },
};

static const unsigned char nop5[] = { 0x0f, 0x1f, 0x44, 0x00, 0x00 };

/*
 * The key names the static call: __SCK__name, or in a module whose key is not exported
 * the trampoline __SCT__name itself (static_call_add_module() in
 * kernel/static_call_inline.c looks the key up from it).
 */
static void check_trampoline(struct kmeta_table *t, const struct kmeta_entry *e,
			     uint64_t target, struct check_ctx *c)
{
	const char *key = sym_name_at(t->img, e->val[SC_KEY]);
	const char *tramp = sym_name_at(t->img, target);

	if (!key || (strncmp(key, "__SCK__", 7) && strncmp(key, "__SCT__", 7)))
		check_report(c, e->site, "key is not a static call key (__SCK__*) or trampoline");
	else if (!tramp || strncmp(tramp, "__SCT__", 7) || strcmp(tramp + 7, key + 7))
		check_report(c, e->site, "branches to %s, not to the trampoline __SCT__%s",
			     tramp ? tramp : "a place with no symbol", key + 7);
}

static void static_call_sites_check(struct kmeta_table *t, const struct kmeta_entry *e,
				    struct check_ctx *c)
{
	bool tail = e->flags[SC_KEY] & STATIC_CALL_SITE_TAIL;
	const unsigned char *p = kmeta_bytes_at(t->img, e->site, 5);
	struct rel32_branch b;

	if (!check_site_is_code(c, e->site, "static call") ||
	    !check_insn_boundary(c, e->site, "static call"))
		return;
	if (p && !tail && !memcmp(p, nop5, 5))
		return;
	if (p && tail && p[0] == 0xc3)
		return;
	if (!read_rel32_branch(t->img, e->site, &b) || b.prefixed ||
	    (!tail && b.opcode != 0xe8) || (tail && b.opcode == 0xe8)) {
		check_report(c, e->site, tail ? "tail static call is not jmp, ret or jcc32" :
			     "static call is neither a direct call nor a nop5");
		return;
	}
	check_trampoline(t, e, b.target, c);
}

const struct table_desc static_call_sites_table = {
	.name = "static_call_sites",
	.start_sym = "__start_static_call_sites",
	.stop_sym = "__stop_static_call_sites",
	.sec_name = ".static_call_sites",
	.btf_struct = "static_call_site",
	.layouts = static_call_sites_layouts,
	.nr_layouts = ARRAY_SIZE(static_call_sites_layouts),
	.check = static_call_sites_check,
	.rewrite = { TR_PATCHED_POINT },
};
