// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt's QEMU TCG plugin: exact edge profiles of kernel code, with no hardware help.
 *
 * Every translated block (TB) gets an execution callback.  Per vCPU the plugin keeps
 * the TB that ran last; when the next one starts, the pair is one control transfer:
 * a fall-through when the new TB starts where the last one ended and its last
 * instruction could fall through, otherwise a taken branch from the last instruction,
 * of the kind that instruction is (jcc, jmp, call, ret, indirect jmp/call), or an
 * asynchronous transfer ("int": interrupt, exception, fault) when that instruction
 * cannot branch there.  Only transfers between two kernel addresses are counted, and
 * only while profiling is on: from start to exit with boot=on, else between the start
 * and stop markers a user program executes (the 7-byte nops "nopl 0x3153424b(%rax)"
 * and "nopl 0x3053424b(%rax)", see scripts/lab/labtool.c).
 *
 * QEMU quirks handled: a rep-prefixed string instruction ends its TB and each further
 * iteration re-runs a TB that starts at the same instruction, and an instruction that
 * crosses a page boundary is re-run in a TB of its own (continuations, not edges); a
 * TB that ends because of the instruction limit or a page boundary falls through into
 * the next one (recorded as a fall-through; kbolt joins them).  TCG takes interrupts
 * between TBs: a transfer a TB's last instruction cannot make is recorded as "int".  A
 * fault in the middle of a TB is attributed to the TB's last instruction, as "int".
 *
 * The QEMU API declarations and the markers are in plugin.h, shared with the
 * evaluation plugin.
 *
 * Arguments: out=FILE (required), buildid=HEX, release=STRING (copied into the header
 * so kbolt can refuse a profile of another kernel), boot=on (profile from the start),
 * entries=FILE (lines "START END" in hex: the interrupt and exception entry points;
 * a transfer to one that is not a direct branch to it is an interrupt, whatever the
 * last instruction was: this tells a ret or indirect jump from the interrupt after it).
 * Output: the kbolt profile format, Documentation/profile-format.rst.
 */
#include <inttypes.h>
#include <pthread.h>

#include "../../kmeta/kernel_addr.h"
#include "../profile/record_order.h"
#include "plugin.h"

enum kind { K_NONE, K_JCC, K_JMP, K_CALL, K_RET, K_IJMP, K_ICALL, K_INT, K_OTHER_BRANCH };
static const char *const kind_names[] = {
	"ft", "jcc", "jmp", "call", "ret", "ijmp", "icall", "int", "other",
};

struct tb_info {
	uint64_t start, last, end;	/* first insn, last insn, address after it */
	uint64_t target;		/* of a direct jcc/jmp/call ending the TB, else 0 */
	unsigned char kind;		/* of the last instruction */
	bool kernel;
};

struct edge {
	uint64_t from, to, count;
	unsigned char kind;		/* K_NONE: a fall-through */
};

/* Per vCPU: the last TB, and an open-addressing table of edges, merged at exit */
struct vcpu {
	const struct tb_info *last;
	struct edge *edges;
	size_t nr, mask;
} __attribute__((aligned(64)));

static struct vcpu *vcpus;
static int nr_vcpus;
static volatile bool active;
static const char *out_path, *build_id = "", *release = "";

/* Interrupt and exception entry ranges, sorted (entries=FILE) */
static struct { uint64_t start, end; } *entries;
static size_t nr_entries;

static bool is_legacy_prefix(unsigned char b)
{
	switch (b) {
	case 0x66: case 0x67: case 0x2e: case 0x3e: case 0x26: case 0x64: case 0x65:
	case 0x36: case 0xf0: case 0xf2: case 0xf3:
		return true;
	}
	return false;
}

/*
 * The kind of control transfer an instruction makes, from its opcode bytes.  The
 * plugin runs inside QEMU and needs only this much of x86: it stays free of capstone.
 */
static enum kind classify(const unsigned char *p, size_t n, uint64_t addr, uint64_t *target)
{
	size_t i = 0;

	*target = 0;
	/* direct branches end in their rel8/rel32: the target is the end plus it */
	if (n >= 2 && ((p[n - 2] & 0xf0) == 0x70 || p[n - 2] == 0xeb || p[n - 2] == 0xe3))
		*target = addr + n + (int8_t)p[n - 1];
	if (n >= 5 && (p[n - 5] == 0xe8 || p[n - 5] == 0xe9 ||
		       (n >= 6 && p[n - 6] == 0x0f && (p[n - 5] & 0xf0) == 0x80)))
		*target = addr + n + (int32_t)(p[n - 4] | p[n - 3] << 8 | p[n - 2] << 16 |
					       (uint32_t)p[n - 1] << 24);

