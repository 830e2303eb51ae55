/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one way kbolt writes a file: whole or not at all.  outfile_create() makes a
 * temporary file beside the output (".kbolt-XXXXXX" in its directory, locked while
 * this process lives), the writer fills it, and outfile_finish() renames it over the
 * output once complete, or removes it.  A failure, a full disk, a read-only remount or
 * a kill leaves the previous output as it was; what a killed run left is removed by
 * the next run in that directory (Documentation/kbolt.rst, FILES).
 */
#ifndef KBOLT_OUTFILE_H
#define KBOLT_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

struct outfile {
	const char *path;	/* the output's name */
	char *tmp;		/* the temporary file, NULL once finished */
	int fd;
	FILE *f;		/* outfile_stream()'s, if asked for */
	bool replaces;		/* a file of that name exists: synced before the rename */
};

/* The mode of a new file: 0666 less the umask */
#define OUTFILE_NEW_FILE ((mode_t)-1)

/*
 * Create the temporary file for path with mode (permissions only, or
 * OUTFILE_NEW_FILE), after removing the temporary files of killed runs in its
 * directory.  0 or a negative errno, after reporting.
 */
int outfile_create(struct outfile *o, const char *path, mode_t mode);
/* A stdio stream on the temporary file, NULL after reporting */
FILE *outfile_stream(struct outfile *o);
/*
 * If err is 0, write out what is buffered (synced to disk when it replaces a file) and
 * rename the temporary file over the output; otherwise, or if that fails, remove it.
 * err, or the failure, reported.
 */
int outfile_finish(struct outfile *o, int err);
/*
 * A new file written whole through a stdio stream: write(f, arg) fills it (0, or a
 * negative errno after reporting); a stream error is reported as "cannot write".  0 or
 * a negative errno.
 */
int outfile_write(const char *path, int (*write)(FILE *f, const void *arg),
		  const void *arg);
/* Remove the temporary file being written, if any, without freeing anything (out of memory) */
void outfile_remove_current(void);
/* Is there room for the output: may a file be created in its directory? */
int outfile_check_dir(const char *path);

#endif
