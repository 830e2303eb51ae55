// SPDX-License-Identifier: GPL-2.0
/*
 * Profiles merged: of several workloads or machines, into one training profile.  The
 * result is a function of the multiset of (profile, weight) alone: counts are integers
 * multiplied by integer weights and added, records sorted by (from, to, kind), and the
 * header the inputs' (one kernel; one recorder and one event, or "merged"; the dropped
 * counts weighted and summed).  So a fleet may merge in any order and grouping and get
 * the same bytes.
 *
 * Profiles of KASLR runs (a "text" header: kbolt record's, perf script's) are each at
 * their run's addresses.  x86-64's KASLR moves the kernel image whole, so one run's
 * addresses are another's less the difference of their _text: all are moved to the
 * lowest _text among the inputs, which no order or grouping changes.  A profile in
 * link addresses (no "text") merges only with others in link addresses: where _text
 * was linked, only the vmlinux knows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "profile.h"
#include "record_order.h"

#define MERGED_RECORDER "merged"

static int cmp_edge(const void *a, const void *b)
{
	const struct prof_edge *x = a, *y = b;

	return record_order(x->from, x->to, x->kind, y->from, y->to, y->kind);
}

/* One kernel, as the headers name it, and one kind of address: link, or a run's */
static int same_kernel(const struct prof *a, const struct prof *b)
{
	if (!a->text_runtime != !b->text_runtime) {
		const struct prof *run = a->text_runtime ? a : b;

		pr_err(b->path, "%s is in link addresses, %s in those of a KASLR run (_text at "
		       "0x%llx): the two are not merged", run == a ? b->path : a->path, run->path,
		       (unsigned long long)run->text_runtime);
		return -EINVAL;
	}
	if (!strcmp(a->build_id, b->build_id) && !strcmp(a->release, b->release))
		return 0;
	pr_err(b->path, "a profile of another kernel than %s's (build-id %s, release %s; "
	       "not %s, %s): profiles of one kernel only are merged", a->path,
	       prof_or_dash(b->build_id), prof_or_dash(b->release), prof_or_dash(a->build_id),
	       prof_or_dash(a->release));
	return -EINVAL;
}

/* p's records, moved to the KASLR run of out's _text, times w, added to out */
static int add_weighted(struct prof *out, const struct prof *p, uint64_t w)
{
	uint64_t dropped, slide = p->text_runtime - out->text_runtime;

	if (__builtin_mul_overflow(p->nr_dropped, w, &dropped) ||
	    __builtin_add_overflow(out->nr_dropped, dropped, &out->nr_dropped)) {
		pr_err(p->path, "its dropped count times the weight %llu, summed, does not fit "
		       "in 64 bits", (unsigned long long)w);
		return -EOVERFLOW;
	}
	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_edge *e = &p->edges[i];
		uint64_t count;

		if (__builtin_mul_overflow(e->count, w, &count)) {
			pr_err(p->path, "a count times the weight %llu does not fit in 64 bits",
			       (unsigned long long)w);
			return -EOVERFLOW;
		}
		prof_add_edge(out, e->from - slide, e->to - slide, count, e->kind);
	}
	return 0;
}

/* Sorted records of equal (from, to, kind) summed into one */
int prof_aggregate(struct prof *out)
{
	size_t n = 0;

	sort_array(out->edges, out->nr_edges, sizeof(*out->edges), cmp_edge);
	for (size_t i = 0; i < out->nr_edges; i++) {
		struct prof_edge *last = n ? &out->edges[n - 1] : NULL;

		if (last && !cmp_edge(last, &out->edges[i])) {
			if (__builtin_add_overflow(last->count, out->edges[i].count, &last->count)) {
				pr_err(out->path, "the sum of a record's counts does not fit in 64 bits");
				return -EOVERFLOW;
			}
			continue;
		}
		out->edges[n++] = out->edges[i];
	}
	out->nr_edges = n;
	return 0;
}

struct prof *prof_merge(struct prof *const *in, const uint64_t *weights, size_t nr)
{
	struct prof *out = xcalloc(1, sizeof(*out));
	int err = 0;

	out->path = xstrdup("the merged profile");
	memcpy(out->build_id, in[0]->build_id, sizeof(out->build_id));
	memcpy(out->release, in[0]->release, sizeof(out->release));
	memcpy(out->recorder, in[0]->recorder, sizeof(out->recorder));
	memcpy(out->event, in[0]->event, sizeof(out->event));
	out->text_runtime = in[0]->text_runtime;
	for (size_t k = 1; k < nr; k++)
		if (in[k]->text_runtime && in[k]->text_runtime < out->text_runtime)
			out->text_runtime = in[k]->text_runtime;
	for (size_t k = 0; !err && k < nr; k++) {
		err = prof_need_addresses(in[k]) || same_kernel(in[0], in[k]) ? -EINVAL : 0;
		if (!err && strcmp(out->recorder, in[k]->recorder))
			snprintf(out->recorder, sizeof(out->recorder), "%s", MERGED_RECORDER);
		if (!err && strcmp(out->event, in[k]->event))
			snprintf(out->event, sizeof(out->event), "%s", MERGED_RECORDER);
		if (!err)
			err = add_weighted(out, in[k], weights ? weights[k] : 1);
	}
	if (!err)
		err = prof_aggregate(out);
	if (err) {
		prof_free(out);
		return NULL;
	}
	return out;
}
