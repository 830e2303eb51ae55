/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The output vmlinux (output.c) and the digests that name it: FNV-1a, 64 bits, enough
 * to tell inputs apart, not a cryptographic hash.
 */
#ifndef KBOLT_OUTPUT_H
#define KBOLT_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../kmeta/kmeta.h"
#include "outfile.h"

#define DIGEST_INIT 0xcbf29ce484222325ULL

uint64_t digest_update(uint64_t h, const void *buf, size_t size);
int digest_file(const char *path, uint64_t *out);
/* A section of bytes to append, not loaded */
struct output_extra {
	const void *data;
	size_t size;
};

/*
 * Write img's (modified) contents into of's temporary file (outfile.h), with a
 * build-id derived from record and record itself in a .note.kbolt section, the
 * translation table bat (NULL: none) in a .kbolt.bat section (bat.h), without the
 * DWARF if strip_debug.  0 or a negative errno, after reporting.
 */
int output_write(struct kmeta_image *img, struct outfile *of, const char *record,
		 const struct output_extra *bat, bool strip_debug);

/*
 * Non-allocated sections kbolt changed: new contents (data, size; a section that grows
 * moves to the end of the file), or, data NULL, bytes patched in img's mapping
 * (written from there).  The list owns the data.
 */
struct output_secs {
	struct output_sec {
		size_t idx;
		unsigned char *data;
		uint64_t size;
	} *v;
	size_t nr, cap;
};

void output_secs_add(struct output_secs *s, size_t idx, unsigned char *data, uint64_t size);
/* Those of from added to s, in their order; from is left empty */
void output_secs_take(struct output_secs *s, struct output_secs *from);
void output_secs_free(struct output_secs *s);
/* output_write() with those sections */
int output_write_secs(struct kmeta_image *img, struct outfile *of, const char *record,
		      const struct output_extra *bat, bool strip_debug,
		      const struct output_secs *secs);

#endif
