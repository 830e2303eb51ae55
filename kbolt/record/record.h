/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbolt record: a profile of the running kernel from perf samples counted in the kernel
 * by a BPF program.  record_cmd.c is the command (conditions, the kernel's identity,
 * time, output); perf_events.c the events that sample, on the CPUs of cpu_list.c;
 * sampler.bpf.c the programs the kernel runs at each sample; sampler_load.c loads them
 * with libbpf and reads their maps (the only file that knows libbpf); record_agg.h is
 * what the programs count, shared with a unit test.
 */
#ifndef KBOLT_RECORD_H
#define KBOLT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/perf_event.h>

struct record_options {
	const char *output;	/* -o */
	unsigned int duration;	/* --duration seconds; 0: until SIGINT or SIGTERM */
	bool branches;		/* --branches: the branch stacks, not the sampled addresses */
	const char *event;	/* --event cpu-clock|cycles; NULL: the default */
	unsigned int frequency;	/* --frequency HZ; 0: the default */
	unsigned int map_entries;	/* --map-entries; 0: the default */
	bool bpf_stats;		/* --bpf-stats: the kernel times the programs (all of them) */
	bool check;		/* --check: load the programs (verifier) and stop */
	bool json, pretty;	/* the summary as JSON */
};

/* The command; its exit status (0, or 1 after reporting) */
int kbolt_record(const struct record_options *o);

/*
 * The CPUs of a list in the kernel's format ("0-3,8-11\n"): *nr ids, increasing, in
 * *cpus (malloc'd).  0, or -EINVAL (nothing kept) for anything else.
 */
int cpu_list_parse(const char *s, int **cpus, int *nr);
/* The online CPUs (cpu_list.c): 0, or a negative errno after reporting */
int cpu_list_read_online(int **cpus, int *nr);

/* The loader of the sampler (sampler_load.c) */
struct sampler;

/* The perf events of a recording (perf_events.c) */
struct rec_events {
	const struct record_options *o;
	char name[32];		/* the event sampled, as perf names it: cycles:ppp, cpu-clock */
	char note[256];		/* why the default event is not the one sampled, or "" */
	struct perf_event_attr attr;	/* the event, the same on every CPU */
	int *cpus;		/* the online CPUs' ids */
	int *fds;		/* the event of each, or -1 */
	int nr_cpus;
	int nr_open;		/* the online CPUs, less any gone offline since */
};

/*
 * Which event the options ask for, the default (cycles, as precise as the PMU takes
 * it, else cpu-clock with a note) tried on the first online CPU: 0, or a negative
 * errno after reporting
 */
int events_choose(struct rec_events *ev, const struct record_options *o);
/* The event opened on every online CPU, the sampler attached: 0 or a negative errno */
int events_open(struct rec_events *ev, struct sampler *s);
/* The sampler detached and the events closed: nothing is counted after it */
void events_close(struct rec_events *ev, struct sampler *s);
void events_free(struct rec_events *ev);

/* What record_cmd.c reads of the kernel's settings, for the messages of the others */
long rec_read_sysctl(const char *path);	/* a number file of /proc/sys, -1 if absent */
void rec_read_lockdown(char *mode, size_t size);	/* "" if not locked down */
bool rec_has_sys_admin(void);

/* One counted record, as the map keeps it */
struct rec_record {
	uint64_t from, to, count;
	uint32_t kind;		/* enum rec_kind of record_agg.h */
};

/* The per-CPU counters summed, and what the programs cost (BPF run-time statistics) */
struct rec_totals {
	uint64_t samples, dropped, lost, no_stack;
	uint64_t bpf_run_ns, bpf_run_cnt;
};

/* Can this kernel load perf-event BPF programs?  0, or a negative errno after reporting */
int sampler_probe(void);
/*
 * Load the program of the path (branches or samples) with a counts map of map_entries,
 * through the verifier, the kernel's BPF run-time statistics switched on with stats.
 * NULL after reporting, the negative errno in *err.
 */
struct sampler *sampler_load(bool branches, unsigned int map_entries, bool stats, int *err);
/* Attach the program to the perf event perf_fd (one per CPU): 0 or a negative errno */
int sampler_attach(struct sampler *r, int perf_fd);
/* Detach from every perf event: nothing is counted after it */
void sampler_detach(struct sampler *r);
/* The counts map read out (*nr records, malloc'd) and the counters: 0 or a negative errno */
int sampler_read(struct sampler *r, struct rec_record **counts, size_t *nr, struct rec_totals *t);
void sampler_close(struct sampler *r);

#endif
