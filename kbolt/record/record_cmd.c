// SPDX-License-Identifier: GPL-2.0
/*
 * kbolt record: a profile of the running kernel.  A perf event on every online CPU
 * (perf_events.c) runs sampler.bpf.c's program at each sample, which counts in a BPF
 * map (sampler_load.c loads it); at the end of the duration or at SIGINT/SIGTERM the
 * counts are read once and written in kbolt's profile format
 * (Documentation/profile-format.rst) in the addresses the kernel ran at, with where
 * /proc/kallsyms says _text runs (the header's "text"): whoever reads the profile takes
 * the KASLR slide out against the vmlinux's own _text (profile_match.c), whatever
 * address that vmlinux was linked at.  The kernel is named by the GNU build-id note of
 * /sys/kernel/notes and by uname's release.  Addresses outside the kernel's text
 * (modules, BPF, trampolines) are left out and counted ("dropped").
 *
 * The steps, in order: the conditions the kernel and the caller must meet, each
 * refused with one line (before anything is loaded); the kernel's identity and text
 * (before recording: a module loaded later changes nothing); the event chosen (the
 * PMU probed before the program is loaded, so that a refusal costs nothing); the
 * programs loaded; the events opened and attached; the wait; the programs detached
 * before the maps are read; the output written whole (lib/outfile.h).
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/types.h>

#include "../../common/json.h"
#include "../../common/util.h"
#include "../lib/outfile.h"
#include "record.h"
#include "record_agg.h"

#define NOTES_PATH "/sys/kernel/notes"
#define KALLSYMS_PATH "/proc/kallsyms"
#define PARANOID_PATH "/proc/sys/kernel/perf_event_paranoid"
#define KPTR_RESTRICT_PATH "/proc/sys/kernel/kptr_restrict"
#define LOCKDOWN_PATH "/sys/kernel/security/lockdown"

/* CAP_BPF and CAP_PERFMON (Linux 5.8) may be missing from older headers */
#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* The running kernel: who it is and where its text is */
struct kernel_id {
	char build_id[128];	/* hex, "-" if the note is missing */
	char release[65];
	uint64_t text, etext;	/* where _text and _etext run */
};

struct recording {
	const struct record_options *o;
	struct kernel_id k;
	struct rec_events ev;
	unsigned int map_entries;
	struct sampler *sampler;
	struct rec_record *recs;
	size_t nr_recs;
	struct rec_totals t;
	uint64_t dropped;	/* the program's plus the records outside the text */
	double seconds;
};

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1U << (cap % 32));
}

/* This process's capabilities, both 32-bit words: 0, or -1 and errno */
static int read_caps(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };

	memset(d, 0, 2 * sizeof(*d));
	return syscall(SYS_capget, &h, d);
}

bool rec_has_sys_admin(void)
{
	struct __user_cap_data_struct d[2];

	return !read_caps(d) && has_cap(d, CAP_SYS_ADMIN);
}

/* Root, or the two capabilities that loading and attaching perf-event programs needs */
static int check_caps(void)
{
	struct __user_cap_data_struct d[2];

	if (read_caps(d)) {
		pr_err(NULL, "record: cannot read this process's capabilities: %s", strerror(errno));
		return -errno;
	}
	if (has_cap(d, CAP_SYS_ADMIN) || (has_cap(d, CAP_BPF) && has_cap(d, CAP_PERFMON)))
		return 0;
	pr_err(NULL, "record: needs root, or the capabilities CAP_BPF and CAP_PERFMON "
	       "(this process has %s%s): run it as root", has_cap(d, CAP_BPF) ? "CAP_BPF" : "neither",
	       has_cap(d, CAP_PERFMON) ? "CAP_PERFMON" : has_cap(d, CAP_BPF) ? " only" : "");
	return -EPERM;
}

