// SPDX-License-Identifier: GPL-2.0
/*
 * The source file of each function (cu_path.h): .debug_aranges maps address ranges to
 * compile units (DWARF 5 section 6.1.2), and each unit's DW_TAG_compile_unit DIE says
 * its DW_AT_name and DW_AT_comp_dir (section 3.1.1).  Read by hand with dwarf/io.h's
 * readers of unit headers, abbreviations and forms, not with libdw: libdw is the
 * proof's (kbolt/verify/dwarf.c, the one file that includes it), and only these two
 * strings are needed.  GCC writes the kernel's C units with a name relative to the
 * tree's root and its assembly units (as does) with an absolute one, against a
 * comp_dir that is the build directory (Debian: /build/reproducible-path/linux-6.1.192/
 * debian/build/build_amd64_none_cloud-amd64, or that path relative to the tree once
 * -fdebug-prefix-map took the tree's path out): cu_path_key() makes every one the path
 * from the tree's root.
 */
#include <dwarf.h>
#include <elf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../dwarf/io.h"
#include "cu_path.h"

#define MAX_PARTS 256

/* path's components into parts (pointers into path, cut): no "." nor "", "x/.." gone */
static int split_path(char *path, const char **parts)
{
	char *save;
	int n = 0;

	for (char *s = strtok_r(path, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
		if (!strcmp(s, "."))
			continue;
		if (!strcmp(s, "..") && n && strcmp(parts[n - 1], "..")) {
			n--;
			continue;
		}
		if (n < MAX_PARTS)
			parts[n++] = s;
	}
	return n;
}

char *cu_path_key(const char *name, const char *comp_dir)
{
	char nbuf[4096], dbuf[4096], *key;
	const char *np[MAX_PARTS], *dp[MAX_PARTS];
	int nn, nd = 0, k = 0;
	size_t len = 0;

	snprintf(nbuf, sizeof(nbuf), "%s", name);
	nn = split_path(nbuf, np);
	if (name[0] == '/' && comp_dir && comp_dir[0] == '/') {
		/* relative to comp_dir: what they share goes, the ".." it would take too */
		snprintf(dbuf, sizeof(dbuf), "%s", comp_dir);
		nd = split_path(dbuf, dp);
		while (k < nn - 1 && k < nd && !strcmp(np[k], dp[k]))
			k++;
	}
	while (k < nn - 1 && !strcmp(np[k], ".."))
		k++;
	key = xmalloc(strlen(name) + 1);
	for (int i = k; i < nn; i++)
		len += sprintf(key + len, "%s%s", i > k ? "/" : "", np[i]);
	key[len] = '\0';
	return key;
}

/* The sections read, their bytes in the file's mapping */
struct dwarf_secs {
	const unsigned char *aranges, *info, *abbrev, *str, *line_str;
	uint64_t aranges_size, info_size, abbrev_size, str_size, line_str_size;
};

struct cu_dwarf {
	struct dwarf_secs d;
	struct dwarf_abbrevs ab;
};

static const unsigned char *sec_bytes(struct kmeta_image *img, const char *name,
				      uint64_t *size)
{
	struct kmeta_sec *sec = kmeta_find_sec_by_name(img, name);

	*size = 0;
	if (!sec || (sec->flags & SHF_COMPRESSED))
		return NULL;
	return dwarf_file_bytes(img, sec, size);
}

/* A string attribute of form at r (its value read past), NULL if not one kbolt reads */
static const char *read_str(const struct dwarf_secs *d, struct dwarf_reader *r,
			    uint64_t form, const struct dwarf_unit *u)
{
	const unsigned char *sec;
	uint64_t size, off;

	switch (form) {
	case DW_FORM_string:
		sec = r->p;
		if (!memchr(sec, '\0', r->end - r->p)) {
			r->bad = true;
			return NULL;
		}
		r->p += strlen((const char *)sec) + 1;
		return (const char *)sec;
	case DW_FORM_strp:
		sec = d->str, size = d->str_size;
		break;
	case DW_FORM_line_strp:
		sec = d->line_str, size = d->line_str_size;
		break;
	default:	/* strx (split DWARF's), GNU_strp_alt (another file's): not read */
		dwarf_skip_form(r, form, u);
		return NULL;
	}
	off = dwarf_get_fixed(r, u->offset_size);
	if (r->bad || !sec || off >= size || !memchr(sec + off, '\0', size - off))
		return NULL;
	return (const char *)sec + off;
}

/* The key of the unit at off of .debug_info, NULL if it has no name; *why if malformed */
static char *unit_path(const struct dwarf_secs *d, struct dwarf_abbrevs *ab, uint64_t off,
		       const char **why)
{
	const char *name = NULL, *dir = NULL;
	const struct dwarf_abbrev *a;
	struct dwarf_reader r;
	struct dwarf_unit u;

	*why = off < d->info_size ? dwarf_read_unit(d->info, d->info_size, off, &u) :
	       "a .debug_aranges set names a unit past .debug_info";
	if (!*why)
		*why = dwarf_read_abbrevs(ab, d->abbrev, d->abbrev_size, u.abbrev_off);
	if (*why)
		return NULL;
	r = (struct dwarf_reader){ .p = d->info + u.die_off, .end = d->info + u.end };
	a = dwarf_abbrev_of(ab, dwarf_get_uleb(&r));
	if (!a || a->tag != DW_TAG_compile_unit)
		return NULL;
	for (uint32_t k = 0; k < a->nr && !r.bad; k++) {
		const struct dwarf_abbrev_attr *at = &ab->attrs[a->first + k];

		if (at->at == DW_AT_name)
			name = read_str(d, &r, at->form, &u);
		else if (at->at == DW_AT_comp_dir)
			dir = read_str(d, &r, at->form, &u);
		else if (!dwarf_skip_form(&r, at->form, &u))
			r.bad = true;
	}
	if (r.bad) {
		*why = "a compile unit's DIE kbolt cannot read";
		return NULL;
	}
	return name && name[0] ? cu_path_key(name, dir) : NULL;
}

/* The address ranges of one .debug_aranges set (at r), of its unit; NULL or why not */
static const char *read_set(struct cu_paths *cp, struct dwarf_reader *r)
{
	const unsigned char *set = r->p;
	unsigned int offset_size, addr_size;
	struct dwarf_reader s;
	uint64_t len, info_off, tuple;

	len = dwarf_get_initial_length(r, &offset_size);
	if (r->bad || len > (uint64_t)(r->end - r->p))
		return "a .debug_aranges set past the section's end";
	s = (struct dwarf_reader){ .p = r->p, .end = r->p + len };
	r->p += len;
	if (dwarf_get_fixed(&s, 2) != 2)
		return "a .debug_aranges version other than 2";
	info_off = dwarf_get_fixed(&s, offset_size);
	addr_size = dwarf_get_fixed(&s, 1);
	if (s.bad || (addr_size != 4 && addr_size != 8) || dwarf_get_fixed(&s, 1))
		return "a .debug_aranges set header kbolt cannot read";
	GROW(cp->units, cp->cap_units, cp->nr_units + 1);
	cp->units[cp->nr_units++] = (struct cu_unit){ .info_off = info_off };
	/* the tuples start at a multiple of twice the address size from the set's start */
	tuple = 2 * addr_size;
	s.p = set + (s.p - set + tuple - 1) / tuple * tuple;
	for (;;) {
		uint64_t start = dwarf_get_fixed(&s, addr_size), size = dwarf_get_fixed(&s, addr_size);

		if (s.bad)
			return "a .debug_aranges set without its end";
		if (!start && !size)
			return NULL;
		GROW(cp->ranges, cp->cap_ranges, cp->nr_ranges + 1);
		cp->ranges[cp->nr_ranges++] = (struct cu_range){ start, start + size,
								 cp->nr_units - 1 };
	}
}

int cu_paths_read(struct kmeta_image *img, struct cu_paths *cp)
{
	struct dwarf_secs d;
	struct dwarf_reader r;
	const char *why = NULL;

	memset(cp, 0, sizeof(*cp));
	if (img->is_module)	/* its DWARF's addresses are relocations still */
		return 0;
	d.aranges = sec_bytes(img, ".debug_aranges", &d.aranges_size);
	d.info = sec_bytes(img, ".debug_info", &d.info_size);
	d.abbrev = sec_bytes(img, ".debug_abbrev", &d.abbrev_size);
	d.str = sec_bytes(img, ".debug_str", &d.str_size);
	d.line_str = sec_bytes(img, ".debug_line_str", &d.line_str_size);
	if (!d.aranges || !d.info || !d.abbrev)
		return 0;
	cp->dwarf = xcalloc(1, sizeof(*cp->dwarf));
	cp->dwarf->d = d;
	cp->dwarf->ab.off = UINT64_MAX;
	r = (struct dwarf_reader){ .p = d.aranges, .end = d.aranges + d.aranges_size };
	while (r.p < r.end && !why)
		why = read_set(cp, &r);
	if (why) {
		pr_err(img->path, "DWARF: %s", why);
		cu_paths_free(cp);
		return -EINVAL;
	}
	sort_by_u64_key(cp->ranges, cp->nr_ranges, sizeof(*cp->ranges),
			offsetof(struct cu_range, start));
	return 0;
}

const char *cu_path_at(struct cu_paths *cp, uint64_t addr)
{
	size_t i = upper_bound_u64(cp->ranges, cp->nr_ranges, sizeof(*cp->ranges),
				   offsetof(struct cu_range, start), addr);
	struct cu_unit *u;
	const char *why;

	/* units do not overlap: the last one starting at or before addr, if it holds it */
	if (!i || addr >= cp->ranges[i - 1].end)
		return NULL;
	u = &cp->units[cp->ranges[i - 1].unit];
	if (!u->read) {
		u->path = unit_path(&cp->dwarf->d, &cp->dwarf->ab, u->info_off, &why);
		u->read = true;
		if (why && !cp->why)
			cp->why = why;
	}
	return u->path;
}

int cu_paths_check(const struct cu_paths *cp, const struct kmeta_image *img)
{
	if (!cp->why)
		return 0;
	pr_err(img->path, "DWARF: %s", cp->why);
	return -EINVAL;
}

const char *cu_func_file(struct cu_paths *cp, const struct kmeta_image *img,
			 const struct kmeta_sym *f)
{
	const char *path = cu_path_at(cp, f->addr);

	if (path)
		return path;
	return f->file ? img->syms[f->file].name : "";
}

void cu_paths_free(struct cu_paths *cp)
{
	for (size_t i = 0; i < cp->nr_units; i++)
		free(cp->units[i].path);
	free(cp->units);
	free(cp->ranges);
	if (cp->dwarf)
		dwarf_abbrevs_free(&cp->dwarf->ab);
	free(cp->dwarf);
	memset(cp, 0, sizeof(*cp));
}
