// SPDX-License-Identifier: GPL-2.0
/*
 * Does a profile describe this kernel?  Every recorded transfer is checked against the
 * static decoding of the image: a fall-through leaves an instruction that can fall
 * through and reaches the next one (or, as a range, goes on in straight-line code to a
 * later one); a taken jcc/jmp/call leaves such an instruction and reaches its encoded
 * target; a ret leaves a ret; an indirect transfer an indirect branch; a branch of
 * unknown kind any of these; a sample lies at the start of an instruction of a
 * function (or of code without a function symbol, not its int3 padding).  Sites the kernel patches at boot (alternatives,
 * paravirt, jump labels, static calls, retpolines, return thunks, call-depth thunks,
 * fentry) run other code than the file holds: they are counted apart, as are addresses
 * outside the image (module, BPF and ftrace trampoline code).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/util.h"
#include "../../kmeta/table.h"
#include "check_profile.h"

int profile_patched_ranges(struct kmeta_image *img, struct kmeta_range **out, size_t *nr)
{
	const struct kmeta_range *sites;
	size_t nr_sites, cap = 0;

	if (kmeta_patch_sites(img, &sites, &nr_sites))
		return -EINVAL;
	*nr = 0;
	*out = NULL;
	GROW(*out, cap, nr_sites);
	if (nr_sites)	/* a kernel without alternatives: no array to copy from or to */
		memcpy(*out, sites, nr_sites * sizeof(**out));
	*nr = nr_sites;
	/* 7: the longest such site, a cs-prefixed jcc32 to a retpoline thunk */
	if (kmeta_table_site_ranges(img, TR_PATCHED_POINT, 7, out, nr, &cap)) {
		free(*out);
		*out = NULL;
		return -EINVAL;
	}
	sort_array(*out, *nr, sizeof(**out), kmeta_cmp_range);
	return 0;
}

bool profile_is_patched(const struct kmeta_range *r, size_t nr, uint64_t addr)
{
	/* the first range starting after addr */
	size_t past = upper_bound_u64(r, nr, sizeof(*r), offsetof(struct kmeta_range, start), addr);

	/* ranges are short (<= 255 bytes): a few steps back cover overlaps */
	for (size_t i = past, k = 0; i-- > 0 && k < 8; k++)
		if (addr < r[i].end)
			return true;
	return false;
}

/* NULL if the edge agrees with the instruction at its source, else why not */
static const char *edge_mismatch(const struct prof_edge *e, const struct kmeta_insn *in)
{
	static const unsigned char want[PK_NR] = {
		[PK_JCC] = KI_JCC, [PK_JMP] = KI_JMP, [PK_CALL] = KI_CALL, [PK_RET] = KI_RET,
		[PK_IJMP] = KI_IJMP, [PK_ICALL] = KI_ICALL,
	};

	switch (e->kind) {
	case PK_FALLTHROUGH:
		if (kmeta_insn_ends_flow(in))
			return "fall-through from an instruction that cannot fall through";
		return e->to == in->addr + in->len ? NULL :
		       "fall-through does not reach the next instruction";
	case PK_INT:
	case PK_OTHER:
		return NULL;
	case PK_BRANCH:		/* a format without kinds: any transfer will do */
		if (in->kind == KI_OTHER)
			return "the source instruction does not transfer control";
		break;
	default:
		if (in->kind != want[e->kind])
			return "the source instruction is not a branch of that kind";
	}
	if ((in->kind == KI_JCC || in->kind == KI_JMP || in->kind == KI_CALL) &&
	    in->target != e->to)
		return "the target differs from the branch's encoded target";
	return NULL;
}

/*
 * NULL if a sample is at an instruction start of a function, else why not.  Code
 * without a function symbol (assembly entry code such as ret_from_fork, local labels
 * of copy_user_*) runs too: there the sample must be at an instruction, not at the
 * int3 padding between functions, which never runs.
 */
