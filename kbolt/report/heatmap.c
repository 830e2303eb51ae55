// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt heatmap VMLINUX PROFILE [--optimized OUT] -o FILE: where executed code lies in
 * the kernel's text, as in the heatmaps of BOLT's talks.  The text address space is a
 * grid, one row per 64 KiB, one cell per 64-byte i-cache line, rows in address order
 * (rows with no executable section are left out); a cell's colour is, on a log scale,
 * how many times execution ran through it.  With --optimized, a second panel shows
 * where the same executed instructions lie in kbolt's output.  The footprint (lines
 * and 4 KiB pages touched: what the i-cache and the iTLB hold) is printed.
 *
 *   open VMLINUX, read the profile and check it is this kernel's
 *   ranges_from_prof  the straight-line ranges the records imply (needs the image)
 *   add_ranges        the "before" heat
 *   kbolt_verify      with --optimized: proves OUT is VMLINUX with blocks moved, and
 *                     maps every range through its address map: the "after" heat
 *   print, draw       the picture through a temporary file, renamed when complete
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/json.h"
#include "../../common/util.h"
#include "../../kmeta/kmeta.h"
#include "../lib/outfile.h"
#include "../profile/profile.h"
#include "../profile/profile_match.h"
#include "../verify/verify.h"
#include "heatmap.h"

#define CELL_SHIFT 6		/* 64-byte cells: i-cache lines */
#define ROW_SHIFT 16		/* 64 KiB rows */
#define PAGE_SHIFT 12		/* 4 KiB pages: iTLB entries */
#define NR_COLS (1u << (ROW_SHIFT - CELL_SHIFT))
#define CELLS_PER_PAGE (1u << (PAGE_SHIFT - CELL_SHIFT))

enum { BEFORE, AFTER, NR_PANELS };

/* Straight-line code that ran count times: [start, end) */
struct range {
	uint64_t start, end, count;
};

struct span {
	uint64_t start, end;
};

struct footprint {
	size_t lines, pages;
};

struct heatmap {
	const char *path[NR_PANELS];	/* the image each panel shows */
	int nr_panels;
	uint64_t base;			/* address of row 0 */
	size_t nr_rows;
	struct span *text;		/* executable sections, in address order */
	size_t nr_text;
	uint64_t *heat[NR_PANELS];	/* per cell, nr_rows * NR_COLS */
	uint64_t max;			/* of both panels: one colour scale */
	struct footprint fp[NR_PANELS];
	struct range *ranges;
	size_t nr_ranges, ranges_cap;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The executable sections of img, in address order */
static struct span *text_spans(struct kmeta_image *img, size_t *nr)
{
	struct span *text = NULL;

