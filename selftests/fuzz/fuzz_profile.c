// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for kbolt's profile readers (kbolt/profile/: kbolt's format and
 * BOLT's pre-aggregated one, Documentation/profile-format.rst): write the input to a
 * memfd and read it with prof_read(), which picks the format by the first line, as
 * kbolt check-profile and optimize --profile do.  A profile that reads is then judged
 * against a fixed kernel image, make-profile-seeds' (built into the target by run:
 * FUZZ_PROFILE_IMAGE), by profile_match(), with and without force, and checked record
 * by record by profile_check(), as check-profile does; and written in BOLT's format by
 * prof_write_bolt(), as profile-to-bolt does.
 *
 * Besides the sanitizers, the target asserts what the format's documentation and the
 * callers rely on: a reader that fails reports exactly one error, one that succeeds
 * none; what profile-to-bolt writes reads back, as BOLT's format, to the same edges
 * but the interrupts, with kinds "branch", and written again gives the same bytes;
 * profile_match() with force fails only for a profile without records, and without
 * force reports exactly when it fails; profile_check() accounts for every record, once.
 * Errors and warnings are counted, not printed: run links with -Wl,--wrap=pr_err and
 * -Wl,--wrap=pr_warn.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <sanitizer/common_interface_defs.h>

#include "../../kbolt/profile/check_profile.h"
#include "../../kbolt/profile/profile.h"
#include "../../kbolt/profile/profile_match.h"

#define STR(x) #x
#define XSTR(x) STR(x)

/* The image the profiles are judged against, in the target: no file to find at run time */
__asm__(".pushsection .rodata\n"
	".balign 64\n"
	"fuzz_profile_image: .incbin " XSTR(FUZZ_PROFILE_IMAGE) "\n"
	"fuzz_profile_image_end:\n"
	".popsection");
extern const unsigned char fuzz_profile_image[], fuzz_profile_image_end[];

static struct kmeta_image *img;
static int in_fd = -1, bolt_fd = -1;
static char in_path[64], bolt_path[64];
static unsigned int nr_errors, nr_warns;
static char last_error[512];

void __wrap_pr_err(const char *file, const char *fmt, ...);
void __wrap_pr_warn(const char *file, const char *fmt, ...);

/* Format the message anyway: a bad argument to it is a bug like any other */
static void record(const char *file, const char *kind, const char *fmt, va_list ap)
{
	int n = snprintf(last_error, sizeof(last_error), "%s: %s: ", file ? file : "kbolt", kind);

	vsnprintf(last_error + n, sizeof(last_error) - n, fmt, ap);
}

void __wrap_pr_err(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(file, "error", fmt, ap);
	va_end(ap);
	nr_errors++;
}

void __wrap_pr_warn(const char *file, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	record(file, "warning", fmt, ap);
	va_end(ap);
	nr_warns++;
}

/* Said through the sanitizer's report: run closes the target's stderr */
static void invariant_failed(const char *what)
{
	char msg[1024];

	snprintf(msg, sizeof(msg), "fuzz_profile: %s (errors: %u, warnings: %u; last: %s)",
		 what, nr_errors, nr_warns, nr_errors + nr_warns ? last_error : "none");
	__sanitizer_report_error_summary(msg);
	abort();
}

static int open_memfd(const char *name, char *path, size_t size)
{
	int fd = memfd_create(name, 0);

	if (fd < 0) {
		perror("fuzz_profile: memfd_create");
		exit(1);
	}
	snprintf(path, size, "/proc/self/fd/%d", fd);
	return fd;
}

static void set_file(int fd, const void *data, size_t size)
{
	if (ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size)) {
		perror("fuzz_profile: writing a memfd");
		exit(1);
	}
}

/* p as profile-to-bolt writes it, malloc'ed into *buf; the number of records */
static size_t write_bolt(const struct prof *p, char **buf, size_t *size)
{
	FILE *f = open_memstream(buf, size);
	size_t nr;

	if (!f) {
		perror("fuzz_profile: open_memstream");
		exit(1);
	}
	nr = prof_write_bolt(p, f);
	fclose(f);
	return nr;
}

