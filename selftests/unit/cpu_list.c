// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of the online CPU list kbolt record opens its events on
 * (kbolt/record/cpu_list.c): the kernel's list format of
 * /sys/devices/system/cpu/online, dense and sparse masks (ids taken offline, a
 * machine whose ids skip), and what is not a list.  TAP output.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kbolt/record/record.h"
#include "tap.h"

/* The ids of a list, "0 1 2", or "error" */
static const char *ids(const char *list)
{
	static char buf[512];
	int *cpus, nr;
	size_t n = 0;

	if (cpu_list_parse(list, &cpus, &nr))
		return "error";
	buf[0] = '\0';
	for (int i = 0; i < nr && n < sizeof(buf) - 8; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%d", i ? " " : "", cpus[i]);
	free(cpus);
	return buf;
}

static void check(const char *list, const char *want, const char *what)
{
	const char *got = ids(list);

	ok(!strcmp(got, want), "cpu list: %s: '%.*s' -> %s%s%s", what, (int)strcspn(list, "\n"),
	   list, got, strcmp(got, want) ? ", want " : "", strcmp(got, want) ? want : "");
}

int main(void)
{
	check("0\n", "0", "one CPU");
	check("0-3\n", "0 1 2 3", "a range");
	check("0-1,4-5\n", "0 1 4 5", "sparse: two CPUs offline in the middle");
	check("0,2,4,6\n", "0 2 4 6", "sparse: every other CPU");
	check("0-3,8-11\n", "0 1 2 3 8 9 10 11", "sparse: two sockets' ids");
	check("1-2,7\n", "1 2 7", "sparse: CPU 0 offline, a high id");
	check("128\n", "128", "one high id (a count of CPUs would say 0)");
	check("0-2", "0 1 2", "no newline");
	check("", "error", "empty");
	check("\n", "error", "a newline only");
	check("3-1\n", "error", "a range backwards");
	check("0-3,2\n", "error", "not in increasing order");
	check("0,,1\n", "error", "an empty field");
	check("0,\n", "error", "a comma at the end");
	check("0-\n", "error", "a range without an end");
	check("-1\n", "error", "a negative id");
	check("0 1\n", "error", "a space");
	check("0-3:1/2\n", "error", "a group (cpulist_parse's input, never printed)");
	check("8192\n", "error", "an id past x86-64's NR_CPUS");
	return tap_done();
}
