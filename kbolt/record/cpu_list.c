// SPDX-License-Identifier: GPL-2.0
/*
 * The CPUs kbolt record opens its events on: the online mask the kernel prints in
 * /sys/devices/system/cpu/online, in its CPU list format (bitmap_print_to_pagebuf() of
 * lib/bitmap.c: ranges and single ids in increasing order, "0-3,8-11", a newline at
 * the end).  The ids may be sparse, CPUs being taken offline or possible and never
 * brought up, so counting CPUs (sysconf(_SC_NPROCESSORS_CONF)) is no list of them: it
 * names ids that are not online and misses high ones that are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "record.h"

#define ONLINE_PATH "/sys/devices/system/cpu/online"
/* The kernel's NR_CPUS is at most 8192 on x86-64 (CONFIG_MAXSMP) */
#define MAX_CPU_ID 8191

/* One decimal CPU id at *s, *s moved past it: 0, or -EINVAL */
static int parse_id(const char **s, int *id)
{
	long v = 0;

	if (**s < '0' || **s > '9')
		return -EINVAL;
	for (; **s >= '0' && **s <= '9'; (*s)++) {
		v = v * 10 + (**s - '0');
		if (v > MAX_CPU_ID)
			return -EINVAL;
	}
	*id = v;
	return 0;
}

int cpu_list_parse(const char *s, int **cpus, int *nr)
{
	size_t cap = 0;
	int first, last, prev = -1;

	*cpus = NULL;
	*nr = 0;
	do {
		if (parse_id(&s, &first))
			goto bad;
		last = first;
		if (*s == '-' && (s++, parse_id(&s, &last) || last < first))
			goto bad;
		if (first <= prev)	/* the kernel prints them in increasing order */
			goto bad;
		for (int cpu = first; cpu <= last; cpu++) {
			GROW(*cpus, cap, (size_t)*nr + 1);
			(*cpus)[(*nr)++] = cpu;
		}
		prev = last;
	} while (*s == ',' && s++);
	if (!strcmp(s, "\n") || !*s)
		return 0;
bad:
	free(*cpus);
	*cpus = NULL;
	*nr = 0;
	return -EINVAL;
}

int cpu_list_read_online(int **cpus, int *nr)
{
	char line[4096] = "";
	FILE *f = fopen(ONLINE_PATH, "r");
	int err;

	if (!f || !fgets(line, sizeof(line), f)) {
		err = f ? -EIO : -errno;
		pr_err(ONLINE_PATH, "record: cannot read the online CPUs: %s", strerror(-err));
		if (f)
			fclose(f);
		return err;
	}
	fclose(f);
	err = cpu_list_parse(line, cpus, nr);
	if (err)
		pr_err(ONLINE_PATH, "record: not a list of CPUs: %.*s", (int)strcspn(line, "\n"),
		       line);
	return err;
}