	*nr = 0;
	for (size_t i = 1; i < img->nr_secs; i++) {
		const struct kmeta_sec *s = &img->secs[i];

		if (!(s->flags & SHF_ALLOC) || !(s->flags & SHF_EXECINSTR) || !s->size)
			continue;
		text = xrealloc(text, (*nr + 1) * sizeof(*text));
		text[(*nr)++] = (struct span){ s->addr, s->addr + s->size };
	}
	sort_array(text, *nr, sizeof(*text), cmp_u64);	/* by start */
	return text;
}

/*
 * kbolt rewrites in place: its output has the executable sections of its input.  Else
 * OUT is no output of VMLINUX, and verify would report every difference, not one line.
 */
static int check_optimized(const struct heatmap *h, const char *optimized)
{
	struct kmeta_image *img = kmeta_open(optimized);
	struct span *text;
	size_t nr;
	int err = -EINVAL;

	if (!img)
		return -EINVAL;
	text = text_spans(img, &nr);
	if (nr == h->nr_text && !memcmp(text, h->text, nr * sizeof(*text)))
		err = 0;
	else
		pr_err(optimized, "not an output of kbolt optimize for %s: their executable "
		       "sections differ", h->path[BEFORE]);
	free(text);
	kmeta_close(img);
	return err;
}

/* The grid spans the executable sections: code outside them never runs from the file */
static int init_grid(struct heatmap *h, struct kmeta_image *img)
{
	h->text = text_spans(img, &h->nr_text);
	if (!h->nr_text) {
		pr_err(img->path, "no executable section");
		return -EINVAL;
	}
	h->base = h->text[0].start & ~((1ULL << ROW_SHIFT) - 1);
	for (size_t i = 0; i < h->nr_text; i++) {
		size_t rows = ((h->text[i].end - 1 - h->base) >> ROW_SHIFT) + 1;

		if (rows > h->nr_rows)
			h->nr_rows = rows;
	}
	for (int k = 0; k < NR_PANELS; k++)
		h->heat[k] = xcalloc(h->nr_rows * NR_COLS, sizeof(uint64_t));
	return 0;
}

static uint64_t insn_end(struct kmeta_image *img, uint64_t addr)
{
	int len = kmeta_insn_len(img, addr);

	return addr + (len > 0 ? len : 1);
}

static bool is_exit(const uint64_t *exits, size_t nr, uint64_t addr)
{
	return search_array(&addr, exits, nr, sizeof(*exits), cmp_u64);
}

/*
 * Where straight-line execution leaves: the sources of taken transfers.  Interrupts
 * are not exits: the code they interrupt goes on from the same place; samples are no
 * transfer at all.
 */
static uint64_t *collect_exits(const struct prof *p, size_t *nr)
{
	uint64_t *x = xmalloc((p->nr_edges + 1) * sizeof(*x));

	*nr = 0;
	for (size_t i = 0; i < p->nr_edges; i++)
		if (p->edges[i].kind != PK_FALLTHROUGH && p->edges[i].kind != PK_INT &&
		    prof_is_transfer(&p->edges[i]))
			x[(*nr)++] = p->edges[i].from;
	sort_array(x, *nr, sizeof(*x), cmp_u64);
	return x;
}

static void add_range(struct heatmap *h, uint64_t start, uint64_t end, uint64_t count)
{
	GROW(h->ranges, h->ranges_cap, h->nr_ranges + 1);
	h->ranges[h->nr_ranges++] = (struct range){ start, end, count };
}

/* Execution entered at to, count times: it ran to the next exit in the same function */
static void add_entry(struct heatmap *h, struct kmeta_image *img, const uint64_t *exits,
		      size_t nr, uint64_t to, uint64_t count)
{
	struct kmeta_sym *f = kmeta_find_func_containing(img, to);
	size_t exit = lower_bound_u64(exits, nr, sizeof(*exits), 0, to);
	uint64_t end;

	if (f && exit < nr && exits[exit] < f->addr + f->size)
		end = insn_end(img, exits[exit]);
	else
		end = insn_end(img, to);	/* no exit ahead: the one instruction we know ran */
	add_range(h, to, end, count);
}

/*
 * Each taken transfer enters straight-line code at its target, which then runs to the
 * next exit.  A fall-through record (kbolt's: past a jcc; BOLT's: a whole range)
 * enters at its end only when its start is an exit, a jcc sometimes taken; otherwise
 * the range that reached its start runs on through it and is already counted.  This
 * reads both formats alike and counts each execution once, but for code an interrupt
 * resumes (counted again from the resume point: a small excess).  A sample is heat of
 * its one instruction, as often as it was sampled.
 */
static void ranges_from_prof(struct heatmap *h, struct kmeta_image *img, const struct prof *p)
{
	size_t nr;
	uint64_t *exits = collect_exits(p, &nr);

	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_edge *e = &p->edges[i];

		if (e->kind == PK_SAMPLE) {
			add_range(h, e->from, insn_end(img, e->from), e->count);
			continue;
		}
		if (e->kind == PK_FALLTHROUGH && !is_exit(exits, nr, e->from))
			continue;
		add_entry(h, img, exits, nr, e->to, e->count);
	}
	free(exits);
}

/* Index of the cell of addr, or -1 off the grid */
static long cell_of(const struct heatmap *h, uint64_t addr)
{
	uint64_t c;

	if (addr < h->base)
		return -1;
	c = (addr - h->base) >> CELL_SHIFT;
	return c < h->nr_rows * NR_COLS ? (long)c : -1;
}

