// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt record's perf events (struct perf_event_attr, include/uapi/linux/perf_event.h):
 * which event samples, one opened on each online CPU (cpu_list.c) with the sampler
 * attached, and why the kernel refused one, said in one line.
 *
 * The default event is cycles, as precise as the PMU takes it: precise_ip from 3 down
 * to 0, as perf steps down (evsel__precise_ip_fallback() in tools/perf/util/evsel.c).
 * cpu-clock fires from an hrtimer, so never where interrupts are off: its samples pile
 * up where interrupts are enabled again, and much of the kernel's hottest code runs
 * with them off.  A PMU's overflow is an NMI and lands there too.  Where there is no
 * PMU (QEMU's TCG, many VMs) the default falls back to cpu-clock, and says so, on
 * standard error and in the profile.  An event asked for by name is never replaced.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>

#include "../../common/util.h"
#include "record.h"

#define PARANOID_PATH "/proc/sys/kernel/perf_event_paranoid"
#define MAX_RATE_PATH "/proc/sys/kernel/perf_event_max_sample_rate"
#define DEFAULT_FREQUENCY 1000
/* precise_ip's highest level: 3, "must have 0 skid" (perf_event.h) */
#define MAX_PRECISE 3

static int open_on(struct perf_event_attr *a, int cpu)
{
	return syscall(SYS_perf_event_open, a, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The attributes of the event named (cycles or cpu-clock), precise_ip 0 */
static void set_attr(struct perf_event_attr *a, const struct record_options *o, bool cycles)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = cycles ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
	a->config = cycles ? PERF_COUNT_HW_CPU_CYCLES : PERF_COUNT_SW_CPU_CLOCK;
	a->freq = 1;
	a->sample_freq = o->frequency ? o->frequency : DEFAULT_FREQUENCY;
	a->exclude_user = 1;	/* kernel samples only: user ones would be dropped anyway */
	if (o->branches) {
		a->sample_type = PERF_SAMPLE_BRANCH_STACK;
		a->branch_sample_type = PERF_SAMPLE_BRANCH_KERNEL | PERF_SAMPLE_BRANCH_ANY;
	}
}

/* Is err perf_event_open()'s way of saying that there is no such hardware event? */
static bool is_no_pmu(int err)
{
	return err == ENOENT || err == ENODEV || err == ENXIO || err == EOPNOTSUPP;
}

/* Why perf_event_open() failed, said so that the user knows what to change */
static void explain_open_error(const struct rec_events *ev, const struct record_options *o,
			       int err)
{
	const struct perf_event_attr *a = &ev->attr;
	long paranoid = rec_read_sysctl(PARANOID_PATH), max_rate = rec_read_sysctl(MAX_RATE_PATH);
	char lockdown[64];

	rec_read_lockdown(lockdown, sizeof(lockdown));
	if ((err == EACCES || err == EPERM) && *lockdown) {
		pr_err(NULL, "record: the kernel is locked down (%s): it refuses perf events on "
		       "the kernel", lockdown);
	} else if ((err == EACCES || err == EPERM) && paranoid > 2 && !rec_has_sys_admin()) {
		/* Debian's and Android's perf_event_paranoid 3: none without CAP_SYS_ADMIN */
		pr_err(NULL, "record: perf_event_open: %s: kernel.perf_event_paranoid is %ld, "
		       "above 2, which this kernel takes as no perf events without "
		       "CAP_SYS_ADMIN: run as root, or set it to 2 or less", strerror(err),
		       paranoid);
	} else if ((err == EACCES || err == EPERM) && rec_has_sys_admin()) {
		pr_err(NULL, "record: perf_event_open: %s, even with CAP_SYS_ADMIN: a security "
		       "module (SELinux, AppArmor) refuses perf events to this process",
		       strerror(err));
	} else if (err == EACCES || err == EPERM) {
		pr_err(NULL, "record: perf_event_open: %s: kernel.perf_event_paranoid is %ld: "
		       "kernel samples need it at most 1, or CAP_PERFMON: run as root",
		       strerror(err), paranoid);
	} else if (o->branches && (is_no_pmu(err) || err == EINVAL)) {
		pr_err(NULL, "record: --branches: this machine's PMU gives no branch stacks "
		       "(perf_event_open: %s; no LBR, as in most VMs): record without "
		       "--branches", strerror(err));
	} else if (a->type == PERF_TYPE_HARDWARE && is_no_pmu(err)) {
		pr_err(NULL, "record: --event %s: no such hardware event here (perf_event_open: "
		       "%s; a VM without a PMU): use --event cpu-clock", ev->name, strerror(err));
	} else if (err == EINVAL && max_rate > 0 && a->sample_freq > (uint64_t)max_rate) {
		pr_err(NULL, "record: --frequency %" PRIu64 " is above "
		       "kernel.perf_event_max_sample_rate (%ld): give a lower one",
		       (uint64_t)a->sample_freq, max_rate);
	} else if (err == ENOSYS) {
		pr_err(NULL, "record: this kernel has no perf events (it needs CONFIG_PERF_EVENTS)");
	} else {
		pr_err(NULL, "record: perf_event_open (%s): %s", ev->name, strerror(err));
	}
}

/*
 * cycles at the highest precise_ip the PMU takes, tried on the first online CPU: 0, or
 * the errno of precise_ip 0.  A level the PMU lacks is EOPNOTSUPP (Intel's PEBS) or
 * EINVAL (AMD's IBS).
 */
static int try_cycles(struct rec_events *ev, const struct record_options *o)
{
	int err = 0;

	set_attr(&ev->attr, o, true);
	for (int p = MAX_PRECISE; p >= 0; p--) {
		int fd;

		ev->attr.precise_ip = p;
		fd = open_on(&ev->attr, ev->cpus[0]);
		if (fd >= 0) {
			close(fd);
			return 0;
		}
		err = errno;
		if (err != EOPNOTSUPP && err != EINVAL)
			return err;
	}
	return err;
}

/* perf's name of the event: cycles with a "p" per precise_ip level, as perf list says */
static void name_event(struct rec_events *ev)
{
	if (ev->attr.type != PERF_TYPE_HARDWARE)
		snprintf(ev->name, sizeof(ev->name), "cpu-clock");
	else
		snprintf(ev->name, sizeof(ev->name), "cycles%s%.*s", ev->attr.precise_ip ? ":" : "",
			 (int)ev->attr.precise_ip, "ppp");
}

int events_choose(struct rec_events *ev, const struct record_options *o)
{
	bool cycles = !o->event || !strcmp(o->event, "cycles");
	int err = cpu_list_read_online(&ev->cpus, &ev->nr_cpus);

	ev->o = o;
	if (err)
		return err;
	if (!cycles) {
		set_attr(&ev->attr, o, false);
		name_event(ev);
		return 0;
	}
	err = try_cycles(ev, o);
	if (err && !o->event && !o->branches && is_no_pmu(err)) {
		snprintf(ev->note, sizeof(ev->note), "cycles cannot be sampled here "
			 "(perf_event_open: %s; no PMU, as in QEMU's TCG and many VMs): "
			 "cpu-clock sampled instead, which never fires where interrupts are off",
			 strerror(err));
		pr_info(NULL, "record: %s", ev->note);
		set_attr(&ev->attr, o, false);
		err = 0;
	}
	if (err) {
		snprintf(ev->name, sizeof(ev->name), "cycles");
		explain_open_error(ev, o, err);
		return -err;
	}
	name_event(ev);
	return 0;
}

int events_open(struct rec_events *ev, struct sampler *s)
{
	const struct record_options *o = ev->o;
	int err;

	ev->fds = xmalloc(ev->nr_cpus * sizeof(*ev->fds));
	for (int i = 0; i < ev->nr_cpus; i++)
		ev->fds[i] = -1;	/* what events_close() closes, after a failure too */
	for (int i = 0; i < ev->nr_cpus; i++) {
		int fd = open_on(&ev->attr, ev->cpus[i]);

		if (fd < 0 && errno == ENODEV)	/* gone offline since the mask was read */
			continue;
		if (fd < 0) {
			err = errno;
			explain_open_error(ev, o, err);
			return -err;
		}
		ev->fds[i] = fd;
		ev->nr_open++;
		err = sampler_attach(s, fd);
		if (err) {
			pr_err(NULL, "record: cannot attach the program to CPU %d's event: %s",
			       ev->cpus[i], strerror(-err));
			return err;
		}
	}
	return 0;
}

void events_close(struct rec_events *ev, struct sampler *s)
{
	if (s)
		sampler_detach(s);
	for (int i = 0; ev->fds && i < ev->nr_cpus; i++)
		if (ev->fds[i] >= 0)
			close(ev->fds[i]);
	free(ev->fds);
	ev->fds = NULL;
}

void events_free(struct rec_events *ev)
{
	free(ev->cpus);
	ev->cpus = NULL;
}
