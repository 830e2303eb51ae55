// SPDX-License-Identifier: GPL-2.0
/*
 * Which pages of an image's mapping were written.  The file is mapped private: a page
 * kbolt writes is copied on write and stops being the file's; one it only read is
 * still the page cache's.  /proc/self/pagemap tells them apart (bit 63: present, bit
 * 61: a file page), so the output can take the unchanged pages from the input file
 * (the kernel copies them, they never come into kbolt's memory) and only the written
 * ones from memory, and a pass over a big section can give back the pages it only
 * read.  Without pagemap every page counts as written: slower, never wrong.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAPPED	(1ULL << 62)
#define PM_FILE		(1ULL << 61)
#define BATCH		512	/* pagemap entries read at once */

static bool entry_written(uint64_t e)
{
	return (e & PM_SWAPPED) || ((e & PM_PRESENT) && !(e & PM_FILE));
}

/* The pagemap entries of nr pages of the mapping from page first; false if unknown */
static bool read_entries(int pm, const struct kmeta_image *img, uint64_t first, size_t nr,
			 uint64_t *e)
{
	uint64_t vpage = ((uintptr_t)img->map >> 12) + first;
	ssize_t n = pread(pm, e, nr * sizeof(*e), (off_t)(vpage * sizeof(*e)));

	return n == (ssize_t)(nr * sizeof(*e));
}

int kmeta_for_each_page_run(struct kmeta_image *img, uint64_t off, uint64_t size,
			    kmeta_page_run_fn fn, void *ctx)
{
	int pm = sysconf(_SC_PAGESIZE) == 4096 ? open("/proc/self/pagemap", O_RDONLY) : -1;
	uint64_t end = off + size, run = off, e[BATCH];
	bool run_written = false, known = pm >= 0;
	int err = 0;

	if (end > img->map_size || end < off) {
		if (pm >= 0)
			close(pm);
		return -ERANGE;
	}
	for (uint64_t page = off >> 12; page << 12 < end && !err; page += BATCH) {
		size_t nr = BATCH;

		if (known && !read_entries(pm, img, page, nr, e))
			known = false;	/* past the mapping's end at most: count as written */
		for (size_t k = 0; k < nr && (page + k) << 12 < end && !err; k++) {
			uint64_t at = (page + k) << 12 > off ? (page + k) << 12 : off;
			bool w = !known || entry_written(e[k]);

			if (at > run && w != run_written) {
				err = fn(ctx, run, at - run, run_written);
				run = at;
			}
			run_written = w;
		}
	}
	if (!err && end > run)
		err = fn(ctx, run, end - run, run_written);
	if (pm >= 0)
		close(pm);
	return err;
}

/* Give back a run of pages kbolt only read: whole pages only */
static int release_run(void *ctx, uint64_t off, uint64_t size, bool written)
{
	struct kmeta_image *img = ctx;
	uint64_t start = (off + 4095) & ~4095ULL, end = (off + size) & ~4095ULL;

	if (!written && end > start)
		madvise((char *)img->map + start, end - start, MADV_DONTNEED);
	return 0;
}

void kmeta_copy_sec_now(struct kmeta_image *img, const struct kmeta_sec *sec)
{
	uint64_t start, end;
	GElf_Shdr sh;

	if (!sec->scn || !gelf_getshdr(sec->scn, &sh) || sh.sh_type == SHT_NOBITS ||
	    sh.sh_offset + sh.sh_size > img->map_size)
		return;
	start = sh.sh_offset & ~4095ULL;
	end = (sh.sh_offset + sh.sh_size + 4095) & ~4095ULL;
	if (end > start)	/* best effort: without it, each page is copied when written */
		madvise((char *)img->map + start, end - start, MADV_POPULATE_WRITE);
}

void kmeta_release_sec(struct kmeta_image *img, const struct kmeta_sec *sec)
{
	GElf_Shdr sh;

	if (!sec->scn || !gelf_getshdr(sec->scn, &sh) || sh.sh_type == SHT_NOBITS)
		return;
	kmeta_for_each_page_run(img, sh.sh_offset, sh.sh_size, release_run, img);
}

void kmeta_release_bytes(struct kmeta_image *img, const void *p, uint64_t size)
{
	const unsigned char *q = p;

	if (q >= img->map && q <= img->map + img->map_size &&
	    size <= (uint64_t)(img->map + img->map_size - q))
		kmeta_for_each_page_run(img, q - img->map, size, release_run, img);
}

void kmeta_release_image(struct kmeta_image *img)
{
	kmeta_for_each_page_run(img, 0, img->map_size, release_run, img);
}
