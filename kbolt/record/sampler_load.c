// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt record's loader: the BPF programs of sampler.bpf.c, embedded by bpftool's
 * skeleton (sampler.skel.h, generated at build time into the build directory), loaded
 * through libbpf (CO-RE relocations resolved against /sys/kernel/btf/vmlinux), one
 * attached to each CPU's perf event, and their maps read out at the end.  The only file
 * of the recorder that knows libbpf; the map layout is record_agg.h's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "../../common/util.h"
#include "record.h"
#include "sampler.skel.h"

#include "record_agg.h"

struct sampler {
	struct sampler_bpf *skel;
	struct bpf_program *prog;	/* the one loaded */
	struct bpf_link **links;	/* one per perf event */
	size_t nr_links, cap_links;
	int stats_fd;			/* BPF_STATS_RUN_TIME on while open, or -1 */
};

/*
 * libbpf's warnings (a verifier log, a missing BTF), which start with "libbpf: ", as
 * kbolt's lines; the rest kept quiet
 */
static int print_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level != LIBBPF_WARN)
		return 0;
	fprintf(stderr, "kbolt: ");
	return vfprintf(stderr, fmt, ap);
}

/*
 * bpf() itself, with an empty BPF_PROG_LOAD: EINVAL where the kernel would load a
 * program for this process; ENOSYS without CONFIG_BPF_SYSCALL; EPERM or EACCES where it
 * refuses bpf() to it (kernel.unprivileged_bpf_disabled without CAP_BPF, a security
 * module).  libbpf's probe says only whether a program loaded, not why not.
 */
static int probe_syscall(void)
{
	union bpf_attr attr;
	int fd, err;

	memset(&attr, 0, sizeof(attr));
	fd = syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	err = errno;
	if (err == ENOSYS) {
		pr_err(NULL, "record: this kernel has no BPF (bpf(): %s; it needs "
		       "CONFIG_BPF_SYSCALL)", strerror(err));
		return -err;
	}
	if (err == EPERM || err == EACCES) {
		pr_err(NULL, "record: bpf(): %s: the kernel refuses BPF to this process (it needs "
		       "CAP_BPF and CAP_PERFMON, or root; a security module may refuse even "
		       "those)", strerror(err));
		return -err;
	}
	return 0;
}

int sampler_probe(void)
{
	int ret;

	libbpf_set_print(print_libbpf);
	ret = probe_syscall();
	if (ret)
		return ret;
	ret = libbpf_probe_bpf_prog_type(BPF_PROG_TYPE_PERF_EVENT, NULL);
	if (ret == 1)
		return 0;
	if (ret == 0 || ret == -ENOSYS || ret == -EOPNOTSUPP) {
		pr_err(NULL, "record: this kernel cannot run BPF programs on perf events "
		       "(it needs CONFIG_BPF_SYSCALL and CONFIG_PERF_EVENTS)");
		return -EOPNOTSUPP;
	}
	pr_err(NULL, "record: cannot probe for BPF support: %s", strerror(-ret));
	return ret;
}

/*
 * BPF run-time statistics, on while the fd is open: for every BPF program of the host,
 * a clock read and two adds on each run (the bpf_stats_enabled_key static key), so on
 * request only.  BPF_ENABLE_STATS needs CAP_SYS_ADMIN (kernel/bpf/syscall.c).
 */
static int enable_stats(struct sampler *r)
{
	int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);	/* libbpf: the fd, or -errno */

	if (fd >= 0) {
		r->stats_fd = fd;
		return 0;
	}
	pr_err(NULL, "record: --bpf-stats: cannot switch on the kernel's BPF run-time "
	       "statistics: %s (it needs CAP_SYS_ADMIN, and Linux 5.8)", strerror(-fd));
	return fd;
}

struct sampler *sampler_load(bool branches, unsigned int map_entries, bool stats, int *errp)
{
	struct sampler *r = xcalloc(1, sizeof(*r));
	int err = 0;

