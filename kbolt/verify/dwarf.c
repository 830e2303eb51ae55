// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt verify --debug-info: the DWARF of every walked instruction of a rewritten
 * function, at its new address in the new image, is what it was at its old address in
 * the old one.  Read with elfutils' libdw (the only file that includes it), each image
 * on its own, knowing nothing of how the new DWARF was written:
 *
 *   line rows    the rows of .debug_line that start at the address, in order (file
 *                name, line, column, discriminator, is_stmt, basic_block,
 *                prologue_end, epilogue_begin, isa, op_index; several rows at one
 *                address are its views), or, if none starts there, the row covering it;
 *   scopes       the chain of DW_TAG_subprogram, DW_TAG_inlined_subroutine and
 *                DW_TAG_lexical_block DIEs whose pc ranges hold the address, outermost
 *                first, each by tag, name (through DW_AT_abstract_origin), call file
 *                name, line and column, and its position among its parent's children
 *                (so two sibling blocks cannot trade ranges); and the code addresses
 *                of those DIEs and of their call sites and labels, in DIE order
 *                (DW_AT_entry_pc, DW_AT_call_pc, a label's DW_AT_low_pc: the new
 *                place of the instruction; DW_AT_call_return_pc, DWARF 4's
 *                DW_TAG_GNU_call_site's DW_AT_low_pc: the new end of the call);
 *   locations    the location of every variable of those scopes whose location is a
 *                list (.debug_loclists, .debug_loc): the expressions whose entries
 *                hold the instruction, each with the location views of its rows that
 *                it holds (GCC's DW_AT_GNU_locviews, read by hand: libdw does not),
 *                expressions compared by operation;
 *   frame        the call frame information of .debug_frame at the instruction: the
 *                CFA and the rule of every register x86-64's DWARF numbers (0-16:
 *                the general registers and the return address), as libdw's
 *                dwarf_cfi_addrframe() gives them, expressions compared by operation.
 *
 * The instructions are the old addresses the walk mapped (walk.c): a jmp the layout
 * removed has no new address and is not compared; an instruction the layout added has
 * no old one.  The functions are checked in parts on all threads, each thread with
 * handles of its own; the failures are said in function order after the loop.  The
 * DWARF standard is the reference: DWARF 5, section 6.2 (line programs), 2.17 (code
 * addresses and ranges) and 6.4 (call frame information).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <gelf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../common/util.h"
#include "../lib/parallel.h"
#include "internal.h"

/* One scope of a chain: a node of a per-function tree, 0 the root (no scope) */
struct scope_node {
	uint32_t parent;
	int tag;
	uint32_t ordinal;	/* among its parent DIE's children */
	const char *name, *call_file;
	Dwarf_Word call_line, call_column;
};

/* A code address a DIE gives: end, the end of an instruction (a return address) */
struct dwarf_point {
	Dwarf_Off die;
	Dwarf_Addr value;
	unsigned int at;
	bool end;
};

/* An entry of a location list: [lo, hi), from view vb to view ve */
struct loc_range {
	Dwarf_Addr lo, hi;
	Dwarf_Word vb, ve;
	Dwarf_Op *expr;
	size_t len;
};

/* A DIE's attribute whose value is a location list: its entries in locs */
struct loc_var {
	Dwarf_Off die;
	unsigned int at;
	size_t first, nr;
	Dwarf_Addr lo, hi;	/* what its entries span: nothing is said outside */
	bool bad;		/* libdw could not read it (or its views) */
};

/* What one image says of one function: per offset, its rows and its scope chain */
struct func_dwarf {
	Dwarf_Lines *lines;
	size_t nr_lines;
	uint32_t *row_first;	/* per offset: first row (index in lines) */
	uint16_t *nr_rows;	/* per offset: rows starting there; 0: row_first covers it */
	uint32_t *chain;	/* per offset: innermost scope_node */
	struct scope_node *nodes;
	size_t nr_nodes, nodes_cap;
	struct dwarf_point *points;	/* of the DIEs walked for the scopes, in order */
	size_t nr_points, points_cap;
	bool want_locs;		/* collect the location lists of the scopes' DIEs */
	struct loc_var *vars;	/* in DIE order */
	size_t nr_vars, vars_cap;
	struct loc_range *locs;
	size_t nr_locs, locs_cap;
};

/* One image's DWARF, and its top-level subprogram ranges of the CU last asked */
struct dwarf_side {
	int fd;
	Dwarf *dbg;
	Dwarf_CFI *cfi;		/* .debug_frame, NULL if none */
	char *raw;		/* libelf's mapping of the file, NULL if it read it */
	size_t raw_size;
	Dwarf_Frame *frame;	/* the last row asked for, which the next often shares */
	Dwarf_Addr frame_lo, frame_hi;
	Dwarf_Off cu_off;
	bool have_cu, have_progs;	/* progs: of the current CU, loaded when asked */
	Dwarf_Die cu;
	Dwarf_Half version;	/* the CU's */
	Dwarf_Files *files;
	Elf_Data *loclists, *loc;	/* the sections location views are read from */
	struct prog_range {
		uint64_t lo, hi;
		Dwarf_Off die;
		uint32_t ordinal;
	} *progs;
	size_t nr_progs, progs_cap;
	/* the units by their ranges, where .debug_aranges has none (Clang's) */
	struct prog_range *units;
	size_t nr_units, units_cap;
	bool have_units;
};

/* What an entry of a location list says at an address: of its rows, views [from, to) */
struct loc_item {
	Dwarf_Word from, to;
	const Dwarf_Op *expr;
	size_t len;
};

struct loc_items {
	struct loc_item *v;
	size_t nr, cap;
};

/* A problem found, said once every function is checked, in the order of the functions */
struct dwarf_failure {
	uint64_t addr;
	char *msg;
};

/*
 * What a part (FUNCS_PER_PART functions, in address order) found: its first failures,
 * and how many more
 */
struct dwarf_part {
	struct dwarf_failure fails[MAX_REPORTS];
	size_t nr_fails, more;
	size_t funcs, insns;	/* compared, for the summary */
	int err;		/* the DWARF could not be read (said) */
};

/* One worker's: its own libdw handles of both images, and its scratch */
struct dwarf_check {
	struct verifier *v;
	struct dwarf_side a, b;
	struct func_dwarf x, y;
	unsigned char *want_a, *want_b;	/* per offset: the walk mapped it */
	struct loc_items at_a, at_b;	/* compare_locs()'s */
	size_t since_open;	/* functions checked since the sides were opened */
	int err;		/* they could not be opened (said) */
	FILE *map;		/* KBOLT_DEBUG_MAP: the pairs compared */
	unsigned int what;	/* VERIFY_DEBUG_* */
	struct dwarf_part *part;	/* the part being checked */
};

static void __attribute__((format(printf, 3, 4)))
dwarf_fail(struct dwarf_check *c, uint64_t addr, const char *fmt, ...)
{
	struct dwarf_part *p = c->part;
	char msg[512];
	va_list ap;

	if (p->nr_fails == MAX_REPORTS) {
		p->more++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	p->fails[p->nr_fails++] = (struct dwarf_failure){ addr, xstrdup(msg) };
}

/* The bytes of the section named name, NULL if none */
static Elf_Data *section_data(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type != SHT_NOBITS &&
		    !strcmp(elf_strptr(elf, shstrndx, sh.sh_name) ?: "", name))
			return elf_getdata(scn, NULL);
	return NULL;
}

/*
 * The pages of the file that libdw read, given back (read again when asked: the
 * mapping is the file's and never written), every so many functions: the units read
 * for a function are mostly not read again, and a profile layout of 6.1 kept 300 MB
 * of both files otherwise
 */
#define FUNCS_PER_RELEASE 64

static void side_release(struct dwarf_side *s)
{
	if (s->raw)
		madvise(s->raw, s->raw_size, MADV_DONTNEED);
}

/*
 * libdw finds units by address through .debug_aranges, reading the header of every
 * unit the first time (on 6.1, 100 MB of the file's pages): done at once, and the
 * pages given back, so that handles opened one after the other never hold them together
 */
static void index_units(struct dwarf_side *s)
{
	Dwarf_Aranges *ar;
	size_t nr;

	dwarf_getaranges(s->dbg, &ar, &nr);
	side_release(s);
}

int verify_dwarf_open(const char *path, int *fd, Dwarf **dbg)
{
	*fd = open(path, O_RDONLY);
	if (*fd < 0) {
		pr_err(path, "%s", strerror(errno));
		return -errno;
	}
	*dbg = dwarf_begin(*fd, DWARF_C_READ);
	if (!*dbg) {
		pr_err(path, "verify: no DWARF to check: %s", dwarf_errmsg(-1));
		return -EINVAL;
	}
	return 0;
}

static int side_open(struct dwarf_side *s, const char *path)
{
	int err = verify_dwarf_open(path, &s->fd, &s->dbg);

	if (err)
		return err;
	s->cfi = dwarf_getcfi(s->dbg);	/* owned by dbg */
	s->raw = elf_rawfile(dwarf_getelf(s->dbg), &s->raw_size);
	s->loclists = section_data(dwarf_getelf(s->dbg), ".debug_loclists");
	s->loc = section_data(dwarf_getelf(s->dbg), ".debug_loc");
	index_units(s);
	return 0;
}

static void side_close(struct dwarf_side *s)
{
	free(s->frame);
	if (s->dbg)
		dwarf_end(s->dbg);
	if (s->fd >= 0)
		close(s->fd);
	free(s->progs);
	free(s->units);
	*s = (struct dwarf_side){ .fd = -1 };
}

/*
 * libdw keeps the rows of every unit it decoded until dwarf_end(): a random layout
 * reads them all (960 MB in all on 6.1).  The functions come in address order, which is
 * mostly unit order, so both images are opened afresh every so many functions
 * (on 6.1, every 2048: 15 s and 690 MB in all; every 256: 38 s and 490 MB).
 */
#define FUNCS_PER_OPEN 2048

static int cmp_prog(const void *x, const void *y)
{
	const struct prog_range *p = x, *q = y;

	return p->lo < q->lo ? -1 : p->lo > q->lo;
}

/* The pc ranges of every top-level DIE of the CU (subprograms), sorted */
static void load_progs(struct dwarf_side *s)
{
	Dwarf_Die die;
	uint32_t ordinal = 0;

	s->nr_progs = 0;
	if (dwarf_child(&s->cu, &die))
		return;
	do {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;

		if (dwarf_tag(&die) == DW_TAG_subprogram)
			while ((it = dwarf_ranges(&die, it, &base, &lo, &hi)) > 0) {
				GROW(s->progs, s->progs_cap, s->nr_progs + 1);
				s->progs[s->nr_progs++] = (struct prog_range){
					lo, hi, dwarf_dieoffset(&die), ordinal };
			}
		ordinal++;
	} while (!dwarf_siblingof(&die, &die));
	qsort(s->progs, s->nr_progs, sizeof(*s->progs), cmp_prog);
}

/*
 * Every unit's ranges, from its own DIE: Clang writes .debug_aranges only for
 * assembler units (-gdwarf-aranges is GCC's default, not Clang's), and libdw's
 * dwarf_addrdie() reads nothing else
 */
static void load_units(struct dwarf_side *s)
{
	Dwarf_Off off = 0, next;
	size_t hsize;

	s->have_units = true;
	while (!dwarf_nextcu(s->dbg, off, &next, &hsize, NULL, NULL, NULL)) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t it = 0;
		Dwarf_Die cu;

		if (dwarf_offdie(s->dbg, off + hsize, &cu))
			while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
				GROW(s->units, s->units_cap, s->nr_units + 1);
				s->units[s->nr_units++] = (struct prog_range){ lo, hi, off + hsize, 0 };
			}
		off = next;
	}
	if (s->nr_units)
		qsort(s->units, s->nr_units, sizeof(*s->units), cmp_prog);
	side_release(s);
}

