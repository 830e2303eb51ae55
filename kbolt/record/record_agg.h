/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What kbolt record counts, written once for both sides: compiled into the BPF program
 * (sampler.bpf.c, clang -target bpf), which aggregates in the kernel, and into the unit
 * test (selftests/unit/record_agg.c), which feeds it branch stacks shaped as the kernel
 * fills them (struct perf_branch_entry, include/uapi/linux/perf_event.h).  The map
 * layout (struct rec_key, the counters) is the contract between the BPF program and
 * its loader (sampler_load.c).
 *
 * The types are for any includer.  The functions are for those that define REC_INLINE
 * (how they are declared: always inlined for BPF), provide __u32, __u64 and struct perf_branch_entry (the UAPI headers), and
 * after including it defines the two ways a count is kept, rec_count() and
 * rec_count_dropped(), declared below; agg is the includer's, passed through.
 */
#ifndef KBOLT_RECORD_AGG_H
#define KBOLT_RECORD_AGG_H

#include "../../kmeta/kernel_addr.h"

/* Branch entries read per sample: Intel's LBR and arch LBR keep at most 32, AMD's 16 */
#define REC_MAX_BRANCHES 32
/* Default size of the counts map (--map-entries) */
#define REC_DEFAULT_ENTRIES 65536

/* The kind of a counted record, as kbolt's profile format writes it */
enum rec_kind {
	REC_SAMPLE = 1,		/* "S ADDR COUNT": from == to, the sampled instruction */
	REC_BRANCH,		/* "B FROM TO COUNT branch": a taken branch of the stack */
	REC_RANGE,		/* "F FROM TO COUNT": straight-line code between two of them */
};

/* The key of the counts map; its value is a __u64 count */
struct rec_key {
	__u64 from, to;
	__u32 kind;		/* enum rec_kind */
	__u32 pad;		/* zero: the key is hashed whole */
};

/* The per-CPU counters (an array map, one __u64 a CPU each), summed by the loader */
enum rec_counter {
	REC_NR_SAMPLES,		/* perf samples the program ran for */
	REC_NR_DROPPED,		/* samples or branches with an end outside the kernel */
	REC_NR_LOST,		/* counts not kept: the counts map was full */
	REC_NR_NO_STACK,	/* branch samples without a branch stack */
	REC_NR_COUNTERS
};

#ifdef REC_INLINE
/* Count one more of the record (from, to, kind) */
static REC_INLINE void rec_count(void *agg, __u64 from, __u64 to, __u32 kind);
/* Count nr samples or branches left out: an end outside the kernel */
static REC_INLINE void rec_count_dropped(void *agg, __u64 nr);

static REC_INLINE int rec_is_kernel(__u64 addr)
{
	return addr >= KERNEL_HALF_START;	/* what is not the kernel's is user space */
}

/* A sample at the interrupted instruction ip: counted if in the kernel */
static REC_INLINE void rec_agg_sample(void *agg, __u64 ip)
{
	if (rec_is_kernel(ip))
		rec_count(agg, ip, ip, REC_SAMPLE);
	else
		rec_count_dropped(agg, 1);
}

/*
 * One sample's branch stack, e[0] the most recent branch, as perf2bolt reads "perf
 * record -j any,k" (and prof_perf.c reads perf script's brstack): every entry with both
 * ends in the kernel is a taken branch; between an entry and the older one after it,
 * execution went straight from the older one's target to the newer one's source: a
 * fall-through range, unless the older branch landed right on the newer one (a range
 * of no instruction says nothing the branches do not).  Entries with an end in user
 * space are dropped and counted.  nr is at most REC_MAX_BRANCHES: the bound lets the
 * verifier see the loop end.
 */
static REC_INLINE void rec_agg_branches(void *agg, const struct perf_branch_entry *e, int nr)
{
	for (int i = 0; i < REC_MAX_BRANCHES; i++) {
		__u64 from, to, older_to;

		if (i >= nr)
			break;
		from = e[i].from;
		to = e[i].to;
		if (!rec_is_kernel(from) || !rec_is_kernel(to)) {
			rec_count_dropped(agg, 1);
			continue;
		}
		rec_count(agg, from, to, REC_BRANCH);
		if (i + 1 >= nr || i + 1 >= REC_MAX_BRANCHES)	/* the second: for the verifier */
			continue;
		older_to = e[i + 1].to;
		if (rec_is_kernel(older_to) && older_to < from)
			rec_count(agg, older_to, from, REC_RANGE);
	}
}

#endif /* REC_INLINE */

#endif
