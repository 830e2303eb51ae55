/* SPDX-License-Identifier: GPL-2.0 */
/*
 * TAP for the C unit tests: ok() prints "ok N - ..." or "not ok N - ...", skip() a
 * skipped test with its reason, tap_done() the "N passed, N failed" line that
 * selftests/unit.sh re-counts, and gives main() its exit status.
 */
#ifndef KBOLT_SELFTESTS_TAP_H
#define KBOLT_SELFTESTS_TAP_H

#include <stdarg.h>
#include <stdio.h>

static int nr_pass, nr_fail, nr_skip, nr_tests;

static void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++nr_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (cond)
		nr_pass++;
	else
		nr_fail++;
}

static inline void skip(const char *what, const char *reason)
{
	printf("ok %d - %s # SKIP %s\n", ++nr_tests, what, reason);
	nr_skip++;
}

static inline int tap_done(void)
{
	if (nr_skip)
		printf("%d passed, %d failed, %d skipped\n", nr_pass, nr_fail, nr_skip);
	else
		printf("%d passed, %d failed\n", nr_pass, nr_fail);
	return nr_fail != 0;
}

#endif