/* The unit whose ranges hold addr, by load_units()' index */
static Dwarf_Die *unit_by_ranges(struct dwarf_side *s, uint64_t addr, Dwarf_Die *cu)
{
	size_t i;

	if (!s->have_units)
		load_units(s);
	i = upper_bound_u64(s->units, s->nr_units, sizeof(*s->units),
			    offsetof(struct prog_range, lo), addr);
	while (i-- > 0)		/* ranges of units may nest (an assembler unit's) */
		if (addr < s->units[i].hi)
			return dwarf_offdie(s->dbg, s->units[i].die, cu);
	return NULL;
}

/* The CU holding addr made current; false if the image has no DWARF there */
static bool find_cu(struct dwarf_side *s, uint64_t addr)
{
	Dwarf_Die cu;
	size_t nr_files;

	if (!dwarf_addrdie(s->dbg, addr, &cu) && !unit_by_ranges(s, addr, &cu))
		return false;
	if (s->have_cu && dwarf_dieoffset(&cu) == s->cu_off)
		return true;
	s->cu = cu;
	s->cu_off = dwarf_dieoffset(&cu);
	if (dwarf_cu_info(cu.cu, &s->version, NULL, NULL, NULL, NULL, NULL, NULL))
		s->version = 0;
	s->have_cu = true;
	if (dwarf_getsrcfiles(&s->cu, &s->files, &nr_files))
		s->files = NULL;
	s->have_progs = false;
	return true;
}