	while (i < n && is_legacy_prefix(p[i]))
		i++;
	if (i < n && (p[i] & 0xf0) == 0x40)	/* REX */
		i++;
	if (i >= n)
		return K_NONE;
	switch (p[i]) {
	case 0x70 ... 0x7f: case 0xe0 ... 0xe3:
		return K_JCC;
	case 0xeb: case 0xe9:
		return K_JMP;
	case 0xe8:
		return K_CALL;
	case 0xc3: case 0xc2: case 0xcb: case 0xca:
		return K_RET;
	case 0xcf:	/* iret: the end of an interrupt or exception */
		return K_OTHER_BRANCH;
	case 0xcc: case 0xcd:
		return K_OTHER_BRANCH;
	case 0xff:
		if (i + 1 >= n)
			return K_NONE;
		switch ((p[i + 1] >> 3) & 7) {
		case 2: case 3: return K_ICALL;
		case 4: case 5: return K_IJMP;
		}
		return K_NONE;
	case 0x0f:
		if (i + 1 >= n)
			return K_NONE;
		if ((p[i + 1] & 0xf0) == 0x80)
			return K_JCC;
		if (p[i + 1] == 0x05 || p[i + 1] == 0x07 || p[i + 1] == 0x0b)
			return K_OTHER_BRANCH;	/* syscall, sysret, ud2 */
		return K_NONE;
	}
	return K_NONE;
}

static uint64_t hash(uint64_t from, uint64_t to, unsigned char kind)
{
	uint64_t h = from * 0x9e3779b97f4a7c15ULL ^ (to + kind) * 0xc2b2ae3d27d4eb4fULL;

	return h ^ (h >> 29);
}

static void grow(struct vcpu *v)
{
	struct edge *old = v->edges;
	size_t old_size = v->mask + 1;

	v->mask = v->edges ? 2 * old_size - 1 : 4095;
	v->edges = xcalloc(v->mask + 1, sizeof(*v->edges));
	v->nr = 0;
	for (size_t i = 0; old && i < old_size; i++) {
		if (!old[i].count)
			continue;
		size_t h = hash(old[i].from, old[i].to, old[i].kind) & v->mask;

		while (v->edges[h].count)
			h = (h + 1) & v->mask;
		v->edges[h] = old[i];
		v->nr++;
	}
	free(old);
}

static void count_edge(struct vcpu *v, uint64_t from, uint64_t to, unsigned char kind)
{
	size_t h;

	if (!v->edges || 2 * (v->nr + 1) > v->mask)
		grow(v);
	h = hash(from, to, kind) & v->mask;
	while (v->edges[h].count) {
		struct edge *e = &v->edges[h];

		if (e->from == from && e->to == to && e->kind == kind) {
			e->count++;
			return;
		}
		h = (h + 1) & v->mask;
	}
	v->edges[h] = (struct edge){ from, to, 1, kind };
	v->nr++;
}

static bool is_entry(uint64_t addr)
{
	size_t lo = 0, hi = nr_entries;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (entries[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < nr_entries && addr >= entries[lo].start;
}

static void record(struct vcpu *v, const struct tb_info *prev, const struct tb_info *cur)
{
	enum kind k = prev->kind;

	/*
	 * The same instruction again, not a branch to itself: the next iteration of a rep
	 * string instruction, or an instruction QEMU re-ran in a TB of its own (one that
	 * crosses a page boundary is retranslated alone).  A continuation, not an edge.
	 */
	if (cur->start == prev->last && prev->target != cur->start)
		return;
	if (cur->start == prev->end && (k == K_NONE || k == K_JCC)) {
		count_edge(v, prev->last, cur->start, K_NONE);
		return;
	}
	/*
	 * TCG delivers interrupts between TBs: a transfer to neither the fall-through nor
	 * the encoded target of a direct branch is one.  (The branch it interrupted is
	 * then seen as "other" from the iret: each interrupt costs that edge one count.)
	 */
	if (k == K_NONE || (prev->target && cur->start != prev->target) ||
	    (cur->start != prev->target && is_entry(cur->start)))
		k = K_INT;
	count_edge(v, prev->last, cur->start, k);
}

static void tb_exec(unsigned int cpu, void *udata)
{
	const struct tb_info *cur = udata;
	struct vcpu *v = &vcpus[cpu < (unsigned int)nr_vcpus ? cpu : 0];

	if (active && v->last && v->last->kernel && cur->kernel)
		record(v, v->last, cur);
	v->last = cur;
}

static void marker_exec(unsigned int cpu, void *udata)
{
	active = udata != NULL;
	vcpus[cpu < (unsigned int)nr_vcpus ? cpu : 0].last = NULL;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct qemu_plugin_insn *last;
	struct tb_info *info;

	if (!n)
		return;
	/* one tb_info per translation: QEMU keeps no plugin data we could free with it */
	info = xcalloc(1, sizeof(*info));
	last = qemu_plugin_tb_get_insn(tb, n - 1);
	info->start = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0));
	info->last = qemu_plugin_insn_vaddr(last);
	info->end = info->last + qemu_plugin_insn_size(last);
	info->kind = classify(qemu_plugin_insn_data(last), qemu_plugin_insn_size(last),
			      info->last, &info->target);
	if (info->kind != K_JCC && info->kind != K_JMP && info->kind != K_CALL)
		info->target = 0;
	info->kernel = info->start >= KERNEL_HALF_START;
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS, info);
	if (!info->kernel)
		markers_register(tb, marker_exec);
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;

	return record_order(x->from, x->to, x->kind, y->from, y->to, y->kind);
}

