// SPDX-License-Identifier: GPL-2.0
/*
 * Is a profile one of this kernel?  The one place that decides, for check-profile and
 * the optimizer.  A profile with a build-id is compared with the image's GNU build-id
 * note (NT_GNU_BUILD_ID); without one on either side, the releases are compared.  A
 * profile with neither (BOLT's pre-aggregated format, a recording from a bzImage) is
 * judged by its addresses: the records in the image's code must start at its
 * instructions, the taken transfers at instructions that can transfer control, and
 * fall-throughs stay inside one function; a sample (from == to) at any instruction.  Records from or to sites the kernel patches
 * at boot are not judged: what ran there is not what the file holds.  A genuine profile
 * misses almost nothing; one of another kernel most of its records; KASLR moves all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "bolt_yaml.h"
#include "check_profile.h"
#include "portable.h"
#include "profile_match.h"

/* Without a build-id on either side, the release must match */
static int same_release(struct kmeta_image *img, const struct prof *p, bool force)
{
	if (!p->release[0] || !img->release[0] || !strcmp(p->release, img->release))
		return 0;
	if (force) {
		pr_warn(p->path, "recorded on release %s, not %s's %s (--force)", p->release,
			img->path, img->release);
		return 0;
	}
	pr_err(p->path, "recorded on release %s, but %s is release %s: a profile of another "
	       "kernel (--force uses it anyway)", p->release, img->path, img->release);
	return -EINVAL;
}

static int same_kernel(struct kmeta_image *img, const struct prof *p, bool force)
{
	char id[128] = "";

	if (kmeta_build_id(img, id, sizeof(id)) || !p->build_id[0])
		return same_release(img, p, force);
	if (!strcmp(id, p->build_id))
		return 0;
	if (force) {
		pr_warn(p->path, "recorded on build-id %s, not %s's %s (--force)", p->build_id,
			img->path, id);
		return 0;
	}
	pr_err(p->path, "recorded on build-id %s, but %s has build-id %s: a profile of "
	       "another kernel (--force uses it anyway)", p->build_id, img->path, id);
	return -EINVAL;
}

/* addr starts an instruction of img, decoded into *in */
static bool is_insn_start(struct kmeta_image *img, uint64_t addr, struct kmeta_insn *in)
{
	/* -1: no function symbol covers addr, or its decoding stopped: the decoder decides */
	return kmeta_is_insn_boundary(img, addr) != 0 && !kmeta_insn_decode(img, addr, in);
}

static bool edge_lands(struct kmeta_image *img, const struct prof_edge *e)
{
	struct kmeta_insn from, to;
	struct kmeta_sym *func;

	if (!is_insn_start(img, e->from, &from) || !is_insn_start(img, e->to, &to))
		return false;
	switch (e->kind) {
	case PK_FALLTHROUGH:
		/* the plugin's F records may run on into the next function */
		if (e->to == from.addr + from.len)
			return true;
		func = kmeta_find_func_containing(img, e->from);
		return func && e->from < e->to && e->to < func->addr + func->size;
	case PK_INT:
		return true;	/* an interrupt comes between any two instructions */
	case PK_SAMPLE:
		return true;	/* any instruction may be sampled */
	default:
		return from.kind != KI_OTHER;
	}
}

static int addresses_land(struct kmeta_image *img, const struct prof *p, bool force)
{
	size_t inside = 0, judged = 0, missed = 0, nr_patched;
	struct kmeta_range *patched;

	if (profile_patched_ranges(img, &patched, &nr_patched))
		return -EINVAL;
	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_edge *e = &p->edges[i];

		/* module, BPF and trampoline code: not the image's to judge */
		if (!kmeta_is_text_addr(img, e->from) || !kmeta_is_text_addr(img, e->to))
			continue;
		inside++;
		if (profile_is_patched(patched, nr_patched, e->from) ||
		    profile_is_patched(patched, nr_patched, e->to))
			continue;
		judged++;
		missed += !edge_lands(img, e);
	}
	free(patched);
	if (!inside) {
		if (force) {
			pr_warn(p->path, "none of its %zu records is in %s's code (--force)",
				p->nr_edges, img->path);
			return 0;
		}
		pr_err(p->path, "none of its %zu records is in %s's code: a profile of another "
		       "kernel, or of addresses moved by KASLR (--force uses it anyway)",
		       p->nr_edges, img->path);
		return -EINVAL;
	}
	if (missed * 100 <= judged * PROFILE_MATCH_MAX_MISSED_PCT)
		return 0;
	if (force) {
		pr_warn(p->path, "%zu of its %zu records in %s's unpatched code (%.1f%%) miss its "
			"instructions (--force)", missed, judged, img->path,
			100.0 * missed / judged);
		return 0;
	}
	pr_err(p->path, "%zu of its %zu records in %s's unpatched code (%.1f%%) miss its "
	       "instructions: a profile of another kernel, or of addresses moved by KASLR "
	       "(--force uses it anyway)", missed, judged, img->path, 100.0 * missed / judged);
	return -EINVAL;
}

/*
 * A profile of where the kernel ran (KASLR): its addresses moved back by the slide,
 * the distance from the vmlinux's _text to where _text ran.  Once: then link addresses.
 * Samples too: both ends of theirs are the sampled address.
 */
static int take_out_slide(struct kmeta_image *img, struct prof *p)
{
	uint64_t slide = p->text_runtime - img->text_start;

	if (p->text_runtime && !img->text_start) {
		pr_err(p->path, "recorded with _text at 0x%llx, but %s has no _text symbol to "
		       "take the KASLR slide out against", (unsigned long long)p->text_runtime,
		       img->path);
		return -EINVAL;
	}
	for (size_t i = 0; p->text_runtime && i < p->nr_edges; i++) {
		p->edges[i].from -= slide;
		p->edges[i].to -= slide;
	}
	p->text_runtime = 0;
	return 0;
}

int profile_match(struct kmeta_image *img, struct prof *p, bool force)
{
	/* BOLT's YAML: its blocks found by their offsets, once: then addresses */
	if (p->yaml && yaml_map(img, p, force))
		return -EINVAL;
	if (prof_is_symbolic(p) && profile_resolve_symbols(img, p, force))
		return -EINVAL;
	/* of another build by design: found in this one by names and hashes, once */
	if (p->portable)
		return p->need_match ? portable_match(img, p) : 0;
	if (take_out_slide(img, p))
		return -EINVAL;
	if (!p->nr_edges) {
		pr_err(p->path, "no records: nothing was recorded");
		return -EINVAL;
	}
	/* a build-id or a release names the kernel; without either, the addresses must do */
	if (!p->build_id[0] && !p->release[0])
		return addresses_land(img, p, force);
	return same_kernel(img, p, force);
}
