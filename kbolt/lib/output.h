/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The output file (output.c) and the digests that name it: FNV-1a, 64 bits, enough
 * to tell inputs apart, not a cryptographic hash.
 */
#ifndef KBOLT_OUTPUT_H
#define KBOLT_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../kmeta/kmeta.h"

#define DIGEST_INIT 0xcbf29ce484222325ULL

uint64_t digest_update(uint64_t h, const void *buf, size_t size);
int digest_file(const char *path, uint64_t *out);
/*
 * Write img's (modified) contents to a temporary file in path's directory (*tmp, to
 * free), with a build-id derived from record and record itself in a .note.kbolt
 * section, without the DWARF if strip_debug.  output_finish() renames it to path if
 * err is 0, and removes it otherwise.
 */
int output_write_temp(struct kmeta_image *img, const char *path, const char *record,
		      mode_t mode, bool strip_debug, char **tmp);
/* Can a file be created next to path?  Checked before any work is done. */
int output_check_dir(const char *path);
int output_finish(const char *tmp, const char *path, int err);

#endif
