/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbolt record: a profile of the running kernel from perf samples counted in the kernel
 * by a BPF program.  record_cmd.c is the command (conditions, perf events, time,
 * output); sampler.bpf.c the programs the kernel runs at each sample; sampler_load.c
 * loads them with libbpf and reads their maps (the only file that knows libbpf);
 * record_agg.h is what the programs count, shared with a unit test.
 */
#ifndef KBOLT_RECORD_H
#define KBOLT_RECORD_H

#include <stdbool.h>
#include <stdint.h>

struct record_options {
	const char *output;	/* -o */
	unsigned int duration;	/* --duration seconds; 0: until SIGINT or SIGTERM */
	bool branches;		/* --branches: the branch stacks, not the sampled addresses */
	const char *event;	/* --event cpu-clock|cycles; NULL: the default */
	unsigned int frequency;	/* --frequency HZ; 0: the default */
	unsigned int map_entries;	/* --map-entries; 0: the default */
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
 * through the verifier.  NULL after reporting, the negative errno in *err.
 */
struct sampler *sampler_load(bool branches, unsigned int map_entries, int *err);
/* Attach the program to the perf event perf_fd (one per CPU): 0 or a negative errno */
int sampler_attach(struct sampler *r, int perf_fd);
/* Detach from every perf event: nothing is counted after it */
void sampler_detach(struct sampler *r);
/* The counts map read out (*nr records, malloc'd) and the counters: 0 or a negative errno */
int sampler_read(struct sampler *r, struct rec_record **counts, size_t *nr, struct rec_totals *t);
void sampler_close(struct sampler *r);

#endif
