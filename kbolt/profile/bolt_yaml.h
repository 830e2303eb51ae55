/* SPDX-License-Identifier: GPL-2.0 */
/*
 * BOLT's YAML profile (Documentation/profile-format.rst, "BOLT's YAML"), as llvm-bolt -w
 * and perf2bolt --profile-format=yaml write it (ProfileYAMLMapping.h in LLVM's
 * bolt/include/bolt/Profile).  prof_yaml.c parses it, with libyaml, into the records
 * below: functions by name, their blocks by BOLT's block id (bid), each block's edges
 * to other blocks of its function and its calls.  Block ids are indices into BOLT's own
 * CFG, which kbolt does not have: yaml_map.c finds each block by the offset that BOLT
 * keeps in the low 16 bits of its hash, and makes the records addresses of a vmlinux.
 */
#ifndef KBOLT_BOLT_YAML_H
#define KBOLT_BOLT_YAML_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "../../kmeta/kmeta.h"
#include "profile.h"

/* A successor: a taken branch or a fall-through to block bid */
struct yaml_succ {
	uint32_t bid;
	uint64_t count;
	size_t lineno;
};

/* A call (or tail call) at off bytes into its block, to the function of profile id fid */
struct yaml_call {
	uint32_t off, fid, disc;	/* disc: the callee's entry point, 0 its first */
	uint64_t count;
	size_t lineno;
};

struct yaml_block {
	uint32_t bid, nr_insns;
	uint64_t hash;
	bool has_hash;
	uint64_t events;		/* a profile of samples: samples in the block */
	size_t first_succ, nr_succ, first_call, nr_calls;	/* in bolt_yaml.succs, .calls */
	size_t lineno;
};

struct yaml_func {
	char *name;
	uint32_t fid, nr_blocks;	/* nr_blocks: BOLT's nblocks, its CFG's size */
	size_t first_block, nr_listed;	/* the blocks the profile lists, in bolt_yaml.blocks */
	size_t lineno;
};

struct bolt_yaml {
	bool samples;			/* profile-flags: [ sample ] (no LBR): blocks' events */
	struct yaml_func *funcs;
	size_t nr_funcs, cap_funcs;
	struct yaml_block *blocks;
	size_t nr_blocks, cap_blocks;
	struct yaml_succ *succs;
	size_t nr_succs, cap_succs;
	struct yaml_call *calls;
	size_t nr_calls, cap_calls;
};

extern const struct prof_format prof_format_yaml;

void bolt_yaml_free(struct bolt_yaml *y);
/*
 * yaml_map.c: p's YAML records made p's edges, addresses of img.  Each block found at
 * the offset its hash holds, checked against img's instructions; a record whose block
 * cannot be found is left out and counted in p->nr_dropped, with one warning.  A
 * function img does not have is an error, or with force left out with a warning.
 * 0, or -EINVAL after reporting.
 */
int yaml_map(struct kmeta_image *img, struct prof *p, bool force);
/*
 * yaml_map.c: how many instructions LLVM decodes in, which BOLT's insns counts: 2 for
 * an instruction with a lock prefix (LLVM's decoder makes the prefix one of its own),
 * else 1
 */
unsigned int yaml_llvm_insns(struct kmeta_image *img, const struct kmeta_insn *in);
/*
 * yaml_write.c: p, a profile of img's link addresses, as BOLT's YAML of img's blocks
 * as llvm-bolt builds them (its transfers, or when it has only samples, its samples);
 * records that have no place in those blocks left out, counted in one warning.  The
 * number of functions written, or -EINVAL after kmeta reported an unreadable table.
 */
int yaml_write(struct kmeta_image *img, const struct prof *p, FILE *f);

#endif