static void add_ranges(struct heatmap *h)
{
	for (size_t i = 0; i < h->nr_ranges; i++) {
		const struct range *r = &h->ranges[i];
		long first = cell_of(h, r->start), last = cell_of(h, r->end - 1);

		for (long c = first; first >= 0 && c <= last; c++)
			h->heat[BEFORE][c] += r->count;
	}
}

/*
 * The verifier's map is per byte of every instruction it walked: a range maps byte by
 * byte (blocks it spans may have gone apart), each new cell it touches counted once.
 * Bytes that map nowhere are jmps kbolt removed; jmps it added are not in the profile.
 */
static void map_ranges(struct verifier *v, void *arg)
{
	struct heatmap *h = arg;
	long *cells = NULL;
	size_t cap = 0;

	for (size_t i = 0; i < h->nr_ranges; i++) {
		const struct range *r = &h->ranges[i];
		size_t nr = 0;

		for (uint64_t a = r->start; a < r->end; a++) {
			uint64_t n;
			long c;
			size_t k;

			if (!vmap_place(v, a, &n) || (c = cell_of(h, n)) < 0)
				continue;
			for (k = nr; k > 0 && cells[k - 1] != c; k--)
				;
			if (k)
				continue;
			GROW(cells, cap, nr + 1);
			cells[nr++] = c;
		}
		for (size_t k = 0; k < nr; k++)
			h->heat[AFTER][cells[k]] += r->count;
	}
	free(cells);
	h->nr_panels = NR_PANELS;
}

static void measure(struct heatmap *h)
{
	for (int k = 0; k < h->nr_panels; k++) {
		long last_page = -1;

		for (size_t c = 0; c < h->nr_rows * NR_COLS; c++) {
			if (!h->heat[k][c])
				continue;
			h->fp[k].lines++;
			if ((long)(c / CELLS_PER_PAGE) != last_page)
				h->fp[k].pages++;
			last_page = c / CELLS_PER_PAGE;
			if (h->heat[k][c] > h->max)
				h->max = h->heat[k][c];
		}
	}
}

static const char *const panel_name[NR_PANELS] = { "before", "after" };

static void print_footprint(const struct heatmap *h, const struct heatmap_options *o)
{
	struct json j;

	if (!o->json) {
		for (int k = 0; k < h->nr_panels; k++)
			printf("footprint %s: %zu lines of 64 bytes, %zu pages of 4 KiB (%s)\n",
			       panel_name[k], h->fp[k].lines, h->fp[k].pages, h->path[k]);
		return;
	}
	json_init(&j, stdout, o->pretty);
	json_obj_open(&j);
	for (int k = 0; k < h->nr_panels; k++) {
		json_key(&j, panel_name[k]);
		json_obj_open(&j);
		json_member_str(&j, "file", h->path[k]);
		json_member_u64(&j, "lines", h->fp[k].lines);
		json_member_u64(&j, "pages", h->fp[k].pages);
		json_obj_close(&j);
	}
	json_member_u64(&j, "max_count", h->max);
	json_obj_close(&j);
	json_end(&j);
}

/* ------------------------------------------------------------------ drawing */

/* Colours of the log scale, cold to hot */
static const unsigned char stops[][3] = {
	{ 0x31, 0x36, 0x95 }, { 0x45, 0x75, 0xb4 }, { 0x74, 0xad, 0xd1 }, { 0xfe, 0xe0, 0x90 },
	{ 0xf4, 0x6d, 0x43 }, { 0xa5, 0x00, 0x26 },
};
static const unsigned char rgb_text[3] = { 0xe8, 0xe8, 0xe8 };	/* text that did not run */
static const unsigned char rgb_none[3] = { 0xff, 0xff, 0xff };	/* no code there */
static const unsigned char rgb_gap[3] = { 0x80, 0x80, 0x80 };	/* rows left out */

