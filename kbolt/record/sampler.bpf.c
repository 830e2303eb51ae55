// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt record's BPF programs, run by the kernel at each perf sample on every CPU
 * (BPF_PROG_TYPE_PERF_EVENT, context struct bpf_perf_event_data of
 * include/uapi/linux/bpf_perf_event.h), counting in the kernel what record_agg.h says:
 * record_sample the interrupted kernel instruction, record_branches the sample's branch
 * stack (bpf_read_branch_records(), the perf_branch_entry array of
 * include/uapi/linux/perf_event.h).  The counts stay in a hash map that the loader
 * (sampler_load.c) reads once at the end: a recording costs a map update per sample and
 * makes no perf ring-buffer traffic at all.
 *
 * Built with clang -target bpf -g -O2 into a skeleton (bpftool gen skeleton).  Every
 * layout read is UAPI, fixed for x86-64: the sampled registers are bpf_user_pt_regs_t,
 * which x86-64 defines as the UAPI struct pt_regs (asm/ptrace.h; rip at byte 128, as in
 * the kernel's own pt_regs), so the program has no CO-RE relocation and loads on a
 * kernel without BTF (no CONFIG_DEBUG_INFO_BTF).  The object's own BTF (-g) describes
 * its maps and functions, for libbpf.
 */
#include <stddef.h>
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/perf_event.h>
#include <bpf/bpf_helpers.h>

/*
 * The x86-64 layout, whatever the host: clang -target bpf defines no __i386__, so
 * asm/ptrace.h gives the 64-bit struct pt_regs; the kernel rewrites the context's
 * offsets against its pt_regs, whose ip sits where the UAPI's rip does
 */
_Static_assert(offsetof(struct bpf_perf_event_data, regs) == 0 &&
	       offsetof(bpf_user_pt_regs_t, rip) == 128, "x86-64's struct pt_regs");

#define EEXIST 17

#define REC_INLINE __always_inline
#include "record_agg.h"

_Static_assert(REC_NR_COUNTERS == 4 && REC_MAX_BRANCHES == 32 &&
	       REC_DEFAULT_ENTRIES == 65536, "the map definitions below use these numbers");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);	/* preallocated: the only kind NMI context may use */
	__uint(max_entries, 65536);		/* REC_DEFAULT_ENTRIES; --map-entries sets it */
	__type(key, struct rec_key);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 4);		/* REC_NR_COUNTERS */
	__type(key, __u32);
	__type(value, __u64);
} counters SEC(".maps");

/* One sample's branch stack: too big for the 512-byte BPF stack, so a per-CPU map value */
struct branch_buf {
	struct perf_branch_entry e[32];	/* REC_MAX_BRANCHES */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct branch_buf);
} branch_buf SEC(".maps");

/* A program runs once per CPU at a time (the kernel's bpf_prog_active): plain adds */
static __always_inline void counter_add(__u32 idx, __u64 n)
{
	__u64 *c = bpf_map_lookup_elem(&counters, &idx);

	if (c)
		*c += n;
}

static __always_inline void rec_count_dropped(void *agg, __u64 nr)
{
	counter_add(REC_NR_DROPPED, nr);
}

/*
 * One more of a record: the map is shared by all CPUs, so the add is atomic, and a
 * key two CPUs insert at once is added to by the one that lost the race.  A full map
 * (-E2BIG) or a busy bucket lock (-EBUSY, a sample nested in a map update) loses the
 * count, counted as lost: the loader reports it.
 */
static __always_inline void rec_count(void *agg, __u64 from, __u64 to, __u32 kind)
{
	struct rec_key k = { .from = from, .to = to, .kind = kind, .pad = 0 };
	__u64 one = 1, *v;
	long err;

	v = bpf_map_lookup_elem(&counts, &k);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	err = bpf_map_update_elem(&counts, &k, &one, BPF_NOEXIST);
	if (!err)
		return;
	if (err == -EEXIST) {
		v = bpf_map_lookup_elem(&counts, &k);
		if (v) {
			__sync_fetch_and_add(v, 1);
			return;
		}
	}
	counter_add(REC_NR_LOST, 1);
}

SEC("perf_event")
int record_sample(struct bpf_perf_event_data *ctx)
{
	counter_add(REC_NR_SAMPLES, 1);
	rec_agg_sample(0, ctx->regs.rip);
	return 0;	/* nothing for perf's ring buffer */
}

SEC("perf_event")
int record_branches(struct bpf_perf_event_data *ctx)
{
	__u32 zero = 0;
	struct branch_buf *b = bpf_map_lookup_elem(&branch_buf, &zero);
	long size;

	counter_add(REC_NR_SAMPLES, 1);
	if (!b)
		return 0;
	size = bpf_read_branch_records(ctx, b->e, sizeof(b->e), 0);
	if (size <= 0) {
		counter_add(REC_NR_NO_STACK, 1);
		return 0;
	}
	rec_agg_branches(0, b->e, size / sizeof(b->e[0]));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