static const char *sample_mismatch(struct kmeta_image *img, const struct prof_edge *e)
{
	const unsigned char *byte;
	struct kmeta_insn in;

	if (!kmeta_find_func_containing(img, e->from)) {
		byte = kmeta_bytes_at(img, e->from, 1);
		if (byte && byte[0] == 0xcc)
			return "the sample is in the int3 padding outside any function";
		return kmeta_insn_decode(img, e->from, &in) ? "not an instruction" : NULL;
	}
	switch (kmeta_is_insn_boundary(img, e->from)) {
	case 0:
		return "the sample is not at the start of an instruction";
	case 1:
		return NULL;
	default:	/* the function's decoding stopped: what is there? */
		return kmeta_insn_decode(img, e->from, &in) ? "not an instruction" : NULL;
	}
}

/* A fall-through to further than the next instruction: a range, as BOLT's F records */
static bool is_range(const struct prof_edge *e, const struct kmeta_insn *in)
{
	return e->kind == PK_FALLTHROUGH && !kmeta_insn_ends_flow(in) &&
	       e->to > in->addr + in->len;
}

/*
 * A range is straight-line code from its first instruction (in, which can fall
 * through) to TO, inside one function: jcc not taken and calls returned from may lie
 * in between, not a jmp, ret or trap.  EDGE_PATCHED if it runs into code patched at
 * boot (not checked).
 */
static enum edge_verdict range_verdict(struct kmeta_image *img, const struct prof_edge *e,
				       struct kmeta_insn in, const struct kmeta_range *patched,
				       size_t nr_patched, const char **why)
{
	struct kmeta_sym *func = kmeta_find_func_containing(img, e->from);

	if (!func || e->to >= func->addr + func->size) {
		*why = "fall-through does not reach the next instruction";
		return EDGE_DISAGREES;
	}
	for (uint64_t next = in.addr + in.len; next != e->to; next = in.addr + in.len) {
		if (next > e->to) {
			*why = "fall-through range does not end at an instruction boundary";
			return EDGE_DISAGREES;
		}
		if (profile_is_patched(patched, nr_patched, next))
			return EDGE_PATCHED;
		if (kmeta_insn_decode(img, next, &in)) {
			*why = "not an instruction";
			return EDGE_DISAGREES;
		}
		if (kmeta_insn_ends_flow(&in)) {
			*why = "fall-through range crosses an instruction that cannot fall through";
			return EDGE_DISAGREES;
		}
	}
	return EDGE_AGREES;
}

enum edge_verdict profile_edge_verdict(struct kmeta_image *img, const struct prof_edge *e,
				       const struct kmeta_range *patched, size_t nr_patched,
				       const char **why)
{
	struct kmeta_insn in;

	*why = NULL;
	if (profile_is_patched(patched, nr_patched, e->from))
		return EDGE_PATCHED;
	if (e->kind == PK_SAMPLE)
		*why = sample_mismatch(img, e);
	else if (kmeta_insn_decode(img, e->from, &in))
		*why = "not an instruction";
	else if (is_range(e, &in))
		return range_verdict(img, e, in, patched, nr_patched, why);
	else
		*why = edge_mismatch(e, &in);
	return *why ? EDGE_DISAGREES : EDGE_AGREES;
}

int profile_check(struct kmeta_image *img, const struct prof *p, struct profile_check *res,
		  void (*report)(struct kmeta_image *img, const struct prof_edge *e,
				 const char *why, void *arg), void *arg)
{
	struct kmeta_range *patched;
	size_t nr_patched;

	memset(res, 0, sizeof(*res));
	if (profile_patched_ranges(img, &patched, &nr_patched))
		return -EINVAL;
	for (size_t i = 0; i < p->nr_edges; i++) {
		const struct prof_edge *e = &p->edges[i];
		const char *why;

		res->records++;
		res->weight += e->count;
		res->by_kind[e->kind]++;
		if (e->kind == PK_SAMPLE)
			res->sample_weight += e->count;
		if (!kmeta_is_text_addr(img, e->from) || !kmeta_is_text_addr(img, e->to)) {
			res->outside++;
			continue;
		}
		switch (profile_edge_verdict(img, e, patched, nr_patched, &why)) {
		case EDGE_PATCHED:
			res->patched++;
			continue;
		case EDGE_AGREES:
			res->agree++;
			continue;
		case EDGE_DISAGREES:
			break;
		}
		res->disagree++;
		res->disagree_weight += e->count;
		res->sample_disagree += e->kind == PK_SAMPLE;
		if (report)
			report(img, e, why, arg);
	}
	free(patched);
	return 0;
}
