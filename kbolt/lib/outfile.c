// SPDX-License-Identifier: GPL-2.0
/*
 * Files written whole or not at all (outfile.h).  The temporary file is flock()ed for
 * as long as its writer lives: the kernel drops the lock when the process dies, however
 * it dies, so an unlocked ".kbolt-XXXXXX" is one that no run will finish, and the next
 * run in the directory removes it.  A writer that lost the race to such a cleaner (its
 * file unlinked between mkstemp() and flock()) sees no link left and starts again.
 * SIGINT, SIGTERM and SIGHUP remove the temporary file before the process dies.  A file
 * that replaces another (a previous output, the input with --in-place) is synced to disk
 * before the rename, so that a machine crash cannot leave neither; a new one is not:
 * nothing is lost if it is, and a sync costs a few percent of a run.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/util.h"
#include "outfile.h"

#define TMP_PREFIX ".kbolt-"
#define TMP_NAME TMP_PREFIX "XXXXXX"

/* The temporary file a signal removes: one at a time per process */
static char signal_tmp[4096];
static volatile sig_atomic_t have_signal_tmp;

void outfile_remove_current(void)
{
	if (have_signal_tmp)
		unlink(signal_tmp);
	have_signal_tmp = 0;
}

static void remove_on_signal(int sig)
{
	outfile_remove_current();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void arm_signals(const char *tmp)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	have_signal_tmp = 0;
	snprintf(signal_tmp, sizeof(signal_tmp), "%s", tmp);
	have_signal_tmp = strlen(tmp) < sizeof(signal_tmp);
	for (size_t i = 0; i < ARRAY_SIZE(sigs); i++)
		signal(sigs[i], remove_on_signal);
}

static bool is_tmp_name(const char *name)
{
	return strlen(name) == strlen(TMP_NAME) && !strncmp(name, TMP_PREFIX, strlen(TMP_PREFIX));
}

/* An unlocked temporary file: its writer is gone */
static void remove_if_abandoned(int dfd, const char *dir, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && !flock(fd, LOCK_EX | LOCK_NB) &&
	    !unlinkat(dfd, name, 0))
		pr_info(NULL, "removed %s/%s, left by a kbolt run that did not finish", dir, name);
	close(fd);
}

static void remove_abandoned(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (is_tmp_name(de->d_name))
			remove_if_abandoned(dirfd(d), dir, de->d_name);
	closedir(d);
}

/* mkstemp() and the lock: again if a cleaner unlinked the file in between */
static int create_locked(const char *dir, char **tmp_out)
{
	for (int tries = 0; tries < 8; tries++) {
		char *tmp = xasprintf("%s/" TMP_NAME, dir);
		int fd = mkstemp(tmp);
		struct stat st;

		if (fd < 0 || flock(fd, LOCK_EX) || fstat(fd, &st)) {
			int err = -errno;

			if (fd >= 0) {
				unlink(tmp);
				close(fd);
			}
			free(tmp);
			return err;
		}
		if (st.st_nlink) {
			*tmp_out = tmp;
			return fd;
		}
		close(fd);
		free(tmp);
	}
	return -EAGAIN;
}

int outfile_check_dir(const char *path)
{
	char *dir_copy = xstrdup(path);
	const char *dir = dirname(dir_copy);
	int err = 0;

	if (access(dir, W_OK | X_OK)) {
		err = -errno;
		pr_err(path, "cannot create a file in %s: %s", dir, strerror(errno));
	}
	free(dir_copy);
	return err;
}

int outfile_create(struct outfile *o, const char *path, mode_t mode)
{
	char *dir_copy = xstrdup(path);
	const char *dir = dirname(dir_copy);
	struct stat st;
	int fd;

	*o = (struct outfile){ .path = path, .fd = -1, .replaces = !lstat(path, &st) };
	remove_abandoned(dir);
	fd = create_locked(dir, &o->tmp);
	if (fd < 0) {
		pr_err(path, "cannot create a file in %s: %s", dir, strerror(-fd));
		free(dir_copy);
		return fd;
	}
	free(dir_copy);
	o->fd = fd;
	arm_signals(o->tmp);
	if (mode == OUTFILE_NEW_FILE) {
		mode_t mask = umask(0);

		umask(mask);
		mode = 0666 & ~mask;
	}
	if (fchmod(fd, mode & 0777)) {
		int err = -errno;

		pr_err(path, "cannot set the mode of %s: %s", o->tmp, strerror(errno));
		return outfile_finish(o, err);
	}
	return 0;
}

FILE *outfile_stream(struct outfile *o)
{
	if (!o->f && !(o->f = fdopen(o->fd, "w")))
		pr_err(o->path, "cannot write %s: %s", o->tmp, strerror(errno));
	return o->f;
}

static int flush_and_sync(struct outfile *o)
{
	if (o->f && fflush(o->f))
		return -errno;
	return o->replaces && fsync(o->fd) ? -errno : 0;
}

int outfile_finish(struct outfile *o, int err)
{
	int werr;

	if (!o->tmp)
		return err;
	if (!err && (werr = flush_and_sync(o))) {
		err = werr;
		pr_err(o->path, "cannot write %s: %s", o->tmp, strerror(-err));
	}
	if (!err && rename(o->tmp, o->path)) {
		err = -errno;
		pr_err(o->path, "cannot rename %s to it: %s", o->tmp, strerror(errno));
	}
	if (err && getenv("KBOLT_DEBUG_KEEP"))
		fprintf(stderr, "kept %s\n", o->tmp);
	else if (err)
		unlink(o->tmp);
	have_signal_tmp = 0;
	if (o->f)
		fclose(o->f);	/* closes fd; the lock goes with it */
	else
		close(o->fd);
	free(o->tmp);
	*o = (struct outfile){ .path = o->path, .fd = -1 };
	return err;
}

int outfile_write(const char *path, int (*write)(FILE *f, const void *arg),
		  const void *arg)
{
	struct outfile of;
	int err = outfile_create(&of, path, OUTFILE_NEW_FILE);
	FILE *f;

	if (err)
		return err;
	f = outfile_stream(&of);
	err = f ? write(f, arg) : -EIO;
	if (f && ferror(f) && !err) {
		err = -EIO;
		pr_err(path, "cannot write: %s", strerror(errno));
	}
	return outfile_finish(&of, err);
}