/* What profile-to-bolt writes is a BOLT profile of the same edges but the interrupts */
static void check_round_trip(const struct prof *p)
{
	char *text, *again;
	size_t size, size2, nr, k = 0;
	struct prof *q;

	nr = write_bolt(p, &text, &size);
	if (!nr) {	/* profile-to-bolt refuses to write an empty file */
		free(text);
		return;
	}
	set_file(bolt_fd, text, size);
	q = prof_read(bolt_path);
	if (!q)
		invariant_failed("what prof_write_bolt() wrote does not read back");
	if (nr_errors || nr_warns)
		invariant_failed("reading back what prof_write_bolt() wrote reported something");
	if (strcmp(q->fmt->name, "bolt") || q->nr_edges != nr)
		invariant_failed("prof_write_bolt() output reads back as another format or count");
	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_edge *e = &p->edges[i], *b;

		if (e->kind == PK_INT || e->kind == PK_SAMPLE)
			continue;
		b = &q->edges[k++];
		if (b->from != e->from || b->to != e->to || b->count != e->count ||
		    b->kind != (e->kind == PK_FALLTHROUGH ? PK_FALLTHROUGH : PK_BRANCH))
			invariant_failed("prof_write_bolt() output reads back to other edges");
	}
	if (write_bolt(q, &again, &size2) != nr || size2 != size || memcmp(text, again, size))
		invariant_failed("prof_write_bolt() of its own output read back differs");
	free(again);
	free(text);
	prof_free(q);
}

static void check_against_image(struct prof *p)
{
	struct profile_check r;
	size_t sum = 0;
	int err;

	nr_errors = nr_warns = 0;
	err = profile_match(img, p, false);
	if (nr_warns || nr_errors != (err ? 1 : 0))
		invariant_failed("profile_match() did not report exactly when it failed");
	nr_errors = 0;
	err = profile_match(img, p, true);
	if (err ? !(p->nr_edges == 0 && nr_errors == 1) : nr_errors != 0)
		invariant_failed("profile_match() with force failed on a profile with records");
	if (nr_warns > 1)
		invariant_failed("profile_match() with force warned more than once");
	nr_errors = nr_warns = 0;
	if (profile_check(img, p, &r, NULL, NULL))
		invariant_failed("profile_check() failed");
	if (nr_errors || nr_warns)
		invariant_failed("profile_check() reported something");
	for (unsigned int i = 0; i < PK_NR; i++)
		sum += r.by_kind[i];
	if (r.records != p->nr_edges || sum != r.records ||
	    r.agree + r.patched + r.outside + r.disagree != r.records)
		invariant_failed("profile_check() counts do not add up to the records");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	img = kmeta_open_memory("profile-image", fuzz_profile_image,
				fuzz_profile_image_end - fuzz_profile_image);
	if (!img) {
		fprintf(stderr, "fuzz_profile: the built-in image does not open: %s\n", last_error);
		exit(1);
	}
	in_fd = open_memfd("profile", in_path, sizeof(in_path));
	bolt_fd = open_memfd("profile.bolt", bolt_path, sizeof(bolt_path));
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct prof *p;

	set_file(in_fd, data, size);
	nr_errors = nr_warns = 0;
	p = prof_read(in_path);
	if (!p) {
		if (nr_errors != 1 || nr_warns)
			invariant_failed("prof_read() failed without exactly one error");
		return 0;
	}
	if (nr_errors || nr_warns)
		invariant_failed("prof_read() succeeded but reported something");
	for (size_t i = 0; i < p->nr_edges; i++)
		if (p->edges[i].kind >= PK_NR)
			invariant_failed("prof_read() gave an edge of no kind");
	nr_errors = 0;
	if (!prof_check_bolt(p))	/* else profile-to-bolt refuses it, saying so */
		check_round_trip(p);
	else if (nr_errors != 1)
		invariant_failed("prof_check_bolt() refused without exactly one error");
	check_against_image(p);
	prof_free(p);
	return 0;
}
