// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of libkmeta's image model on the Debian kernels: symbols and the function
 * lookup, .cold fragments and their parents, the relocation index, BTF layouts, the
 * instruction decoder, the patch-site ranges, and the scan for addresses that stands in
 * for relocations.  Paths come from the environment
 * (VMLINUX_61, VMLINUX_612, and VMLINUX_LAB612: the lab's 6.12, which keeps its
 * relocations); a missing kernel is a skip.  TAP output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kmeta/kmeta.h"
#include "../../kmeta/table.h"
#include "tap.h"

static void test_symbols(struct kmeta_image *img, const char *label, bool want_cold)
{
	struct kmeta_sym *s = kmeta_find_sym_by_name(img, "schedule");
	size_t cold = 0, with_parent = 0, local = 0, same_file = 0;
	char buf[KMETA_ADDR_STR_SIZE];

	ok(s && s->type == STT_FUNC && s->size > 0, "%s: schedule is a sized function", label);
	if (!s)
		return;
	ok(kmeta_find_func_containing(img, s->addr + s->size / 2) == s,
	   "%s: the middle of schedule belongs to schedule", label);
	ok(!strcmp(kmeta_addr_str(img, s->addr + 3, buf, sizeof(buf)), "schedule+0x3"),
	   "%s: address prints as schedule+0x3 (got %s)", label, buf);
	ok(kmeta_find_func_containing(img, s->addr + s->size) != s,
	   "%s: the end of schedule is outside it", label);
	for (size_t i = 0; i < img->nr_funcs; i++) {
		struct kmeta_sym *f = img->funcs[i];

		if (!strstr(f->name, ".cold"))
			continue;
		cold++;
		if (!f->parent)
			continue;
		with_parent++;
		if (f->parent->bind != STB_LOCAL)
			continue;
		local++;
		same_file += f->parent->file == f->file;
	}
	/* GCC 12 (6.1) splits cold code into foo.cold; Debian's 6.12 build has none */
	ok(want_cold ? cold > 1000 && with_parent * 100 >= cold * 99 : cold == 0,
	   "%s: %zu of %zu .cold fragments linked to a parent", label, with_parent, cold);
	ok(local == same_file,
	   "%s: all %zu static parents are in the fragment's own file", label, same_file);
}

/* Counts relocations, and checks that a point lookup finds every 97th in code */
struct reloc_census {
	struct kmeta_image *img;
	size_t nr, looked_up, found;
};

static int census_one(void *ctx, struct kmeta_sec *target, const struct kmeta_reloc *r)
{
	struct reloc_census *c = ctx;
	struct kmeta_reloc at;

	if (c->nr++ % 97 || !(target->flags & SHF_EXECINSTR))
		return 0;
	c->looked_up++;
	if (kmeta_reloc_at(c->img, r->addr, &at) && at.addr == r->addr && at.type == r->type &&
	    at.target == r->target && at.sym == r->sym)
		c->found++;
	return 0;
}

static void test_relocs(struct kmeta_image *img, const char *label, size_t min_relocs)
{
	struct kmeta_sym *s = kmeta_find_sym_by_name(img, "schedule");
	struct reloc_census c = { .img = img };
	struct kmeta_reloc r = { 0 };
	const unsigned char *p;
	bool found = false;
	uint64_t a;

	if (kmeta_for_each_reloc(img, census_one, &c)) {
		ok(0, "%s: relocations read", label);
		return;
	}
	if (!strcmp(label, "6.12")) {
		/* stripped by the build, all but the runtime constants' own .rela sections */
		ok(c.nr < 1000, "%s: only %zu relocations: the build strips .rela", label, c.nr);
		return;
	}
	ok(c.nr > min_relocs, "%s: %zu relocations read", label, c.nr);
	ok(c.looked_up > 1000 && c.found == c.looked_up,
	   "%s: %zu of %zu relocations in code found again by address", label, c.found,
	   c.looked_up);
	/* the first call in schedule carries a PLT32/PC32 relocation to its callee */
	for (a = s->addr; a < s->addr + s->size; a++) {
		p = kmeta_bytes_at(img, a, 5);
		if (p[0] == 0xe8 && kmeta_is_insn_boundary(img, a) == 1 &&
		    (found = kmeta_reloc_at(img, a + 1, &r)))
			break;
	}
	ok(found && (r.type == R_X86_64_PLT32 || r.type == R_X86_64_PC32) &&
	   r.target + 4 == a + 5 + (int32_t)get_u32(p + 1),
	   "%s: call at schedule+0x%llx: its relocation targets what the rel32 reaches", label,
	   (unsigned long long)(a - s->addr));
	ok(!kmeta_reloc_at(img, s->addr, &r),
	   "%s: no relocation at schedule's first byte, an opcode", label);
}

