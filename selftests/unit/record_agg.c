// SPDX-License-Identifier: GPL-2.0
/*
 * Unit tests of what kbolt record's BPF program counts (kbolt/record/record_agg.h,
 * compiled here for user space from the same source): branch stacks shaped as the
 * kernel's bpf_read_branch_records() fills them (struct perf_branch_entry of
 * include/uapi/linux/perf_event.h, the most recent branch first, flag bits set),
 * cases by hand, then random stacks whose counts must equal what kbolt's perf script
 * reader (kbolt/profile/prof_perf.c, perf2bolt's rules) makes of the same stacks
 * written as "perf script -F brstack" text.  And the samples: kernel addresses
 * counted, user ones dropped.  TAP output.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/types.h>

#include "../../common/util.h"
#include "../../kbolt/profile/profile.h"
#include "tap.h"

#define REC_INLINE inline
#include "../../kbolt/record/record_agg.h"

/* What the BPF maps would hold: records and their counts, and the dropped counter */
struct agg {
	struct rec_key key[8192];
	uint64_t count[8192];
	size_t nr;
	uint64_t dropped;
};

static inline void rec_count(void *p, __u64 from, __u64 to, __u32 kind)
{
	struct agg *a = p;

	for (size_t i = 0; i < a->nr; i++) {
		if (a->key[i].from == from && a->key[i].to == to && a->key[i].kind == kind) {
			a->count[i]++;
			return;
		}
	}
	if (a->nr < ARRAY_SIZE(a->key)) {
		a->key[a->nr] = (struct rec_key){ from, to, kind, 0 };
		a->count[a->nr++] = 1;
	}
}

static inline void rec_count_dropped(void *p, __u64 nr)
{
	((struct agg *)p)->dropped += nr;
}

static uint64_t count_of(const struct agg *a, uint64_t from, uint64_t to, uint32_t kind)
{
	for (size_t i = 0; i < a->nr; i++)
		if (a->key[i].from == from && a->key[i].to == to && a->key[i].kind == kind)
			return a->count[i];
	return 0;
}

/* An entry as the LBR gives it: the flag bits set, which must not matter */
static struct perf_branch_entry entry(uint64_t from, uint64_t to)
{
	return (struct perf_branch_entry){ .from = from, .to = to, .mispred = 1, .cycles = 37,
					   .type = PERF_BR_COND };
}

#define K(off) (0xffffffff81000000ULL + (off))
#define U(off) (0x00007f0000000000ULL + (off))

static void test_by_hand(void)
{
	static struct agg a;
	/* newest first: a call at 0x120, reached from the jump at 0x100 that landed on 0x110 */
	struct perf_branch_entry s[] = {
		entry(K(0x120), K(0x5000)),
		entry(K(0x100), K(0x110)),
		entry(K(0x40), K(0x80)),
	};
	struct perf_branch_entry landed[] = { entry(K(0x200), K(0x300)), entry(K(0x10), K(0x200)) };
	struct perf_branch_entry backwards[] = { entry(K(0x200), K(0x300)), entry(K(0x10), K(0x250)) };
	struct perf_branch_entry user[] = {
		entry(K(0x700), K(0x800)),
		entry(U(0x10), K(0x600)),	/* a system call's entry: from user space */
		entry(K(0x500), U(0x20)),	/* the return to user space before it */
	};
	struct perf_branch_entry full[40];

	rec_agg_branches(&a, s, 3);
	ok(count_of(&a, K(0x120), K(0x5000), REC_BRANCH) == 1 &&
	   count_of(&a, K(0x100), K(0x110), REC_BRANCH) == 1 &&
	   count_of(&a, K(0x40), K(0x80), REC_BRANCH) == 1, "record_agg: each entry a branch");
	ok(count_of(&a, K(0x110), K(0x120), REC_RANGE) == 1 &&
	   count_of(&a, K(0x80), K(0x100), REC_RANGE) == 1 && a.nr == 5 && !a.dropped,
	   "record_agg: a range from each older target to the newer source, and no more");
	rec_agg_branches(&a, s, 3);
	ok(count_of(&a, K(0x110), K(0x120), REC_RANGE) == 2 && a.nr == 5,
	   "record_agg: the same stack again adds to the same records");

	memset(&a, 0, sizeof(a));
	rec_agg_branches(&a, landed, 2);
	ok(a.nr == 2 && !count_of(&a, K(0x200), K(0x200), REC_RANGE),
	   "record_agg: no range when the older branch landed on the newer one");
	memset(&a, 0, sizeof(a));
	rec_agg_branches(&a, backwards, 2);
	ok(a.nr == 2, "record_agg: no range when the older target is past the newer source");

	memset(&a, 0, sizeof(a));
	rec_agg_branches(&a, user, 3);
	ok(a.dropped == 2 && a.nr == 2 && count_of(&a, K(0x600), K(0x700), REC_RANGE) == 1,
	   "record_agg: entries with a user end dropped and counted, the range from a "
	   "system call's entry kept");

	for (int i = 0; i < 40; i++)	/* newest first: going down in addresses */
		full[i] = entry(K(0x10000 - 0x100 * i), K(0x10000 - 0x100 * i + 0x80));
	memset(&a, 0, sizeof(a));
	rec_agg_branches(&a, full, 40);
	ok(a.nr == 2 * REC_MAX_BRANCHES - 1,
	   "record_agg: at most %d entries read, %zu records", REC_MAX_BRANCHES, a.nr);
	memset(&a, 0, sizeof(a));
	rec_agg_branches(&a, full, 0);
	ok(a.nr == 0 && !a.dropped, "record_agg: an empty stack counts nothing");

	memset(&a, 0, sizeof(a));
	rec_agg_sample(&a, K(0x1234));
	rec_agg_sample(&a, K(0x1234));
	rec_agg_sample(&a, U(0x1234));
	ok(count_of(&a, K(0x1234), K(0x1234), REC_SAMPLE) == 2 && a.nr == 1 && a.dropped == 1,
	   "record_agg: kernel samples counted by address, user ones dropped");
}