static void heat_colour(uint64_t count, uint64_t max, unsigned char rgb[3])
{
	double t = max > 1 ? log((double)count) / log((double)max) : 1.0;
	double x = t * (ARRAY_SIZE(stops) - 1);
	unsigned int i = x >= ARRAY_SIZE(stops) - 1 ? ARRAY_SIZE(stops) - 2 : (unsigned int)x;
	double f = x - i;

	for (int c = 0; c < 3; c++)
		rgb[c] = (unsigned char)(stops[i][c] + f * (stops[i + 1][c] - stops[i][c]) + 0.5);
}

/* Does [start, start + 2^shift) hold text? (a row, or a cell) */
static bool has_text(const struct heatmap *h, uint64_t start, unsigned int shift)
{
	uint64_t end = start + (1ULL << shift);

	for (size_t i = 0; i < h->nr_text; i++)
		if (h->text[i].start < end && h->text[i].end > start)
			return true;
	return false;
}

static bool row_has_text(const struct heatmap *h, size_t row)
{
	return has_text(h, h->base + ((uint64_t)row << ROW_SHIFT), ROW_SHIFT);
}

static bool cell_has_text(const struct heatmap *h, size_t cell)
{
	return has_text(h, h->base + ((uint64_t)cell << CELL_SHIFT), CELL_SHIFT);
}

/* The colour of a cell of panel k */
static const unsigned char *cell_colour(const struct heatmap *h, int k, size_t cell,
					unsigned char buf[3])
{
	if (h->heat[k][cell]) {
		heat_colour(h->heat[k][cell], h->max, buf);
		return buf;
	}
	return cell_has_text(h, cell) ? rgb_text : rgb_none;
}

/* Geometry shared by SVG and PNG: cells 1x2 pixels, a gap line where rows are left out */
#define ROW_H 2
#define GAP_H 3
#define PANEL_GAP 40
#define SVG_LEFT 130
#define SVG_TOP 50

/* y of each row shown (relative to the grid's top), -1 for rows left out; the height */
static long *row_positions(const struct heatmap *h, long *height)
{
	long *y = xmalloc(h->nr_rows * sizeof(*y)), pos = 0;
	bool prev = true;

	for (size_t r = 0; r < h->nr_rows; r++) {
		y[r] = -1;
		if (!row_has_text(h, r)) {
			prev = false;
			continue;
		}
		if (!prev)
			pos += GAP_H;
		y[r] = pos;
		pos += ROW_H;
		prev = true;
	}
	*height = pos;
	return y;
}

static void svg_rect(FILE *f, const char *cls, long x, long y, long w, long h,
		     const unsigned char rgb[3])
{
	fprintf(f, "<rect%s%s%s x=\"%ld\" y=\"%ld\" width=\"%ld\" height=\"%ld\" "
		"fill=\"#%02x%02x%02x\"/>\n", cls ? " class=\"" : "", cls ? cls : "",
		cls ? "\"" : "", x, y, w, h, rgb[0], rgb[1], rgb[2]);
}

/* A file name as XML character data */
static void svg_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else
			fputc(*s, f);
	}
}