static uint32_t new_node(struct func_dwarf *fd, uint32_t parent, const struct scope_node *tmpl)
{
	GROW(fd->nodes, fd->nodes_cap, fd->nr_nodes + 1);
	fd->nodes[fd->nr_nodes] = *tmpl;
	fd->nodes[fd->nr_nodes].parent = parent;
	return fd->nr_nodes++;
}

static void describe_scope(struct dwarf_side *s, Dwarf_Die *die, uint32_t ordinal,
			   struct scope_node *n)
{
	Dwarf_Attribute attr;
	Dwarf_Word file = 0;

	memset(n, 0, sizeof(*n));
	n->tag = dwarf_tag(die);
	n->ordinal = ordinal;
	n->name = dwarf_diename(die);	/* follows DW_AT_abstract_origin */
	if (dwarf_attr(die, DW_AT_call_file, &attr) && !dwarf_formudata(&attr, &file) &&
	    s->files)
		n->call_file = dwarf_filesrc(s->files, file, NULL, NULL);
	if (dwarf_attr(die, DW_AT_call_line, &attr))
		dwarf_formudata(&attr, &n->call_line);
	if (dwarf_attr(die, DW_AT_call_column, &attr))
		dwarf_formudata(&attr, &n->call_column);
}

static void add_point(struct func_dwarf *fd, Dwarf_Die *die, unsigned int at, bool end)
{
	Dwarf_Attribute attr;
	Dwarf_Addr value;

	if (!dwarf_attr(die, at, &attr) || dwarf_formaddr(&attr, &value))
		return;
	GROW(fd->points, fd->points_cap, fd->nr_points + 1);
	fd->points[fd->nr_points++] = (struct dwarf_point){ dwarf_dieoffset(die), value, at,
							    end };
}

/* The attributes of class loclist (DWARF 5 section 7.5.5) */
static const unsigned int loc_attrs[] = {
	DW_AT_location, DW_AT_frame_base, DW_AT_static_link, DW_AT_string_length,
	DW_AT_return_addr, DW_AT_data_member_location, DW_AT_use_location,
	DW_AT_vtable_elem_location, DW_AT_segment,
};

static bool is_list_form(const struct dwarf_side *s, unsigned int form)
{
	return form == DW_FORM_sec_offset || form == DW_FORM_loclistx ||
	       (s->version < 4 && (form == DW_FORM_data4 || form == DW_FORM_data8));
}

static uint64_t get_uleb(const unsigned char **p, const unsigned char *end, bool *bad)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; *p < end; shift += 7) {
		unsigned char c = *(*p)++;

		if (shift < 64)
			v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	*bad = true;
	return 0;
}

/*
 * Where the view pairs of die's location list are (DW_AT_GNU_locviews: an offset in
 * the list's section, where libdw does not read them): 1, 0 if it has none, -1 if the
 * offset cannot be read
 */
static int find_views(struct dwarf_side *s, Dwarf_Die *die, const unsigned char **p,
		      const unsigned char **end)
{
	Elf_Data *d = s->version >= 5 ? s->loclists : s->loc;
	Dwarf_Attribute attr;
	Dwarf_Word off;

	if (!dwarf_attr(die, DW_AT_GNU_locviews, &attr))
		return 0;
	if (!d || dwarf_formudata(&attr, &off) || off > d->d_size)
		return -1;
	*p = (const unsigned char *)d->d_buf + off;
	*end = (const unsigned char *)d->d_buf + d->d_size;
	return 1;
}

/*
 * The location list of die's attribute at, if it has one: its entries (and their
 * views, for DW_AT_location) in fd->locs; bad, if libdw cannot read it
 */
static void add_loc_var(struct dwarf_side *s, struct func_dwarf *fd, Dwarf_Die *die,
			unsigned int at)
{
	const unsigned char *vp = NULL, *vend = NULL;
	Dwarf_Attribute attr;
	Dwarf_Addr base, lo, hi;
	Dwarf_Op *expr;
	size_t len;
	ptrdiff_t it = 0;
	struct loc_var *v;
	int views = 0;
	bool bad;

	if (!dwarf_attr(die, at, &attr) || !is_list_form(s, dwarf_whatform(&attr)))
		return;
	if (at == DW_AT_location)
		views = find_views(s, die, &vp, &vend);
	bad = views < 0;
	GROW(fd->vars, fd->vars_cap, fd->nr_vars + 1);
	v = &fd->vars[fd->nr_vars++];
	*v = (struct loc_var){ dwarf_dieoffset(die), at, fd->nr_locs, 0, UINT64_MAX, 0,
			       false };
	while ((it = dwarf_getlocations(&attr, it, &base, &lo, &hi, &expr, &len)) > 0) {
		struct loc_range r = { lo, hi, 0, 0, expr, len };

		v->lo = lo < v->lo ? lo : v->lo;
		v->hi = hi > v->hi ? hi : v->hi;
		if (views > 0) {
			r.vb = get_uleb(&vp, vend, &bad);
			r.ve = get_uleb(&vp, vend, &bad);
		}
		GROW(fd->locs, fd->locs_cap, fd->nr_locs + 1);
		fd->locs[fd->nr_locs++] = r;
	}
	v->nr = fd->nr_locs - v->first;
	v->bad = it < 0 || bad;
}

static void add_loc_vars(struct dwarf_side *s, struct func_dwarf *fd, Dwarf_Die *die)
{
	if (!fd->want_locs)
		return;
	for (size_t k = 0; k < ARRAY_SIZE(loc_attrs); k++)
		add_loc_var(s, fd, die, loc_attrs[k]);
}

/* The code addresses of a call site or a label, child of a scope */
static void add_child_points(struct func_dwarf *fd, Dwarf_Die *die, int tag)
{
	if (tag == DW_TAG_call_site) {
		add_point(fd, die, DW_AT_call_pc, false);
		add_point(fd, die, DW_AT_call_return_pc, true);
	} else if (tag == DW_TAG_GNU_call_site) {
		add_point(fd, die, DW_AT_low_pc, true);		/* GCC's return address */
	} else if (tag == DW_TAG_label) {
		add_point(fd, die, DW_AT_low_pc, false);
	}
}

/*
 * die's scope pushed onto the chain of every offset of [start, start + size) its
 * ranges hold; then its children's, all of them: a block whose code the layout
 * removed (a jmp) has an empty range, but its call sites and labels are compared.
 * Runs of offsets with one chain share a node.  The code addresses of the DIEs are
 * collected on the way.
 */