static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* An address of a small kernel text, or now and then of user space */
static uint64_t rnd_addr(uint64_t *s)
{
	return rnd(s) % 16 == 0 ? U(rnd(s) % 0x100) : K(rnd(s) % 32 * 4);
}

/*
 * Random stacks through record_agg.h and, as perf script text, through prof_perf.c:
 * the same records with the same counts, the same number dropped
 */
static void test_like_perf(void)
{
	static struct agg a;
	char path[] = "/tmp/kbolt-record-agg.XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	uint64_t s = 0x9e3779b97f4a7c15ULL, total = 0;
	struct prof *p;
	size_t same = 0;

	if (!f) {
		ok(0, "record_agg: a temporary file for perf script text");
		return;
	}
	fprintf(f, "0 0.0: PERF_RECORD_MMAP -1/0: [0xffffffff81000000(0x1000000) @ "
		"0xffffffff81000000]: x [kernel.kallsyms]_text\n");
	for (int n = 0; n < 2000; n++) {
		struct perf_branch_entry e[REC_MAX_BRANCHES];
		int nr = rnd(&s) % (REC_MAX_BRANCHES + 1);

		fprintf(f, "kworker 12");
		for (int i = 0; i < nr; i++) {
			e[i] = entry(rnd_addr(&s), rnd_addr(&s));
			fprintf(f, " 0x%llx/0x%llx/P/-/-/0", (unsigned long long)e[i].from,
				(unsigned long long)e[i].to);
		}
		fprintf(f, "\n");
		rec_agg_branches(&a, e, nr);
	}
	fclose(f);
	p = prof_read(path);
	unlink(path);
	if (!p) {
		ok(0, "record_agg: perf script text read back");
		return;
	}
	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_edge *e = &p->edges[i];
		uint32_t kind = e->kind == PK_FALLTHROUGH ? REC_RANGE : REC_BRANCH;

		same += count_of(&a, e->from, e->to, kind) == e->count;
		total += e->count;
	}
	ok(a.nr > 500 && same == a.nr && p->nr_edges == a.nr,
	   "record_agg: %zu records of 2000 random stacks, %zu the same in prof_perf.c's "
	   "reading (%zu)", a.nr, same, p->nr_edges);
	ok(a.dropped == p->nr_dropped && a.dropped > 0,
	   "record_agg: %" PRIu64 " entries dropped, as prof_perf.c drops %" PRIu64,
	   a.dropped, (uint64_t)p->nr_dropped);
	prof_free(p);
}

int main(void)
{
	test_by_hand();
	test_like_perf();
	return tap_done();
}
