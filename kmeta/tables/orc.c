// SPDX-License-Identifier: GPL-2.0
/*
 * ORC unwind tables: .orc_unwind_ip (s32 -> instruction) and .orc_unwind (struct
 * orc_entry, arch/x86/include/asm/orc_types.h) are parallel arrays; entry i describes the
 * stack from ip[i] up to the next ip.  orc_entry: s16 sp_offset, s16 bp_offset, then
 * bitfields: sp_reg:4 bp_reg:4 and, in 6.1, type:2 end:1 (CALL 0, REGS 1, REGS_PARTIAL 2);
 * in 6.12, type:3 signal:1 (UNDEFINED 0, END_OF_STACK 1, CALL 2, REGS 3, REGS_PARTIAL 4).
 * 6.12 also has .orc_header, a 20-byte hash of the format.  Sorted by ip at build time;
 * the unwinder takes the last entry with ip <= address.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../table.h"

enum { ORC_IP, ORC_SP, ORC_BP, ORC_BITS };

static const struct layout orc_layouts[] = {
	{ .name = "6.1", .min_version = KMETA_VERSION(6, 1), .max_version = KMETA_VERSION(6, 1),
	  .entry_size = 6, .btf_covered = "sp_reg bp_reg type end unused", .fields = {
		{ "ip", "", 0, FK_PCREL32, FR_SITE, 0 },
		{ "sp_offset", NULL, 0, FK_S16, FR_VALUE, 0 },
		{ "bp_offset", NULL, 2, FK_S16, FR_VALUE, 0 },
		{ "bits", "", 4, FK_U16, FR_VALUE, 0 },
	} },
	{ .name = "6.12", .min_version = KMETA_VERSION(6, 12), .max_version = KMETA_VERSION(6, 12),
	  .entry_size = 6, .btf_covered = "sp_reg bp_reg type signal unused", .fields = {
		{ "ip", "", 0, FK_PCREL32, FR_SITE, 0 },
		{ "sp_offset", NULL, 0, FK_S16, FR_VALUE, 0 },
		{ "bp_offset", NULL, 2, FK_S16, FR_VALUE, 0 },
		{ "bits", "", 4, FK_U16, FR_VALUE, 0 },
	} },
};

#define ORC_REG_UNDEFINED 0
#define ORC_REG_BP_INDIRECT 8
#define ORC_REG_SP_INDIRECT 9

struct orc_priv {
	uint64_t ip_start, orc_start;
	const unsigned char *header;	/* 20 bytes, or NULL */
};

static bool is_612(const struct kmeta_table *t)
{
	return !strcmp(t->layout->name, "6.12");
}

static int orc_locate(struct kmeta_table *t)
{
	struct kmeta_image *img = t->img;
	struct kmeta_sec *ip_sec = kmeta_find_sec_by_name(img, ".orc_unwind_ip");
	struct kmeta_sec *orc_sec = kmeta_find_sec_by_name(img, ".orc_unwind");
	struct kmeta_sec *hdr = kmeta_find_sec_by_name(img, ".orc_header");
	struct orc_priv *priv;
	uint64_t nr_ip, nr_orc;

	if (!ip_sec || !orc_sec)
		return 0;
	if (!ip_sec->data || !orc_sec->data || ip_sec->size % 4 || orc_sec->size % 6) {
		pr_err(img->path, "orc: .orc_unwind_ip (%llu bytes) or .orc_unwind (%llu bytes) "
		       "is not a whole number of 4- and 6-byte entries",
		       (unsigned long long)ip_sec->size, (unsigned long long)orc_sec->size);
		return -EINVAL;
	}
	nr_ip = ip_sec->size / 4;
	nr_orc = orc_sec->size / 6;
	if (nr_ip != nr_orc) {
		pr_err(img->path, "orc: %llu ips but %llu unwind entries",
		       (unsigned long long)nr_ip, (unsigned long long)nr_orc);
		return -EINVAL;
	}
	/* orc_read() reads entries by address, like every table */
	if (nr_ip && (!kmeta_bytes_at(img, ip_sec->addr, ip_sec->size) ||
		      !kmeta_bytes_at(img, orc_sec->addr, orc_sec->size))) {
		pr_err(img->path, "orc: .orc_unwind_ip or .orc_unwind is not an allocated "
		       "section with contents at its address");
		return -EINVAL;
	}
	priv = t->priv = xcalloc(1, sizeof(*priv));
	priv->ip_start = ip_sec->addr;
	priv->orc_start = orc_sec->addr;
	if (hdr && hdr->data && hdr->size == 20)
		priv->header = hdr->data;
	t->ranges = xcalloc(2, sizeof(*t->ranges));
	t->ranges[0] = (struct table_range){ ip_sec->addr, ip_sec->size, ".orc_unwind_ip", nr_ip };
	t->ranges[1] = (struct table_range){ orc_sec->addr, orc_sec->size, ".orc_unwind", nr_ip };
	t->nr_ranges = 2;
	t->nr_slots = nr_ip;
	t->present = true;
	return 0;
}