/* All vCPUs' edges in one sorted array, equal edges summed */
static struct edge *merge(size_t *nr)
{
	size_t total = 0, k = 0, out = 0;
	struct edge *all;

	for (int c = 0; c < nr_vcpus; c++)
		total += vcpus[c].nr;
	all = xcalloc(total ? total : 1, sizeof(*all));
	for (int c = 0; c < nr_vcpus; c++)
		for (size_t i = 0; vcpus[c].edges && i <= vcpus[c].mask; i++)
			if (vcpus[c].edges[i].count)
				all[k++] = vcpus[c].edges[i];
	qsort(all, k, sizeof(*all), cmp_edge);
	for (size_t i = 0; i < k; i++) {
		if (out && !cmp_edge(&all[out - 1], &all[i]))
			all[out - 1].count += all[i].count;
		else
			all[out++] = all[i];
	}
	*nr = out;
	return all;
}

static void write_profile(qemu_plugin_id_t id, void *udata)
{
	char *tmp = malloc(strlen(out_path) + 8);
	size_t nr;
	struct edge *e = merge(&nr);
	FILE *f;

	sprintf(tmp, "%s.tmp", out_path);
	f = fopen(tmp, "w");
	if (!f) {
		/* stderr: qemu_plugin_outs() is silent without -d plugin */
		fprintf(stderr, "kbolt plugin: %s: cannot write the profile\n", tmp);
		free(tmp);
		free(e);
		return;
	}
	fprintf(f, "# kbolt profile: exact kernel edges from the QEMU TCG plugin\n");
	fprintf(f, "kbolt-profile 1\nbuild-id %s\nrelease %s\nrecorder qemu-tcg\n",
		build_id[0] ? build_id : "-", release[0] ? release : "-");
	for (size_t i = 0; i < nr; i++) {
		if (e[i].kind == K_NONE)
			fprintf(f, "F %" PRIx64 " %" PRIx64 " %" PRIu64 "\n", e[i].from, e[i].to,
				e[i].count);
		else
			fprintf(f, "B %" PRIx64 " %" PRIx64 " %" PRIu64 " %s\n", e[i].from, e[i].to,
				e[i].count, kind_names[e[i].kind]);
	}
	/* rename only a complete profile into place */
	if (fclose(f) == 0)
		rename(tmp, out_path);
	free(tmp);
	free(e);
}

static int cmp_entry(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;

	return *x < *y ? -1 : *x > *y;
}

static int read_entries(const char *path)
{
	FILE *f = fopen(path, "r");
	uint64_t start, end;
	size_t cap = 0;

	if (!f) {
		fprintf(stderr, "kbolt plugin: %s: cannot read the entry points\n", path);
		return -1;
	}
	while (fscanf(f, "%" SCNx64 " %" SCNx64, &start, &end) == 2) {
		if (nr_entries == cap) {
			cap = cap ? 2 * cap : 64;
			entries = realloc(entries, cap * sizeof(*entries));
			if (!entries)
				abort();
		}
		entries[nr_entries].start = start;
		entries[nr_entries++].end = end > start ? end : start + 1;
	}
	fclose(f);
	qsort(entries, nr_entries, sizeof(*entries), cmp_entry);
	return 0;
}

/* The recorder's own arguments, for plugin_parse_args() */
static int parse_arg(const char *arg)
{
	if (!strncmp(arg, "buildid=", 8))
		build_id = arg + 8;
	else if (!strncmp(arg, "release=", 8))
		release = arg + 8;
	else if (!strncmp(arg, "entries=", 8))
		return read_entries(arg + 8);
	else
		return 1;
	return 0;
}

static int init(qemu_plugin_id_t id)
{
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, write_profile, NULL);
	return 0;
}

PLUGIN_INSTALL(parse_arg, init)