/* Bit offset of member in struct sname as kmeta_btf_struct_members() lists it; -1 if none */
static long member_bit(struct kmeta_image *img, const char *sname, const char *member)
{
	struct kmeta_btf_member m[32];
	int nr = kmeta_btf_struct_members(img, sname, m, 32);

	for (int i = 0; i < nr; i++)
		if (!strcmp(m[i].name, member))
			return m[i].bit_off;
	return -1;
}

static void test_btf(struct kmeta_image *img, const char *label, int alt_size, const char *orc_bit)
{
	ok(kmeta_btf_struct_size(img, "alt_instr") == alt_size,
	   "%s: BTF: alt_instr is %d bytes", label, alt_size);
	/* bit 42 (6.1 end) or 43 (6.12 signal): byte 5 */
	ok(member_bit(img, "orc_entry", orc_bit) / 8 == 5,
	   "%s: BTF: orc_entry.%s is a bitfield in byte 5", label, orc_bit);
	ok(kmeta_btf_struct_size(img, "jump_entry") == 16 &&
	   member_bit(img, "jump_entry", "key") == 64,
	   "%s: BTF: jump_entry is 16 bytes, key at 8", label);
}

static void test_decoder(struct kmeta_image *img, const char *label)
{
	struct kmeta_sym *s = kmeta_find_sym_by_name(img, "schedule");
	const struct kmeta_func_insns *fi = kmeta_func_decode(img, s);
	uint64_t sum = 0;

	ok(fi && !fi->bad_addr && fi->nr > 10, "%s: schedule decodes whole (%u instructions)",
	   label, fi ? fi->nr : 0);
	for (uint32_t i = 0; fi && i < fi->nr; i++)
		sum += kmeta_insn_len(img, fi->start + fi->off[i]);
	ok(fi && sum == s->size, "%s: instruction lengths add up to the function size", label);
}

static void test_sites(struct kmeta_image *img, const char *label, size_t min_sites)
{
	const struct kmeta_range *r = NULL;
	size_t nr = 0;
	int err = kmeta_patch_sites(img, &r, &nr);

	ok(!err && nr > min_sites, "%s: %zu patch-site ranges", label, nr);
	for (size_t i = 1; i < nr; i++) {
		if (r[i].start < r[i - 1].end || r[i].end <= r[i].start) {
			ok(0, "%s: patch sites sorted and disjoint (range %zu)", label, i);
			return;
		}
	}
	ok(nr && kmeta_is_inside_patch_site(img, r[0].start + 1) &&
	   !kmeta_is_inside_patch_site(img, r[0].start),
	   "%s: inside-a-site excludes the site's start", label);
}

/* kmeta_scan_abs_refs(): the reports, sorted by place */
struct scan_census {
	uint64_t *at;
	size_t nr, cap;
	uint64_t lo, hi;	/* a function whose body must be reported, if any */
	size_t in_func;
};