/* A one-line number file of /proc/sys; -1 if absent */
long rec_read_sysctl(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (f) {
		if (fscanf(f, "%ld", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* The lockdown mode in force ("integrity", "confidentiality"), or "" for none */
void rec_read_lockdown(char *mode, size_t size)
{
	char line[128] = "", *open, *close;
	FILE *f = fopen(LOCKDOWN_PATH, "r");

	*mode = '\0';
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (open = strchr(line, '[')) &&
	    (close = strchr(open, ']')) && strncmp(open + 1, "none", 4)) {
		*close = '\0';
		snprintf(mode, size, "%s", open + 1);
	}
	fclose(f);
}

/* The conditions, each refused with one line, in the order a user would fix them */
static int check_conditions(void)
{
	int err = check_caps();

	if (err)
		return err;
	if (access(PARANOID_PATH, F_OK)) {
		pr_err(NULL, "record: this kernel has no perf events (it needs CONFIG_PERF_EVENTS)");
		return -EOPNOTSUPP;
	}
	return sampler_probe();
}

/* The GNU build-id note among the kernel's notes (Elf64_Nhdr, 4-byte aligned) */
static void read_build_id(char *hex, size_t size)
{
	unsigned char buf[4096];
	FILE *f = fopen(NOTES_PATH, "rb");
	size_t n = f ? fread(buf, 1, sizeof(buf), f) : 0, off = 0;

	snprintf(hex, size, "-");
	if (f)
		fclose(f);
	while (off + sizeof(Elf64_Nhdr) <= n) {
		const Elf64_Nhdr *h = (const void *)(buf + off);
		size_t name = off + sizeof(*h), desc = name + ((h->n_namesz + 3) & ~3U);

		if (desc + h->n_descsz > n)
			break;
		if (h->n_type == NT_GNU_BUILD_ID && h->n_namesz == 4 &&
		    !memcmp(buf + name, "GNU", 4) && h->n_descsz * 2 < size) {
			for (size_t i = 0; i < h->n_descsz; i++)
				sprintf(hex + 2 * i, "%02x", buf[desc + i]);
			return;
		}
		off = desc + ((h->n_descsz + 3) & ~3U);
	}
}

/* Where _text and _etext run, from /proc/kallsyms */
static int read_text(struct kernel_id *k)
{
	FILE *f = fopen(KALLSYMS_PATH, "r");
	char line[512], name[256], type;
	unsigned long long addr;

	if (!f) {
		pr_err(KALLSYMS_PATH, "record: cannot open: %s", strerror(errno));
		return -errno;
	}
	while ((!k->text || !k->etext) && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			k->text = addr;
		else if (!strcmp(name, "_etext"))
			k->etext = addr;
	}
	fclose(f);
	if (!k->text || !k->etext || k->etext <= k->text) {
		pr_err(KALLSYMS_PATH, "record: no address for _text and _etext (hidden: "
		       "kernel.kptr_restrict is %ld and this process lacks CAP_SYSLOG): the "
		       "profile must say where the kernel runs; run as root",
		       rec_read_sysctl(KPTR_RESTRICT_PATH));
		return -ENOENT;
	}
	return 0;
}

static int read_kernel_id(struct kernel_id *k)
{
	struct utsname u;

	read_build_id(k->build_id, sizeof(k->build_id));
	snprintf(k->release, sizeof(k->release), "%s", uname(&u) ? "-" : u.release);
	return read_text(k);
}

/* Until the duration is over, or SIGINT or SIGTERM (blocked, so taken here only) */
static void wait_for_end(struct recording *r, const sigset_t *stop)
{
	struct timespec start, now, left;

	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		r->seconds = (now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9;
		if (r->o->duration && r->seconds >= r->o->duration)
			return;
		left.tv_sec = r->o->duration ? r->o->duration - r->seconds : 3600;
		left.tv_nsec = r->o->duration ? (long)((r->o->duration - r->seconds - left.tv_sec) *
						       1e9) : 0;
		if (sigtimedwait(stop, NULL, &left) > 0) {
			clock_gettime(CLOCK_MONOTONIC, &now);
			r->seconds = (now.tv_sec - start.tv_sec) +
				     (now.tv_nsec - start.tv_nsec) / 1e9;
			return;
		}
	}
}

static int cmp_record(const void *a, const void *b)
{
	const struct rec_record *x = a, *y = b;
	/* the format's order of kinds: a fall-through before a branch of the same ends */
	int kx = x->kind == REC_RANGE ? 0 : 1, ky = y->kind == REC_RANGE ? 0 : 1;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return kx - ky;
}

/*
 * The records in the kernel's text kept, at the addresses the kernel ran at (the
 * reader takes the slide out); the others' counts dropped (a branch or sample with an end in a module, BPF or a trampoline; ranges
 * are not counted, being made of branches); sorted as the format orders records
 */
static void keep_kernel_text(struct recording *r)
{
	size_t n = 0;

	r->dropped = r->t.dropped;
	for (size_t i = 0; i < r->nr_recs; i++) {
		struct rec_record *e = &r->recs[i];

		if (e->from < r->k.text || e->from >= r->k.etext || e->to < r->k.text ||
		    e->to >= r->k.etext) {
			if (e->kind != REC_RANGE)
				r->dropped += e->count;
			continue;
		}
		r->recs[n++] = *e;
	}
	r->nr_recs = n;
	qsort(r->recs, n, sizeof(*r->recs), cmp_record);
}

static int write_profile(FILE *f, const void *arg)
{
	const struct recording *r = arg;

	fprintf(f, "# kbolt profile: %s kernel %s by kbolt record, %.1f s\n",
		r->o->branches ? "branch stacks of the" : "sampled addresses of the",
		r->k.release, r->seconds);
	fprintf(f, "kbolt-profile 1\nbuild-id %s\nrelease %s\nrecorder kbolt-record\n"
		"event %s\n", r->k.build_id, r->k.release, r->ev.name);
	if (r->ev.note[0])
		fprintf(f, "# note: %s\n", r->ev.note);
	fprintf(f, "text %" PRIx64 "\ndropped %" PRIu64 "\n", r->k.text, r->dropped);
	if (r->t.lost)
		fprintf(f, "# lost %" PRIu64 " counts: the map of %u entries was full "
			"(--map-entries)\n", r->t.lost, r->map_entries);
	for (size_t i = 0; i < r->nr_recs; i++) {
		const struct rec_record *e = &r->recs[i];

		if (e->kind == REC_SAMPLE)
			fprintf(f, "S %" PRIx64 " %" PRIu64 "\n", e->from, e->count);
		else if (e->kind == REC_RANGE)
			fprintf(f, "F %" PRIx64 " %" PRIx64 " %" PRIu64 "\n", e->from, e->to,
				e->count);
		else
			fprintf(f, "B %" PRIx64 " %" PRIx64 " %" PRIu64 " branch\n", e->from, e->to,
				e->count);
	}
	return 0;
}

/* The recording's figures: on stderr, or as JSON on stdout with -j */
static void print_summary(const struct recording *r)
{
	struct rusage ru;
	double user, sys;
	struct json j;

	getrusage(RUSAGE_SELF, &ru);
	user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
	sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
	if (!r->o->json) {
		fprintf(stderr, "kbolt record: %s: %.1f s on %d CPU%s, %" PRIu64 " samples, %zu "
			"records, %" PRIu64 " dropped, %" PRIu64 " lost; recorder %.3f s user %.3f s "
			"system, ", r->o->output, r->seconds, r->ev.nr_open, r->ev.nr_open == 1 ? "" : "s",
			r->t.samples, r->nr_recs, r->dropped, r->t.lost, user, sys);
		if (r->o->bpf_stats)
			fprintf(stderr, "BPF program %.3f s in %" PRIu64 " runs\n",
				r->t.bpf_run_ns / 1e9, r->t.bpf_run_cnt);
		else
			fprintf(stderr, "BPF program time not measured (--bpf-stats)\n");
		return;
	}
	json_init(&j, stdout, r->o->pretty);
	json_obj_open(&j);
	json_member_str(&j, "output", r->o->output);
	json_member_str(&j, "event", r->ev.name);
	json_member_u64(&j, "milliseconds", (uint64_t)(r->seconds * 1000));
	json_member_u64(&j, "cpus", r->ev.nr_open);
	json_member_u64(&j, "samples", r->t.samples);
	json_member_u64(&j, "records", r->nr_recs);
	json_member_u64(&j, "dropped", r->dropped);
	json_member_u64(&j, "lost", r->t.lost);
	json_member_u64(&j, "no_branch_stack", r->t.no_stack);
	json_member_u64(&j, "user_us", (uint64_t)ru.ru_utime.tv_sec * 1000000 + ru.ru_utime.tv_usec);
	json_member_u64(&j, "system_us", (uint64_t)ru.ru_stime.tv_sec * 1000000 + ru.ru_stime.tv_usec);
	json_member_u64(&j, "bpf_run_ns", r->t.bpf_run_ns);
	json_member_u64(&j, "bpf_run_cnt", r->t.bpf_run_cnt);
	json_obj_close(&j);
	json_end(&j);
}

/* The program loaded; a refusal explained if the kernel is locked down */
static int load(struct recording *r)
{
	char lockdown[64];
	int err;

	r->sampler = sampler_load(r->o->branches, r->map_entries, r->o->bpf_stats && !r->o->check,
				  &err);
	if (r->sampler)
		return 0;
	rec_read_lockdown(lockdown, sizeof(lockdown));
	if ((err == -EPERM || err == -EACCES) && *lockdown)
		pr_err(NULL, "record: the kernel is locked down (%s): it refuses the BPF "
		       "program", lockdown);
	return err;
}

/* Record from the events opened to the maps read; the signals stopping it blocked */
static int record(struct recording *r)
{
	sigset_t stop, old;
	int err;

	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigprocmask(SIG_BLOCK, &stop, &old);
	err = events_open(&r->ev, r->sampler);
	if (!err)
		wait_for_end(r, &stop);
	events_close(&r->ev, r->sampler);	/* nothing counted after: the maps are read whole */
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (!err)
		err = sampler_read(r->sampler, &r->recs, &r->nr_recs, &r->t);
	return err;
}

int kbolt_record(const struct record_options *o)
{
	struct recording r = { .o = o };
	int err;

	r.map_entries = o->map_entries ? o->map_entries : REC_DEFAULT_ENTRIES;
	err = check_conditions();
	if (!err && !o->check)
		err = outfile_check_dir(o->output);	/* now, not after a long recording */
	if (!err && !o->check)
		err = read_kernel_id(&r.k);
	if (!err && !o->check)
		err = events_choose(&r.ev, o);	/* --check needs no PMU */
	if (!err)
		err = load(&r);
	if (!err && o->check) {
		printf("kbolt record: the %s program passed the kernel's verifier\n",
		       o->branches ? "branch-stack" : "sampling");
	} else if (!err) {
		err = record(&r);
		if (!err) {
			keep_kernel_text(&r);
			err = outfile_write(o->output, write_profile, &r);
		}
		if (!err)
			print_summary(&r);
		if (!err && r.t.lost)
			pr_warn(o->output, "record: %" PRIu64 " counts lost: the map of %u "
				"entries was full; give a larger --map-entries", r.t.lost,
				r.map_entries);
	}
	free(r.recs);
	events_free(&r.ev);
	sampler_close(r.sampler);
	return err ? 1 : 0;
}