static bool orc_probe(struct kmeta_table *t)
{
	return kmeta_find_sec_by_name(t->img, ".orc_unwind_ip") &&
	       kmeta_find_sec_by_name(t->img, ".orc_unwind");
}

static int orc_read(struct kmeta_table *t, size_t idx, struct kmeta_entry *e)
{
	struct orc_priv *priv = t->priv;
	const unsigned char *ip, *orc;

	if (idx >= t->nr_slots)
		return -ERANGE;
	ip = kmeta_bytes_at(t->img, priv->ip_start + 4 * idx, 4);
	orc = kmeta_bytes_at(t->img, priv->orc_start + 6 * idx, 6);
	if (!ip || !orc)
		return -EINVAL;
	memset(e, 0, sizeof(*e));
	e->idx = idx;
	e->addr = priv->ip_start + 4 * idx;
	e->raw[ORC_IP] = (uint64_t)(int64_t)(int32_t)get_u32(ip);
	e->val[ORC_IP] = e->site = e->addr + e->raw[ORC_IP];
	e->raw[ORC_SP] = e->val[ORC_SP] = (uint64_t)(int64_t)(int16_t)get_u16(orc);
	e->raw[ORC_BP] = e->val[ORC_BP] = (uint64_t)(int64_t)(int16_t)get_u16(orc + 2);
	e->raw[ORC_BITS] = e->val[ORC_BITS] = get_u16(orc + 4);
	return 0;
}

static const char *reg_name(unsigned int reg)
{
	static const char *const names[] = {
		"(und)", "prevsp", "dx", "di", "bp", "sp", "r10", "r13", "bp(ind)", "sp(ind)",
	};

	return reg < sizeof(names) / sizeof(names[0]) ? names[reg] : "?";
}

/* objtool's print_reg() */
static int print_reg(char *buf, size_t size, unsigned int reg, int off)
{
	if (reg == ORC_REG_BP_INDIRECT)
		return snprintf(buf, size, "(bp%+d)", off);
	if (reg == ORC_REG_SP_INDIRECT)
		return snprintf(buf, size, "(sp)%+d", off);
	if (reg == ORC_REG_UNDEFINED)
		return snprintf(buf, size, "(und)");
	return snprintf(buf, size, "%s%+d", reg_name(reg), off);
}

static const char *type_name(const struct kmeta_table *t, unsigned int type)
{
	static const char *const names_61[] = { "call", "regs", "regs (partial)" };
	static const char *const names_612[] = {
		"(und)", "end", "call", "regs", "regs (partial)",
	};

	if (is_612(t))
		return type < 5 ? names_612[type] : "?";
	return type < 3 ? names_61[type] : "?";
}

/* objtool's orc_dump notation: 6.1 "sp:.. bp:.. type:.. end:N", 6.12 "type:.. sp:.. bp:.. signal:N" */
static void orc_format_entry(struct kmeta_table *t, const struct kmeta_entry *e, char *buf,
			     size_t size)
{
	unsigned int bits = e->val[ORC_BITS], sp_reg = bits & 0xf, bp_reg = (bits >> 4) & 0xf;
	char sp[48], bp[48];

	print_reg(sp, sizeof(sp), sp_reg, (int)(int64_t)e->val[ORC_SP]);
	print_reg(bp, sizeof(bp), bp_reg, (int)(int64_t)e->val[ORC_BP]);
	if (is_612(t))
		snprintf(buf, size, "type:%s sp:%s bp:%s signal:%u",
			 type_name(t, (bits >> 8) & 7), sp, bp, (bits >> 11) & 1);
	else
		snprintf(buf, size, "sp:%s bp:%s type:%s end:%u",
			 sp, bp, type_name(t, (bits >> 8) & 3), (bits >> 10) & 1);
}

