// SPDX-License-Identifier: GPL-2.0
/*
 * .altinstructions: struct alt_instr (arch/x86/include/asm/alternative.h).
 * apply_alternatives() copies the replacement (in .altinstr_replacement) over
 * [instr, instr + instrlen) when the CPU feature is present (or absent, with the NOT
 * flag), padding with nops.  6.1: u16 cpuid, bit 15 = NOT.  6.12: u32 ft_flags, bits 0-15
 * the feature, bit 16 NOT, bit 17 DIRECT_CALL.  The feature is below
 * (NCAPINTS + NBUGINTS) * 32 or the kernel BUGs; its name comes from the x86_cap_flags
 * and x86_bug_flags string tables inside the image.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "../table.h"

enum { ALT_SITE, ALT_REPL, ALT_FEATURE, ALT_INSTRLEN, ALT_REPLLEN };

static const struct layout alternatives_layouts[] = {
	{ .name = "6.1", .min_version = KMETA_VERSION(6, 1), .max_version = KMETA_VERSION(6, 1),
	  .entry_size = 12,
	  .fields = {
		{ "instr", "instr_offset", 0, FK_PCREL32, FR_SITE, 0 },
		{ "replacement", "repl_offset", 4, FK_PCREL32, FR_CODE, 0 },
		{ "cpuid", NULL, 8, FK_U16, FR_VALUE, 0 },
		{ "instrlen", NULL, 10, FK_U8, FR_VALUE, 0 },
		{ "replacementlen", NULL, 11, FK_U8, FR_VALUE, 0 },
	} },
	{ .name = "6.12", .min_version = KMETA_VERSION(6, 12), .max_version = KMETA_VERSION(6, 12),
	  .entry_size = 14,
	  .btf_covered = "cpuid flags",
	  .fields = {
		{ "instr", "instr_offset", 0, FK_PCREL32, FR_SITE, 0 },
		{ "replacement", "repl_offset", 4, FK_PCREL32, FR_CODE, 0 },
		{ "ft_flags", NULL, 8, FK_U32, FR_VALUE, 0 },
		{ "instrlen", NULL, 12, FK_U8, FR_VALUE, 0 },
		{ "replacementlen", NULL, 13, FK_U8, FR_VALUE, 0 },
	} },
};

#define NCAPINTS_BITS (22 * 32)	/* both 6.1 and 6.12; the cap table's size confirms it */

struct alt_names {
	unsigned int nr_caps, nr_bugs;
	const char **caps, **bugs;	/* NULL where the kernel has no name */
	bool *apart;	/* per slot: an earlier slot, not the one before, names its site */
};

static const char **read_name_table(struct kmeta_image *img, const char *sym_name,
				    unsigned int *nr)
{
	struct kmeta_sym *sym = kmeta_find_sym_by_name(img, sym_name);
	const unsigned char *p;
	const char **names;

	*nr = 0;
	if (!sym || !sym->size || sym->size % 8)
		return NULL;
	p = kmeta_bytes_at(img, sym->addr, sym->size);
	if (!p)
		return NULL;
	*nr = sym->size / 8;
	names = xcalloc(*nr, sizeof(*names));
	for (unsigned int i = 0; i < *nr; i++) {
		uint64_t a = get_u64(p + 8 * i);
		struct kmeta_sec *sec = a ? kmeta_find_sec_containing(img, a) : NULL;
		const char *s;

		if (!sec || !sec->data)
			continue;
		s = (const char *)sec->data + (a - sec->addr);
		if (memchr(s, 0, sec->size - (a - sec->addr)) && s[0])
			names[i] = s;
	}
	return names;
}

static struct alt_names *get_names(struct kmeta_table *t)
{
	struct alt_names *n = t->priv;

	if (!n) {
		n = t->priv = xcalloc(1, sizeof(*n));
		n->caps = read_name_table(t->img, "x86_cap_flags", &n->nr_caps);
		n->bugs = read_name_table(t->img, "x86_bug_flags", &n->nr_bugs);
	}
	return n;
}

static unsigned int feature_of(struct kmeta_table *t, const struct kmeta_entry *e,
			       bool *not, bool *direct_call)
{
	uint64_t v = e->val[ALT_FEATURE];

	if (t->layout->entry_size == 12) {
		*not = v & 0x8000;
		*direct_call = false;
		return v & 0x7fff;
	}
	*not = v & (1u << 16);
	*direct_call = v & (1u << 17);
	return v & 0xffff;
}

static void feature_name(struct kmeta_table *t, unsigned int feat, char *buf, size_t size)
{
	struct alt_names *n = get_names(t);
	unsigned int ncap = n->nr_caps ? n->nr_caps : NCAPINTS_BITS;
	const char *prefix = feat < ncap ? "X86_FEATURE_" : "X86_BUG_";
	const char *name = feat < ncap ? (n->caps ? n->caps[feat] : NULL) :
			   (n->bugs && feat - ncap < n->nr_bugs ? n->bugs[feat - ncap] : NULL);
	size_t len;

	if (!name) {	/* hidden features have no /proc/cpuinfo name */
		snprintf(buf, size, "%s(%u*32+%u)", prefix, (feat < ncap ? feat : feat - ncap) / 32,
			 (feat < ncap ? feat : feat - ncap) % 32);
		return;
	}
	len = snprintf(buf, size, "%s", prefix);
	for (; *name && len + 1 < size; name++)
		buf[len++] = toupper((unsigned char)*name);
	buf[len] = 0;
}