static void apply_scope(struct dwarf_side *s, struct func_dwarf *fd, Dwarf_Die *die,
			uint32_t ordinal, uint64_t start, uint64_t size)
{
	Dwarf_Addr base, lo, hi;
	struct scope_node n;
	ptrdiff_t it = 0;
	Dwarf_Die child;
	uint32_t k = 0;

	describe_scope(s, die, ordinal, &n);
	add_point(fd, die, DW_AT_entry_pc, false);
	add_loc_vars(s, fd, die);
	while ((it = dwarf_ranges(die, it, &base, &lo, &hi)) > 0) {
		uint32_t last_parent = UINT32_MAX, last_node = 0;

		if (hi <= start || lo >= start + size)
			continue;
		for (uint64_t a = lo < start ? start : lo; a < hi && a < start + size; a++) {
			uint32_t *c = &fd->chain[a - start];

			if (*c != last_parent) {
				last_parent = *c;
				last_node = new_node(fd, *c, &n);
			}
			*c = last_node;
		}
	}
	if (dwarf_child(die, &child))
		return;
	do {
		int tag = dwarf_tag(&child);

		if (tag == DW_TAG_lexical_block || tag == DW_TAG_inlined_subroutine) {
			apply_scope(s, fd, &child, k, start, size);
		} else {
			add_child_points(fd, &child, tag);
			add_loc_vars(s, fd, &child);
		}
		k++;
	} while (!dwarf_siblingof(&child, &child));
}

static void load_scopes(struct dwarf_side *s, struct func_dwarf *fd, uint64_t start,
			uint64_t size)
{
	size_t i = upper_bound_u64(s->progs, s->nr_progs, sizeof(*s->progs),
				   offsetof(struct prog_range, lo), start);
	Dwarf_Off done = 0;

	if (!s->have_progs) {
		load_progs(s);
		s->have_progs = true;
		i = upper_bound_u64(s->progs, s->nr_progs, sizeof(*s->progs),
				    offsetof(struct prog_range, lo), start);
	}
	/* ranges start in order: one starting before start may still reach into it */
	for (i = i ? i - 1 : 0; i < s->nr_progs && s->progs[i].lo < start + size; i++) {
		Dwarf_Die die;

		if (s->progs[i].hi <= start || s->progs[i].die == done ||
		    !dwarf_offdie(s->dbg, s->progs[i].die, &die))
			continue;
		done = s->progs[i].die;	/* its ranges are all applied at once */
		apply_scope(s, fd, &die, s->progs[i].ordinal, start, size);
	}
}

static uint64_t line_addr(Dwarf_Lines *lines, size_t k)
{
	Dwarf_Addr a = 0;

	dwarf_lineaddr(dwarf_onesrcline(lines, k), &a);
	return a;
}

static bool is_end_sequence(Dwarf_Lines *lines, size_t k)
{
	bool end = false;

	dwarf_lineendsequence(dwarf_onesrcline(lines, k), &end);
	return end;
}

/*
 * Per offset marked in want: the rows starting there, or the one covering it.  The
 * CU's rows are sorted by address (libdw sorts them).
 */