static bool orc_format(struct kmeta_table *t, const struct kmeta_entry *e, unsigned int i,
		       char *buf, size_t size)
{
	unsigned int bits = e->val[ORC_BITS];

	if (i != ORC_BITS)
		return false;
	if (is_612(t))
		snprintf(buf, size, "sp_reg=%u,bp_reg=%u,type=%s,signal=%u", bits & 0xf,
			 (bits >> 4) & 0xf, type_name(t, (bits >> 8) & 7), (bits >> 11) & 1);
	else
		snprintf(buf, size, "sp_reg=%u,bp_reg=%u,type=%s,end=%u", bits & 0xf,
			 (bits >> 4) & 0xf, type_name(t, (bits >> 8) & 3), (bits >> 10) & 1);
	return true;
}

static void orc_check(struct kmeta_table *t, const struct kmeta_entry *e, struct check_ctx *c)
{
	struct kmeta_sym *func = kmeta_find_func_containing(t->img, e->site);

	/*
	 * Entries at a function's end or in padding mark the end of its unwind range;
	 * inside an alternative site they describe the replacement's instructions.
	 */
	if (!func || e->site == func->addr || kmeta_is_inside_patch_site(t->img, e->site))
		return;
	check_insn_boundary(c, e->site, "ORC entry");
}

static void orc_free(struct kmeta_table *t)
{
	free(t->priv);
}

int kmeta_orc_read(struct kmeta_image *img, uint64_t **ips, const unsigned char **entries,
		   size_t *nr)
{
	struct kmeta_sec *ip = kmeta_find_sec_by_name(img, ".orc_unwind_ip");
	struct kmeta_sec *orc = kmeta_find_sec_by_name(img, ".orc_unwind");

	*ips = NULL;
	*nr = 0;
	if (!ip || !orc || !ip->data || !orc->data || ip->size / 4 != orc->size / KMETA_ORC_SIZE)
		return -ENOENT;
	*nr = ip->size / 4;
	*ips = xmalloc(*nr * sizeof(**ips) + 1);
	*entries = orc->data;
	for (size_t k = 0; k < *nr; k++)
		(*ips)[k] = ip->addr + 4 * k + (int64_t)(int32_t)get_u32(ip->data + 4 * k);
	return 0;
}

const unsigned char *kmeta_orc_state(const uint64_t *ips, const unsigned char *entries,
				     size_t nr, uint64_t addr)
{
	size_t past = upper_bound_u64(ips, nr, sizeof(*ips), 0, addr);

	return past ? entries + (past - 1) * KMETA_ORC_SIZE : NULL;
}

/* past is right when ips[past - 1] <= addr < ips[past]: as kmeta_orc_state() finds it */
static bool is_upper_bound(const uint64_t *ips, size_t nr, uint64_t addr, size_t past)
{
	return past <= nr && (!past || ips[past - 1] <= addr) && (past == nr || addr < ips[past]);
}

const unsigned char *kmeta_orc_state_near(const uint64_t *ips, const unsigned char *entries,
					  size_t nr, uint64_t addr, size_t *past)
{
	/* walking the bytes of code in order, the next address is in the same or next range */
	if (!is_upper_bound(ips, nr, addr, *past)) {
		if (is_upper_bound(ips, nr, addr, *past + 1))
			++*past;
		else
			*past = upper_bound_u64(ips, nr, sizeof(*ips), 0, addr);
	}
	return *past ? entries + (*past - 1) * KMETA_ORC_SIZE : NULL;
}

const struct table_desc orc_table = {
	.name = "orc",
	.btf_struct = "orc_entry",
	.layouts = orc_layouts,
	.nr_layouts = ARRAY_SIZE(orc_layouts),
	.sorted = true,
	.probe = orc_probe,
	.locate = orc_locate,
	.read = orc_read,
	.format = orc_format,
	.format_entry = orc_format_entry,
	.check = orc_check,
	.free_priv = orc_free,
	.rewrite = { TR_OWN_PASS },
};