/* One panel: unexecuted text as runs, each lit cell a rect of class "c" */
static void svg_panel(FILE *f, const struct heatmap *h, int k, const long *y, long x0)
{
	unsigned char rgb[3];

	fprintf(f, "<g id=\"%s\">\n", panel_name[k]);
	fprintf(f, "<text x=\"%ld\" y=\"%d\" font-size=\"13\">%s: ", x0, SVG_TOP - 28,
		panel_name[k]);
	svg_text(f, h->path[k]);
	fprintf(f, ": %zu lines, %zu pages</text>\n", h->fp[k].lines, h->fp[k].pages);
	for (unsigned int col = 0; col < NR_COLS; col += NR_COLS / 4)
		fprintf(f, "<text x=\"%ld\" y=\"%d\" font-size=\"9\">+%uK</text>\n", x0 + col,
			SVG_TOP - 6, (col << CELL_SHIFT) >> 10);
	for (size_t r = 0; r < h->nr_rows; r++) {
		for (unsigned int c = 0; y[r] >= 0 && c < NR_COLS; c++) {
			size_t cell = r * NR_COLS + c, run = c;

			if (h->heat[k][cell] || !cell_has_text(h, cell))
				continue;
			while (run + 1 < NR_COLS && !h->heat[k][cell + run + 1 - c] &&
			       cell_has_text(h, cell + run + 1 - c))
				run++;
			svg_rect(f, NULL, x0 + c, SVG_TOP + y[r], run - c + 1, ROW_H, rgb_text);
			c = run;
		}
		for (unsigned int c = 0; y[r] >= 0 && c < NR_COLS; c++) {
			size_t cell = r * NR_COLS + c;

			if (!h->heat[k][cell])
				continue;
			heat_colour(h->heat[k][cell], h->max, rgb);
			svg_rect(f, "c", x0 + c, SVG_TOP + y[r], 1, ROW_H, rgb);
		}
	}
	fprintf(f, "</g>\n");
}

/*
 * Row addresses: every 1 MiB on the left, and where rows resume after a gap (the
 * next executable section, often close to the last label) on the right
 */
static void svg_axis(FILE *f, const struct heatmap *h, const long *y)
{
	long right = SVG_LEFT + h->nr_panels * (NR_COLS + PANEL_GAP) - PANEL_GAP;
	long last = -100, last_gap = -100;

	for (size_t r = 0; r < h->nr_rows; r++) {
		uint64_t addr = h->base + ((uint64_t)r << ROW_SHIFT);
		bool gap = r && y[r - 1] < 0;

		if (y[r] < 0)
			continue;
		if ((r == 0 || !(addr & 0xfffff)) && y[r] - last >= 10) {
			fprintf(f, "<text x=\"%d\" y=\"%ld\" font-size=\"9\" text-anchor=\"end\">"
				"%016" PRIx64 "</text>\n", SVG_LEFT - 6, SVG_TOP + y[r] + 6, addr);
			last = y[r];
		}
		if (!gap)
			continue;
		svg_rect(f, NULL, SVG_LEFT, SVG_TOP + y[r] - GAP_H + 1, right - SVG_LEFT, 1, rgb_gap);
		if (y[r] - last_gap >= 10) {
			fprintf(f, "<text x=\"%ld\" y=\"%ld\" font-size=\"9\">%016" PRIx64
				"</text>\n", right + 6, SVG_TOP + y[r] + 6, addr);
			last_gap = y[r];
		}
	}
}

static void svg_legend(FILE *f, const struct heatmap *h, long top)
{
	unsigned char rgb[3];

	fprintf(f, "<g id=\"legend\">\n<text x=\"%d\" y=\"%ld\" font-size=\"11\">executions "
		"of a 64-byte line (log scale); a row is 64 KiB</text>\n", SVG_LEFT, top + 12);
	for (int i = 0; i <= 10; i++) {
		uint64_t v = (uint64_t)llround(exp(i / 10.0 * log((double)(h->max > 1 ? h->max : 1))));

		heat_colour(v ? v : 1, h->max, rgb);
		svg_rect(f, NULL, SVG_LEFT + 60 * i, top + 20, 60, 12, rgb);
		fprintf(f, "<text x=\"%d\" y=\"%ld\" font-size=\"9\">%" PRIu64 "</text>\n",
			SVG_LEFT + 60 * i, top + 44, v);
	}
	svg_rect(f, NULL, SVG_LEFT + 700, top + 20, 60, 12, rgb_text);
	fprintf(f, "<text x=\"%d\" y=\"%ld\" font-size=\"9\">not run</text>\n</g>\n",
		SVG_LEFT + 700, top + 44);
}