struct site_slot {
	uint64_t site;
	size_t idx;
};

/*
 * Nested ALTERNATIVE()s (ALTERNATIVE_2 and _3 are built so since 6.10) give one site
 * several entries, and analyze_patch_site() reads a site's entries as a run of
 * consecutive ones: the longest instrlen, the last one that applies.  An entry
 * apart from the others of its site would be patched alone, over fewer bytes.  The
 * kernels' macros always emit a site's entries together (older kernels, which patch
 * entry by entry, too), so an entry apart is a violation on any of them.
 */
static bool *find_apart(struct kmeta_table *t)
{
	struct site_slot *v = xcalloc(t->nr_slots ? t->nr_slots : 1, sizeof(*v));
	bool *apart = xcalloc(t->nr_slots ? t->nr_slots : 1, sizeof(*apart));
	struct kmeta_entry e;
	size_t nr = 0;

	for (size_t i = 0; i < t->nr_slots; i++)
		if (!kmeta_table_read_entry(t, i, &e) && !e.filler)
			v[nr++] = (struct site_slot){ e.site, i };
	sort_by_u64_key(v, nr, sizeof(*v), 0);	/* stable: slots in order per site */
	for (size_t k = 1; k < nr; k++)
		if (v[k].site == v[k - 1].site && v[k].idx != v[k - 1].idx + 1)
			apart[v[k].idx] = true;
	free(v);
	return apart;
}

static bool alternatives_format(struct kmeta_table *t, const struct kmeta_entry *e,
				unsigned int i, char *buf, size_t size)
{
	bool not, direct_call;
	unsigned int feat;
	size_t len;

	if (i != ALT_FEATURE)
		return false;
	feat = feature_of(t, e, &not, &direct_call);
	len = snprintf(buf, size, "%s", not ? "!" : "");
	feature_name(t, feat, buf + len, size - len);
	if (direct_call) {
		len = strlen(buf);
		snprintf(buf + len, size - len, ",DIRECT_CALL");
	}
	return true;
}

static void alternatives_check(struct kmeta_table *t, const struct kmeta_entry *e,
			       struct check_ctx *c)
{
	struct alt_names *n = get_names(t);
	unsigned int ncap = n->nr_caps ? n->nr_caps : NCAPINTS_BITS;
	unsigned int nbug = n->nr_bugs ? n->nr_bugs : 64;
	unsigned int instrlen = e->val[ALT_INSTRLEN], repllen = e->val[ALT_REPLLEN];
	bool not, direct_call;
	unsigned int feat = feature_of(t, e, &not, &direct_call);
	struct kmeta_sec *rsec;

	if (!n->apart)
		n->apart = find_apart(t);
	if (n->apart[e->idx])
		check_report(c, e->site, "entry %zu is apart from the earlier entries of its site: "
			     "apply_alternatives() patches a site from its consecutive entries",
			     e->idx);
	if (!check_site_is_code(c, e->site, "alternative site"))
		return;
	check_insn_boundary(c, e->site, "alternative site");
	if (feat >= ncap + nbug)
		check_report(c, e->site, "feature %u is beyond the %u cpu capability and bug "
			     "bits: the kernel BUGs on it", feat, ncap + nbug);
	if (repllen > instrlen)
		check_report(c, e->site, "replacement (%u bytes) longer than the site (%u bytes)",
			     repllen, instrlen);
	if (!kmeta_bytes_at(t->img, e->site, instrlen))
		check_report(c, e->site, "site of %u bytes runs past its section", instrlen);
	if (!repllen)
		return;
	rsec = kmeta_find_sec_containing(t->img, e->val[ALT_REPL]);
	if (!rsec || !kmeta_bytes_at(t->img, e->val[ALT_REPL], repllen) ||
	    !(rsec->flags & SHF_EXECINSTR))
		check_report(c, e->site, "replacement of %u bytes is not inside code", repllen);
}

static void alternatives_free(struct kmeta_table *t)
{
	struct alt_names *n = t->priv;

	if (n) {
		free(n->caps);
		free(n->bugs);
		free(n->apart);
		free(n);
	}
}

const struct table_desc alternatives_table = {
	.name = "alternatives",
	.start_sym = "__alt_instructions",
	.stop_sym = "__alt_instructions_end",
	.sec_name = ".altinstructions",
	.btf_struct = "alt_instr",
	.layouts = alternatives_layouts,
	.nr_layouts = ARRAY_SIZE(alternatives_layouts),
	.format = alternatives_format,
	.check = alternatives_check,
	.free_priv = alternatives_free,
	.rewrite = { TR_PATCHED_UNIT, "instrlen" },
};