static void load_rows(struct dwarf_side *s, struct func_dwarf *fd, uint64_t start,
		      uint64_t size, const unsigned char *want)
{
	size_t lo = 0, hi;

	if (dwarf_getsrclines(&s->cu, &fd->lines, &fd->nr_lines)) {
		fd->lines = NULL;
		fd->nr_lines = 0;
	}
	hi = fd->nr_lines;
	while (lo < hi) {	/* the first row at or after start */
		size_t mid = lo + (hi - lo) / 2;

		if (line_addr(fd->lines, mid) < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint64_t off = 0; off < size; off++) {
		uint64_t a = start + off;
		size_t first, nr = 0;

		while (lo < fd->nr_lines && line_addr(fd->lines, lo) < a)
			lo++;
		if (!want[off])
			continue;
		first = lo;
		for (size_t k = lo; k < fd->nr_lines && line_addr(fd->lines, k) == a; k++)
			if (!is_end_sequence(fd->lines, k) && nr < UINT16_MAX)
				nr++;
		/* the end of a sequence at a sorts first: skip it */
		while (nr && is_end_sequence(fd->lines, first))
			first++;
		if (!nr && (!first || is_end_sequence(fd->lines, first - 1)))
			first = UINT32_MAX;	/* no row: outside every sequence */
		else if (!nr)
			first--;
		fd->row_first[off] = first;
		fd->nr_rows[off] = nr;
	}
}

static bool same_str(const char *x, const char *y)
{
	return x == y || (x && y && !strcmp(x, y));
}

static bool same_row(Dwarf_Line *x, Dwarf_Line *y)
{
	int lx = 0, ly = 0, cx = 0, cy = 0;
	bool bx[4] = { 0 }, by[4] = { 0 };
	unsigned int ux[3] = { 0 }, uy[3] = { 0 };

	dwarf_lineno(x, &lx);
	dwarf_lineno(y, &ly);
	dwarf_linecol(x, &cx);
	dwarf_linecol(y, &cy);
	dwarf_linebeginstatement(x, &bx[0]);
	dwarf_linebeginstatement(y, &by[0]);
	dwarf_lineblock(x, &bx[1]);
	dwarf_lineblock(y, &by[1]);
	dwarf_lineprologueend(x, &bx[2]);
	dwarf_lineprologueend(y, &by[2]);
	dwarf_lineepiloguebegin(x, &bx[3]);
	dwarf_lineepiloguebegin(y, &by[3]);
	dwarf_lineisa(x, &ux[0]);
	dwarf_lineisa(y, &uy[0]);
	dwarf_linediscriminator(x, &ux[1]);
	dwarf_linediscriminator(y, &uy[1]);
	dwarf_lineop_index(x, &ux[2]);
	dwarf_lineop_index(y, &uy[2]);
	return lx == ly && cx == cy && !memcmp(bx, by, sizeof(bx)) && !memcmp(ux, uy, sizeof(ux)) &&
	       same_str(dwarf_linesrc(x, NULL, NULL), dwarf_linesrc(y, NULL, NULL));
}

static const char *row_str(const struct func_dwarf *fd, uint32_t first, char *buf, size_t size)
{
	Dwarf_Line *l;
	int line = 0;
	const char *file;

	if (first == UINT32_MAX)
		return "no row";
	l = dwarf_onesrcline(fd->lines, first);
	file = dwarf_linesrc(l, NULL, NULL);
	dwarf_lineno(l, &line);
	snprintf(buf, size, "%s:%d", file ? file : "?", line);
	return buf;
}

/*
 * The rows an instruction has: those starting at it, or the one covering it.  A block
 * that moved may get a copy of the row that covered it where a row now has to start:
 * the same row, so one covering row and one starting row compare equal.
 */
static unsigned int nr_effective(const struct func_dwarf *fd, uint64_t off)
{
	if (fd->row_first[off] == UINT32_MAX)
		return 0;
	return fd->nr_rows[off] ? fd->nr_rows[off] : 1;
}

static void compare_rows(struct dwarf_check *c, const struct vfunc *f, uint64_t o,
			 const struct func_dwarf *x, const struct func_dwarf *y)
{
	uint32_t n = f->map[o];
	uint32_t fx = x->row_first[o], fy = y->row_first[n];
	unsigned int nr = nr_effective(x, o);
	bool same = nr == nr_effective(y, n);
	char bx[256], by[256];

	for (unsigned int k = 0; same && k < nr; k++)
		same = same_row(dwarf_onesrcline(x->lines, fx + k),
				dwarf_onesrcline(y->lines, fy + k));
	if (!same)
		dwarf_fail(c, f->sym->addr + o, "debug info: line rows at new +0x%x (%s, %u "
			   "starting there) are not the old ones (%s, %u)", n,
			   row_str(y, fy, by, sizeof(by)), y->nr_rows[n],
			   row_str(x, fx, bx, sizeof(bx)), x->nr_rows[o]);
}

/*
 * A jmp at new offset n that no old instruction maps to (want 2): one the layout added,
 * or an old plain jmp, which the walk follows rather than maps.  Either has a line row
 * (an added one the row of the block it ends, an old one its own) where every old
 * instruction had one (covered: some GCC .cold parts begin before their first row).
 */
static void check_jmp_rows(struct dwarf_check *c, const struct vfunc *f, uint32_t n,
			   const struct func_dwarf *y)
{
	if (!y->nr_rows[n] && y->row_first[n] == UINT32_MAX)
		dwarf_fail(c, f->sym->addr, "debug info: no line row covers the jmp at new "
			   "+0x%x", n);
}

static bool same_node(const struct scope_node *p, const struct scope_node *q)
{
	return p->tag == q->tag && p->ordinal == q->ordinal && p->call_line == q->call_line &&
	       p->call_column == q->call_column && same_str(p->name, q->name) &&
	       same_str(p->call_file, q->call_file);
}

static const char *chain_str(const struct func_dwarf *fd, uint32_t k, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = 0;
	for (; k && len + 1 < size; k = fd->nodes[k].parent) {
		const struct scope_node *n = &fd->nodes[k];

		len += snprintf(buf + len, size - len, "%s%s", len ? " in " : "",
				n->name ? n->name : n->tag == DW_TAG_lexical_block ? "{block}" :
				"?");
	}
	return len ? buf : "none";
}

static void compare_scopes(struct dwarf_check *c, const struct vfunc *f, uint64_t o,
			   const struct func_dwarf *x, const struct func_dwarf *y)
{
	uint32_t p = x->chain[o], q = y->chain[f->map[o]];
	char bx[256], by[256];

	for (; p && q; p = x->nodes[p].parent, q = y->nodes[q].parent)
		if (!same_node(&x->nodes[p], &y->nodes[q]))
			break;
	if (!p && !q)
		return;
	dwarf_fail(c, f->sym->addr + o, "debug info: scopes at new +0x%x (%s) are not the "
		   "old ones (%s)", f->map[o], chain_str(y, y->chain[f->map[o]], by, sizeof(by)),
		   chain_str(x, x->chain[o], bx, sizeof(bx)));
}

/* The start of the old instruction of f that the walk reached and that ends at off */
static uint64_t reached_ending_at(const struct vfunc *f, uint64_t off, bool *found)
{
	*found = false;
	for (uint64_t k = 1; k <= 15 && k <= off; k++)
		if (f->olen[off - k] == k) {
			*found = true;
			return off - k;
		}
	return 0;
}

/* The end of the new instruction at n (offset in f) */
static uint64_t new_insn_end(const struct vfunc *f, uint64_t n)
{
	for (n++; n < f->sym->size && f->cover[n] == 2; n++)
		;
	return n;
}

static bool is_int3(struct kmeta_image *img, uint64_t addr)
{
	struct kmeta_insn i;

	return !kmeta_insn_decode(img, addr, &i) && i.kind == KI_TRAP && i.len == 1 &&
	       (i.flags & KIF_INT);
}

/*
 * An old plain jmp at o that the walk followed (a tail call to the function's own
 * start, say), and the new instruction ending at q: a jmp to the same place?
 */
static bool same_jmp_ending(struct verifier *v, const struct vfunc *f, uint64_t o, uint64_t q)
{
	struct kmeta_insn i, j;

	for (uint64_t k = 1; k <= 5 && k <= q - f->sym->addr; k++) {
		uint64_t n = q - k - f->sym->addr;

		if (f->cover[n] != 1 || new_insn_end(f, n) != q - f->sym->addr)
			continue;
		return !kmeta_insn_decode(v->a, o, &i) && i.kind == KI_JMP &&
		       !kmeta_insn_decode(v->b, q - k, &j) && j.kind == KI_JMP &&
		       equiv(v, i.target, j.target);
	}
	return false;
}

/*
 * Is q where the walks put old code address a (end: the end of an instruction)?  A
 * point: the same place modulo plain jmps (equiv()), or a itself where the walk
 * reached no instruction (padding; a jmp it followed counts as reached).  An end:
 * the new end of the walked instruction that ended at a (a followed jmp: the end of a
 * jmp to the same place), or of the int3 after it (GCC's return address of a tail
 * call through a thunk is after its int3, which no walk reaches), or a itself.
 */
static bool is_new_point(struct verifier *v, uint64_t a, uint64_t q, bool end)
{
	struct vfunc *f = vfunc_containing(v, a - end);
	uint64_t off, st, n;
	bool found, int3 = false;

	if (!f)
		return q == a;
	if (!end)
		return equiv(v, a, q) || (q == a && !f->olen[a - f->sym->addr]);
	off = a - f->sym->addr;
	st = reached_ending_at(f, off, &found);
	if (!found && off && is_int3(v->a, a - 1)) {
		st = reached_ending_at(f, off - 1, &found);
		int3 = true;
	}
	if (!found)
		return q == a;
	if (f->map[st] == UNMAPPED)
		return !int3 && same_jmp_ending(v, f, f->sym->addr + st, q);
	n = new_insn_end(f, f->map[st]);
	if (int3 && !is_int3(v->b, f->sym->addr + n))
		return false;
	return q == f->sym->addr + n + int3;
}

static const char *point_name(unsigned int at)
{
	return at == DW_AT_entry_pc ? "DW_AT_entry_pc" : at == DW_AT_call_pc ? "DW_AT_call_pc" :
	       at == DW_AT_call_return_pc ? "DW_AT_call_return_pc" : "DW_AT_low_pc";
}

/* The code addresses of the DIEs of f's scopes, each where its code went */
static void compare_points(struct dwarf_check *c, const struct vfunc *f,
			   const struct func_dwarf *x, const struct func_dwarf *y)
{
	if (x->nr_points != y->nr_points) {
		dwarf_fail(c, f->sym->addr, "debug info: %zu code addresses in the DIEs of "
			   "its scopes, %zu in the new image", x->nr_points, y->nr_points);
		return;
	}
	for (size_t k = 0; k < x->nr_points; k++) {
		const struct dwarf_point *p = &x->points[k], *q = &y->points[k];

		if (p->at != q->at || p->end != q->end)
			dwarf_fail(c, p->value, "debug info: the DIE at 0x%" PRIx64 " has no "
				   "%s in the new image", (uint64_t)p->die, point_name(p->at));
		else if (!is_new_point(c->v, p->value, q->value, p->end))
			dwarf_fail(c, p->value, "debug info: %s of the DIE at 0x%" PRIx64
				   " is 0x%" PRIx64 " in the new image, where the old code is "
				   "not", point_name(p->at), (uint64_t)q->die, (uint64_t)q->value);
	}
}

/*
 * The block an operation holds, whose address libdw gives in number2 (DWARF 5 section
 * 2.5.1): false if it holds none
 */
static bool op_block(const Dwarf_Op *op, const unsigned char **p, size_t *len)
{
	switch (op->atom) {
	case DW_OP_implicit_value:
	case DW_OP_entry_value:
	case DW_OP_GNU_entry_value:
		*p = (const unsigned char *)(uintptr_t)op->number2;
		*len = op->number;
		return true;
	case DW_OP_const_type:		/* a size byte, then the constant */
	case DW_OP_GNU_const_type:
		*p = (const unsigned char *)(uintptr_t)op->number2;
		*len = 1 + **p;
		return true;
	default:
		return false;
	}
}

/* Expressions ordered by operation: operands, and the blocks they hold, by value */
static int cmp_ops(const Dwarf_Op *x, size_t nx, const Dwarf_Op *y, size_t ny)
{
	if (nx != ny)
		return nx < ny ? -1 : 1;
	for (size_t k = 0; k < nx; k++) {
		const unsigned char *bx, *by;
		size_t lx, ly;

		if (x[k].atom != y[k].atom)
			return x[k].atom < y[k].atom ? -1 : 1;
		if (x[k].number != y[k].number)
			return x[k].number < y[k].number ? -1 : 1;
		if (op_block(&x[k], &bx, &lx) && op_block(&y[k], &by, &ly)) {
			if (lx != ly)
				return lx < ly ? -1 : 1;
			if (memcmp(bx, by, lx))
				return memcmp(bx, by, lx);
		} else if (x[k].number2 != y[k].number2) {
			return x[k].number2 < y[k].number2 ? -1 : 1;
		}
	}
	return 0;
}

static bool same_ops(const Dwarf_Op *x, size_t nx, const Dwarf_Op *y, size_t ny)
{
	return !x == !y && !cmp_ops(x, nx, y, ny);
}

/*
 * What entry r says at address x, in *it; false if nothing: an entry holds every row
 * (view) of the instructions it covers, from view vb of those at lo, to before view ve
 * of those at hi (an empty range: from vb to ve of the rows at lo)
 */
static bool entry_at(const struct loc_range *r, Dwarf_Addr x, struct loc_item *it)
{
	Dwarf_Word from, to;

	if (r->lo == x && r->hi == x) {
		from = r->vb;
		to = r->ve;
	} else if (r->lo <= x && x < r->hi) {
		from = r->lo == x ? r->vb : 0;
		to = UINT64_MAX;
	} else if (r->lo < x && r->hi == x) {
		from = 0;
		to = r->ve;
	} else {
		return false;
	}
	*it = (struct loc_item){ from, to, r->expr, r->len };
	return from < to;
}

static int cmp_item(const void *p, const void *q)
{
	const struct loc_item *x = p, *y = q;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return cmp_ops(x->expr, x->len, y->expr, y->len);
}

/* What the entries of v say at x, sorted, into out */
static void items_at(const struct func_dwarf *fd, const struct loc_var *v, Dwarf_Addr x,
		     struct loc_items *out)
{
	struct loc_item it;

	out->nr = 0;
	if (x < v->lo || x > v->hi)
		return;
	for (size_t k = v->first; k < v->first + v->nr; k++)
		if (entry_at(&fd->locs[k], x, &it)) {
			GROW(out->v, out->cap, out->nr + 1);
			out->v[out->nr++] = it;
		}
	if (out->nr > 1)
		qsort(out->v, out->nr, sizeof(*out->v), cmp_item);
}

static const char *loc_attr_name(unsigned int at)
{
	return at == DW_AT_location ? "DW_AT_location" :
	       at == DW_AT_frame_base ? "DW_AT_frame_base" : "a location attribute";
}

/* The location lists of the DIEs of f's scopes: the same ones, each readable */
static bool same_loc_vars(struct dwarf_check *c, const struct vfunc *f,
			  const struct func_dwarf *x, const struct func_dwarf *y)
{
	if (x->nr_vars != y->nr_vars) {
		dwarf_fail(c, f->sym->addr, "debug info: %zu location lists in the DIEs of "
			   "its scopes, %zu in the new image", x->nr_vars, y->nr_vars);
		return false;
	}
	for (size_t k = 0; k < x->nr_vars; k++) {
		const struct loc_var *p = &x->vars[k], *q = &y->vars[k];

		if (p->die != q->die || p->at != q->at) {
			dwarf_fail(c, f->sym->addr, "debug info: the DIE at 0x%" PRIx64
				   " has no %s in the new image", (uint64_t)p->die,
				   loc_attr_name(p->at));
			return false;
		}
		if (q->bad && !p->bad) {
			dwarf_fail(c, f->sym->addr, "debug info: %s of the DIE at 0x%" PRIx64
				   " cannot be read in the new image", loc_attr_name(p->at),
				   (uint64_t)p->die);
			return false;
		}
	}
	return true;
}

/* Each location list says at the new place of the instruction at o what it said */
static void compare_locs(struct dwarf_check *c, const struct vfunc *f, uint64_t o,
			 const struct func_dwarf *x, const struct func_dwarf *y)
{
	Dwarf_Addr a = f->sym->addr + o, b = f->sym->addr + f->map[o];

	for (size_t k = 0; k < x->nr_vars; k++) {
		const struct loc_var *p = &x->vars[k];
		bool same;

		if (p->bad)
			continue;	/* not kbolt's to keep */
		items_at(x, p, a, &c->at_a);
		items_at(y, &y->vars[k], b, &c->at_b);
		same = c->at_a.nr == c->at_b.nr;
		for (size_t i = 0; same && i < c->at_a.nr; i++)
			same = !cmp_item(&c->at_a.v[i], &c->at_b.v[i]);
		if (!same)
			dwarf_fail(c, a, "debug info: %s of the DIE at 0x%" PRIx64 " at new "
				   "+0x%x is not the old one (%zu entries hold it, %zu at the old "
				   "address)", loc_attr_name(p->at), (uint64_t)p->die, f->map[o],
				   c->at_b.nr, c->at_a.nr);
	}
}

/* x86-64's DWARF registers 0-16: the general registers and the return address */
#define FRAME_REGS 17

/* The row of s's CFI at addr (NULL: no FDE covers it), kept for the next address */
static Dwarf_Frame *frame_at(struct dwarf_side *s, uint64_t addr)
{
	bool signal;

	if (s->frame && addr >= s->frame_lo && addr < s->frame_hi)
		return s->frame;
	free(s->frame);
	s->frame = NULL;
	if (!s->cfi || dwarf_cfi_addrframe(s->cfi, addr, &s->frame))
		return NULL;
	if (dwarf_frame_info(s->frame, &s->frame_lo, &s->frame_hi, &signal) < 0)
		s->frame_lo = s->frame_hi = 0;	/* asked again next time */
	return s->frame;
}

/* Do frames x and y give the CFA (reg -1), or register reg, the same rule? */
static bool same_frame_rule(Dwarf_Frame *x, Dwarf_Frame *y, int reg)
{
	Dwarf_Op mx[3], my[3], *ox = NULL, *oy = NULL;
	size_t nx = 0, ny = 0;
	int rx, ry;

	if (reg < 0) {
		rx = dwarf_frame_cfa(x, &ox, &nx);
		ry = dwarf_frame_cfa(y, &oy, &ny);
	} else {
		rx = dwarf_frame_register(x, reg, mx, &ox, &nx);
		ry = dwarf_frame_register(y, reg, my, &oy, &ny);
	}
	return rx == ry && (rx < 0 || same_ops(ox, nx, oy, ny));
}

static void compare_frames(struct dwarf_check *c, const struct vfunc *f, uint64_t o)
{
	uint64_t n = f->map[o];
	Dwarf_Frame *x = frame_at(&c->a, f->sym->addr + o), *y = frame_at(&c->b, f->sym->addr + n);
	int reg = -1;

	if (!x || !y) {
		if (x || y)
			dwarf_fail(c, f->sym->addr + o, "debug info: call frame information "
				   "%s at new +0x%" PRIx64 ", %s at the old address",
				   y ? "present" : "missing", n, x ? "present" : "none");
		return;
	}
	for (; reg < FRAME_REGS; reg++)
		if (!same_frame_rule(x, y, reg))
			break;
	if (reg == FRAME_REGS)
		return;
	if (reg < 0)
		dwarf_fail(c, f->sym->addr + o, "debug info: the CFA rule at new +0x%" PRIx64
			   " is not the old one", n);
	else
		dwarf_fail(c, f->sym->addr + o, "debug info: the rule of DWARF register %d "
			   "at new +0x%" PRIx64 " is not the old one", reg, n);
}

static void func_dwarf_init(struct func_dwarf *fd, uint64_t size)
{
	fd->row_first = xrealloc(fd->row_first, size * sizeof(*fd->row_first));
	fd->nr_rows = xrealloc(fd->nr_rows, size * sizeof(*fd->nr_rows));
	fd->chain = xrealloc(fd->chain, size * sizeof(*fd->chain));
	memset(fd->row_first, 0xff, size * sizeof(*fd->row_first));
	memset(fd->nr_rows, 0, size * sizeof(*fd->nr_rows));
	memset(fd->chain, 0, size * sizeof(*fd->chain));
	fd->lines = NULL;
	fd->nr_lines = 0;
	fd->nr_nodes = 0;
	fd->nr_points = 0;
	fd->nr_vars = 0;
	fd->nr_locs = 0;
	new_node(fd, 0, &(struct scope_node){ 0 });	/* the root: no scope */
}

/*
 * One side's view of f: the offsets in want, which its DWARF may not cover at all
 * (false: no unit holds f's start)
 */
static bool load_func(struct dwarf_side *s, struct func_dwarf *fd, uint64_t start,
		      uint64_t size, const unsigned char *want, unsigned int what)
{
	func_dwarf_init(fd, size);
	if (!find_cu(s, start))
		return false;
	if (what & VERIFY_DEBUG_LINES)
		load_rows(s, fd, start, size, want);
	fd->want_locs = what & VERIFY_DEBUG_LOCATIONS;
	if (what & (VERIFY_DEBUG_SCOPES | VERIFY_DEBUG_LOCATIONS))
		load_scopes(s, fd, start, size);
	return true;
}

static void check_func(struct dwarf_check *c, const struct vfunc *f)
{
	uint64_t size = f->sym->size, elf_size = kmeta_elf_size(f->sym);
	struct func_dwarf *x = &c->x, *y = &c->y;
	Dwarf_Off cu;
	bool in_unit, start, locs, covered;

	memset(c->want_a, 0, size);
	memset(c->want_b, 0, size);
	/*
	 * The old code ends at the ELF end: what is mapped past it is the padding after the
	 * function left in place (in_place.c), which no DWARF describes
	 */
	for (uint64_t o = 0; o < elf_size; o++)
		if (f->map[o] != UNMAPPED) {
			c->want_a[o] = 1;
			c->want_b[f->map[o]] = 1;
		}
	for (uint64_t n = 0; n < elf_size; n++)	/* jmps no old instruction maps to */
		if (f->cover[n] == 1 && !c->want_b[n])
			c->want_b[n] = 2;
	in_unit = load_func(&c->a, x, f->sym->addr, size, c->want_a, c->what);
	if (!load_func(&c->b, y, f->sym->addr, size, c->want_b, c->what) && in_unit)
		dwarf_fail(c, f->sym->addr, "debug info: no unit holds it in the new image");
	cu = c->b.cu_off;
	if (c->what & VERIFY_DEBUG_SCOPES)
		compare_points(c, f, x, y);
	locs = (c->what & VERIFY_DEBUG_LOCATIONS) && same_loc_vars(c, f, x, y);
	covered = in_unit && (c->what & VERIFY_DEBUG_LINES);
	for (uint64_t o = 0; covered && o < elf_size; o++)
		covered = !c->want_a[o] || x->row_first[o] != UINT32_MAX;
	for (uint32_t n = 0; covered && n < elf_size; n++)
		if (c->want_b[n] == 2)
			check_jmp_rows(c, f, n, y);
	for (uint64_t o = 0; o < elf_size; o++) {
		if (f->map[o] == UNMAPPED)
			continue;
		/* grown into the padding: still inside its unit, as addr2line finds units */
		if (in_unit && f->map[o] >= elf_size &&
		    (!find_cu(&c->b, f->sym->addr + f->map[o]) || c->b.cu_off != cu))
			dwarf_fail(c, f->sym->addr + o, "debug info: new +0x%x lies outside "
				   "the unit of its function", f->map[o]);
		if (c->what & VERIFY_DEBUG_LINES)
			compare_rows(c, f, o, x, y);
		start = f->olen[o] && (!o || f->olen[o - 1] != f->olen[o] + 1);
		if (c->map && start)
			fprintf(c->map, "%" PRIx64 " %" PRIx64 "\n", f->sym->addr + o,
				f->sym->addr + f->map[o]);
		if (start && (c->what & VERIFY_DEBUG_FRAME))
			compare_frames(c, f, o);	/* rows start at instructions */
		if (start && locs)
			compare_locs(c, f, o, x, y);	/* entries start at instructions */
		if (c->what & VERIFY_DEBUG_SCOPES)
			compare_scopes(c, f, o, x, y);
		c->part->insns += in_unit;	/* compared: DWARF describes it */
	}
	c->part->funcs += in_unit;
}

static void func_dwarf_free(struct func_dwarf *fd)
{
	free(fd->row_first);
	free(fd->nr_rows);
	free(fd->chain);
	free(fd->nodes);
	free(fd->points);
	free(fd->vars);
	free(fd->locs);
}

/*
 * The check of the functions, in parts of FUNCS_PER_PART: each worker of parallel_for()
 * has handles of its own, since libdw's are not to be shared between threads
 * (elfutils' libdw.h), and gives back the pages it read at the start of each part
 */
#define FUNCS_PER_PART FUNCS_PER_RELEASE

struct dwarf_run {
	struct verifier *v;
	struct dwarf_check *checks;	/* per worker */
	struct dwarf_part *parts;
};

static int open_sides(struct dwarf_check *c)
{
	int err = side_open(&c->a, c->v->a->path);

	if (!err)
		err = side_open(&c->b, c->v->b_file);
	c->since_open = 0;
	c->err = err;
	return err;
}

/*
 * The worker's handles of both images made ready for another part: opened afresh
 * every FUNCS_PER_OPEN functions, else their pages given back
 */
static int ready_sides(struct dwarf_check *c)
{
	if (c->err)
		return c->err;	/* said when it happened */
	if (c->since_open < FUNCS_PER_OPEN) {
		side_release(&c->a);
		side_release(&c->b);
		return 0;
	}
	side_close(&c->a);
	side_close(&c->b);
	return open_sides(c);
}

static void check_part(void *arg, size_t k, unsigned int worker)
{
	struct dwarf_run *r = arg;
	struct dwarf_check *c = &r->checks[worker];
	size_t end = (k + 1) * FUNCS_PER_PART;

	c->part = &r->parts[k];
	c->part->err = ready_sides(c);
	for (size_t i = k * FUNCS_PER_PART; !c->part->err && i < end && i < r->v->nr_f; i++) {
		check_func(c, &r->v->f[i]);
		c->since_open++;
	}
}

static void check_init(struct dwarf_check *c, struct verifier *v, unsigned int what,
		       uint64_t max_size)
{
	*c = (struct dwarf_check){ .v = v, .what = what, .a.fd = -1, .b.fd = -1 };
	c->want_a = xmalloc(max_size + 1);
	c->want_b = xmalloc(max_size + 1);
}

static void check_free(struct dwarf_check *c)
{
	free(c->want_a);
	free(c->want_b);
	func_dwarf_free(&c->x);
	func_dwarf_free(&c->y);
	free(c->at_a.v);
	free(c->at_b.v);
	side_close(&c->a);
	side_close(&c->b);
}

/* The parts' failures said in order; the first error of reading, or 0 */
static int report_parts(struct verifier *v, struct dwarf_part *parts, size_t nr,
			size_t *nr_funcs, size_t *nr_insns)
{
	int err = 0;

	for (size_t k = 0; k < nr; k++) {
		struct dwarf_part *p = &parts[k];

		for (size_t i = 0; i < p->nr_fails; i++) {
			verify_fail(v, p->fails[i].addr, "%s", p->fails[i].msg);
			free(p->fails[i].msg);
		}
		v->errors += p->more;
		*nr_funcs += p->funcs;
		*nr_insns += p->insns;
		if (p->err && !err)
			err = p->err;
	}
	return err;
}

int verify_dwarf(struct verifier *v, unsigned int what, size_t *nr_funcs, size_t *nr_insns)
{
	size_t nr_parts = (v->nr_f + FUNCS_PER_PART - 1) / FUNCS_PER_PART;
	const char *map = getenv("KBOLT_DEBUG_MAP");
	/* parallel_for()'s, which gives each worker a part at least */
	unsigned int nr_workers = map ? 1 : parallel_nr_workers();
	struct dwarf_run r = { .v = v };
	uint64_t max = 0;
	int err = 0;

	*nr_funcs = *nr_insns = 0;
	if (!kmeta_find_sec_by_name(v->a, ".debug_info"))
		return 0;	/* no DWARF in ORIG: none to keep true */
	if (nr_workers > nr_parts)
		nr_workers = nr_parts ? nr_parts : 1;
	for (size_t k = 0; k < v->nr_f; k++)
		if (v->f[k].sym->size > max)
			max = v->f[k].sym->size;
	r.checks = xcalloc(nr_workers, sizeof(*r.checks));
	for (unsigned int w = 0; w < nr_workers; w++)
		check_init(&r.checks[w], v, what, max);
	r.parts = xcalloc(nr_parts + 1, sizeof(*r.parts));
	for (unsigned int w = 0; !err && w < nr_workers; w++)
		err = open_sides(&r.checks[w]);
	if (!err && map && !(r.checks[0].map = fopen(map, "w"))) {
		err = -errno;
		pr_err(map, "KBOLT_DEBUG_MAP: %s", strerror(-err));
	}
	if (!err && map) {	/* the pairs in address order: one worker */
		for (size_t k = 0; k < nr_parts; k++)
			check_part(&r, k, 0);
		fclose(r.checks[0].map);
	} else if (!err) {
		parallel_for(nr_parts, check_part, &r);
	}
	if (!err)
		err = report_parts(v, r.parts, nr_parts, nr_funcs, nr_insns);
	for (unsigned int w = 0; w < nr_workers; w++)
		check_free(&r.checks[w]);
	free(r.checks);
	free(r.parts);
	return err;
}