static int write_svg(FILE *f, const struct heatmap *h)
{
	long height, *y = row_positions(h, &height);
	long width = SVG_LEFT + h->nr_panels * (NR_COLS + PANEL_GAP) + 80;

	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%ld\" height=\"%ld\" "
		"font-family=\"monospace\" shape-rendering=\"crispEdges\">\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#ffffff\"/>\n", width,
		SVG_TOP + height + 70);
	svg_axis(f, h, y);
	for (int k = 0; k < h->nr_panels; k++)
		svg_panel(f, h, k, y, SVG_LEFT + k * (NR_COLS + PANEL_GAP));
	svg_legend(f, h, SVG_TOP + height + 10);
	fprintf(f, "</svg>\n");
	free(y);
	return 0;
}

/* The same grid as pixels: panels side by side, no text (the SVG has the labels) */
static int write_png(FILE *f, const struct heatmap *h)
{
	long height, *y = row_positions(h, &height);
	uint32_t width = h->nr_panels * (NR_COLS + PANEL_GAP) - PANEL_GAP;
	unsigned char *rgb = xmalloc((size_t)width * height * 3), buf[3];
	int err;

	for (size_t p = 0; p < (size_t)width * height; p++)
		memcpy(rgb + 3 * p, rgb_none, 3);
	for (size_t r = 0; r < h->nr_rows; r++) {
		if (y[r] < 0)
			continue;
		for (int k = 0; k < h->nr_panels; k++) {
			for (unsigned int c = 0; c < NR_COLS; c++) {
				const unsigned char *col = cell_colour(h, k, r * NR_COLS + c, buf);

				for (int dy = 0; dy < ROW_H; dy++)
					memcpy(rgb + 3 * ((y[r] + dy) * width + k * (NR_COLS + PANEL_GAP) + c),
					       col, 3);
			}
		}
		for (uint32_t x = 0; r && y[r - 1] < 0 && x < width; x++)
			memcpy(rgb + 3 * ((y[r] - GAP_H + 1) * width + x), rgb_gap, 3);
	}
	err = heatmap_write_png(f, rgb, width, height);
	free(rgb);
	free(y);
	return err;
}

static bool is_png(const char *path)
{
	size_t n = strlen(path);

	return n >= 4 && !strcasecmp(path + n - 4, ".png");
}

static int write_png_of(FILE *f, const void *h)
{
	return write_png(f, h);
}

static int write_svg_of(FILE *f, const void *h)
{
	return write_svg(f, h);
}

/* Through a temporary file (outfile.h): a failure leaves nothing */
static int draw(const struct heatmap *h, const char *out)
{
	return outfile_write(out, is_png(out) ? write_png_of : write_svg_of, h);
}

static void heatmap_free(struct heatmap *h)
{
	for (int k = 0; k < NR_PANELS; k++)
		free(h->heat[k]);
	free(h->text);
	free(h->ranges);
}

/* Open vmlinux and the profile, check they belong together, make the ranges */
static int read_inputs(struct heatmap *h, const char *vmlinux, const char *profile, bool force)
{
	struct kmeta_image *img = kmeta_open(vmlinux);
	struct prof *p = img ? prof_read(profile) : NULL;
	int err = -EINVAL;

	if (p && !profile_match(img, p, force) && !init_grid(h, img)) {
		ranges_from_prof(h, img, p);
		err = 0;
	}
	prof_free(p);
	kmeta_close(img);	/* verify opens it afresh */
	return err;
}

int kbolt_heatmap(const char *vmlinux, const char *profile, const char *out,
		  const struct heatmap_options *o)
{
	struct heatmap h = { .path = { vmlinux, o->optimized }, .nr_panels = 1 };
	struct verify_report rep = { .quiet = true, .verified = map_ranges, .arg = &h };
	int err;

	err = outfile_check_dir(out);
	if (!err)
		err = read_inputs(&h, vmlinux, profile, o->force);
	if (!err)
		add_ranges(&h);
	if (!err && o->optimized)
		err = check_optimized(&h, o->optimized);
	if (!err && o->optimized && kbolt_verify(vmlinux, o->optimized, &rep))
		err = -EINVAL;
	if (!err) {
		measure(&h);
		err = draw(&h, out);
	}
	if (!err)
		print_footprint(&h, o);
	heatmap_free(&h);
	return err ? 1 : 0;
}