static void census_hit(void *ctx, uint64_t at, uint64_t target)
{
	struct scan_census *c = ctx;

	if (c->nr == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 4096;
		c->at = realloc(c->at, c->cap * sizeof(*c->at));
	}
	c->at[c->nr++] = at;
	c->in_func += target > c->lo && target < c->hi;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct reloc_check {
	struct kmeta_image *img;
	struct scan_census *c;
	size_t checked, code, missed;
};

static bool in_table(struct kmeta_image *img, uint64_t addr)
{
	for (unsigned int d = 0; d < kmeta_nr_table_descs; d++) {
		struct kmeta_table *t = kmeta_table_get(img, kmeta_table_descs[d]);

		for (unsigned int k = 0; t && t->present && k < t->nr_ranges; k++)
			if (addr >= t->ranges[k].addr && addr < t->ranges[k].addr + t->ranges[k].size)
				return true;
	}
	return false;
}

/* An absolute value: in code, an operand the scan reads (the relative ones are not) */
static bool is_abs_reloc(uint32_t type)
{
	return type == R_X86_64_64 || type == R_X86_64_32 || type == R_X86_64_32S;
}

/*
 * A relocation of data into a function body must be among the scan's reports, and so
 * must an absolute one in code ("mov $label, %rdi")
 */
static int check_reloc(void *ctx, struct kmeta_sec *sec, const struct kmeta_reloc *r)
{
	struct reloc_check *rc = ctx;
	struct kmeta_sym *f = kmeta_find_func_containing(rc->img, r->target);
	bool code = sec->flags & SHF_EXECINSTR;

	if ((code && !is_abs_reloc(r->type)) || !(sec->flags & SHF_ALLOC) || !f ||
	    r->target == f->addr || in_table(rc->img, r->addr))
		return 0;
	rc->checked++;
	rc->code += code;
	rc->missed += !search_array(&r->addr, rc->c->at, rc->c->nr, sizeof(uint64_t), cmp_u64);
	return 0;
}

/* The function bodies as sorted, disjoint ranges (symbols inside others dropped) */
static struct kmeta_range *body_ranges(struct kmeta_image *img, size_t *nr)
{
	struct kmeta_range *r = calloc(img->nr_funcs, sizeof(*r));

	*nr = 0;
	for (size_t i = 0; i < img->nr_funcs; i++) {
		struct kmeta_sym *f = img->funcs[i];

		if (!f->size || (*nr && f->addr < r[*nr - 1].end))
			continue;
		r[(*nr)++] = (struct kmeta_range){ f->addr, f->addr + f->size };
	}
	return r;
}

static void test_scan_abs(struct kmeta_image *img, const char *label)
{
	struct kmeta_sym *bpf = kmeta_find_sym_by_name(img, "___bpf_prog_run");
	struct scan_census c = { .lo = bpf ? bpf->addr : 0, .hi = bpf ? bpf->addr + bpf->size : 0 };
	struct reloc_check rc = { .img = img, .c = &c };
	size_t nr;
	struct kmeta_range *r = body_ranges(img, &nr);
	int err = kmeta_scan_abs_refs(img, r, nr, census_hit, &c);

	ok(!err && c.nr > 0, "%s: the scan for addresses reports %zu values", label, c.nr);
	/* its computed-goto table in .rodata holds absolute addresses into its body */
	ok(bpf && c.in_func > 50, "%s: %zu of them lead into ___bpf_prog_run", label, c.in_func);
	qsort(c.at, c.nr, sizeof(*c.at), cmp_u64);
	if (kmeta_find_sec_by_name(img, ".rela.text")) {
		kmeta_for_each_reloc(img, check_reloc, &rc);
		ok(rc.checked > 0 && rc.code > 0 && !rc.missed,
		   "%s: every relocation of data into a body outside the tables, and every "
		   "absolute one in code, is reported (%zu checked, %zu in code, %zu missed)",
		   label, rc.checked, rc.code, rc.missed);
	}
	free(c.at);
	free(r);
}

/* Debian's kernels are big: over a million relocations, over 3000 patch sites */
#define DEBIAN_SIZE 1000000, 3000

static void run(const char *label, const char *env, int alt_size, const char *orc_bit,
		size_t min_relocs, size_t min_sites)
{
	const char *path = getenv(env);
	struct kmeta_image *img;

	if (!path || !*path) {
		char what[64], why[64];

		snprintf(what, sizeof(what), "%s kernel", label);
		snprintf(why, sizeof(why), "%s not set", env);
		skip(what, why);
		return;
	}
	img = kmeta_open(path);
	ok(img != NULL, "%s: opens %s", label, path);
	if (!img)
		return;
	test_symbols(img, label, alt_size == 12);
	test_relocs(img, label, min_relocs);
	test_btf(img, label, alt_size, orc_bit);
	test_decoder(img, label);
	test_sites(img, label, min_sites);
	test_scan_abs(img, label);
	kmeta_close(img);
}

int main(void)
{
	run("6.1", "VMLINUX_61", 12, "end", DEBIAN_SIZE);
	run("6.12", "VMLINUX_612", 14, "signal", DEBIAN_SIZE);
	/* the lab's own 6.12 (a smaller config), which keeps its relocations: the scan is
	   checked against them */
	run("lab 6.12", "VMLINUX_LAB612", 14, "signal", 500000, 1000);
	return tap_done();
}
