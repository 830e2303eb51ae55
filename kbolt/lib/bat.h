/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The translation table kbolt optimize writes into its output, .kbolt.bat (as BOLT's
 * address translation, BAT): for every function it moved, where each of its
 * instructions came from, so that a profile recorded on the output can be turned into
 * one of the input (profile/translate.c).  pass/bat_build.c builds it, bat_format.c
 * reads and writes its bytes, which Documentation/profile-format.rst, "The translation
 * table", gives.
 */
#ifndef KBOLT_BAT_H
#define KBOLT_BAT_H

#include <stddef.h>
#include <stdint.h>

#define BAT_SEC_NAME ".kbolt.bat"

enum bat_flags {
	BAT_ADDED = 1,		/* a jmp the layout added: old_off is its target's */
	BAT_REMOVED = 2,	/* an old instruction the layout left out (no new_off) */
	BAT_JCC = 4,		/* a jcc: target is its old taken target */
};

struct bat_entry {
	uint32_t new_off;	/* in the output's function; entries by it, removed last */
	uint32_t old_off;	/* in the input's */
	uint64_t target;	/* BAT_JCC: the old target's address */
	uint8_t old_len;
	uint8_t flags;		/* enum bat_flags */
};

struct bat_func {
	uint64_t addr;		/* functions keep their address */
	uint32_t size;
	uint32_t nr;
	struct bat_entry *entries;
};

struct bat {
	char build_id[128];	/* of the input, hex; "" if it had none */
	struct bat_func *funcs;	/* by address */
	size_t nr, cap;
};

/* b as the section's bytes, malloc'ed into *out */
void bat_encode(const struct bat *b, unsigned char **out, size_t *size);
/* The section's size bytes at p into *b: 0, or -EINVAL if they are not a table */
int bat_decode(const unsigned char *p, size_t size, struct bat *b);
void bat_free(struct bat *b);

#endif