	libbpf_set_print(print_libbpf);
	r->stats_fd = -1;
	r->skel = sampler_bpf__open();
	if (!r->skel) {
		err = -errno;
		pr_err(NULL, "record: cannot open the BPF object: %s", strerror(-err));
		goto fail;
	}
	r->prog = branches ? r->skel->progs.record_branches : r->skel->progs.record_sample;
	bpf_program__set_autoload(branches ? r->skel->progs.record_sample :
				  r->skel->progs.record_branches, false);
	/* the scratch buffer of the branch stacks is not needed without them */
	if (!branches)
		bpf_map__set_max_entries(r->skel->maps.branch_buf, 1);
	err = bpf_map__set_max_entries(r->skel->maps.counts, map_entries);
	if (!err)
		err = sampler_bpf__load(r->skel);
	if (err) {
		pr_err(NULL, "record: cannot load the %s program: %s (libbpf's lines above say "
		       "why)", bpf_program__name(r->prog), strerror(-err));
		goto fail;
	}
	if (stats && (err = enable_stats(r)))
		goto fail;
	return r;
fail:
	*errp = err;
	sampler_close(r);
	return NULL;
}

int sampler_attach(struct sampler *r, int perf_fd)
{
	struct bpf_link *l = bpf_program__attach_perf_event(r->prog, perf_fd);

	if (!l)
		return -errno;
	GROW(r->links, r->cap_links, r->nr_links + 1);
	r->links[r->nr_links++] = l;
	return 0;
}

void sampler_detach(struct sampler *r)
{
	for (size_t i = 0; i < r->nr_links; i++)
		bpf_link__destroy(r->links[i]);
	r->nr_links = 0;
}

/* The per-CPU counters summed over the possible CPUs */
static int read_counters(struct sampler *r, struct rec_totals *t)
{
	int nr_cpus = libbpf_num_possible_cpus();
	uint64_t sum[REC_NR_COUNTERS] = { 0 }, *v;

	if (nr_cpus < 0)
		return nr_cpus;
	v = xcalloc(nr_cpus, sizeof(*v));
	for (__u32 k = 0; k < REC_NR_COUNTERS; k++) {
		int err = bpf_map__lookup_elem(r->skel->maps.counters, &k, sizeof(k), v,
					       nr_cpus * sizeof(*v), 0);

		if (err) {
			free(v);
			return err;
		}
		for (int c = 0; c < nr_cpus; c++)
			sum[k] += v[c];
	}
	free(v);
	t->samples = sum[REC_NR_SAMPLES];
	t->dropped = sum[REC_NR_DROPPED];
	t->lost = sum[REC_NR_LOST];
	t->no_stack = sum[REC_NR_NO_STACK];
	return 0;
}

/* What the program cost, if the kernel kept the statistics (5.8 and later) */
static void read_run_time(struct sampler *r, struct rec_totals *t)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	if (r->stats_fd >= 0 && !bpf_obj_get_info_by_fd(bpf_program__fd(r->prog), &info, &len)) {
		t->bpf_run_ns = info.run_time_ns;
		t->bpf_run_cnt = info.run_cnt;
	}
}

int sampler_read(struct sampler *r, struct rec_record **counts, size_t *nr, struct rec_totals *t)
{
	const struct bpf_map *m = r->skel->maps.counts;
	struct rec_key key, *prev = NULL;
	size_t cap = 0;
	int err;

	*counts = NULL;
	*nr = 0;
	memset(t, 0, sizeof(*t));
	while (!(err = bpf_map__get_next_key(m, prev, &key, sizeof(key)))) {
		__u64 count;

		prev = &key;
		err = bpf_map__lookup_elem(m, &key, sizeof(key), &count, sizeof(count), 0);
		if (err)
			break;
		GROW(*counts, cap, *nr + 1);
		(*counts)[(*nr)++] = (struct rec_record){ key.from, key.to, count, key.kind };
	}
	if (err == -ENOENT)	/* the last key */
		err = read_counters(r, t);
	if (err) {
		pr_err(NULL, "record: cannot read the BPF maps: %s", strerror(-err));
		free(*counts);
		*counts = NULL;
		return err;
	}
	read_run_time(r, t);
	return 0;
}

void sampler_close(struct sampler *r)
{
	if (!r)
		return;
	sampler_detach(r);
	free(r->links);
	if (r->stats_fd >= 0)
		close(r->stats_fd);
	sampler_bpf__destroy(r->skel);
	free(r);
}
