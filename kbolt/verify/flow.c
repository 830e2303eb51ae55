// SPDX-License-Identifier: GPL-2.0
/*
 * The verifier's own model of where execution goes after an old instruction, read from
 * its bytes: never from kmeta's instruction kinds, which the optimizer's CFG is built
 * on.  If the two shared a class, a wrong one (syscall taken for a trap that does not
 * come back) would let the optimizer move the code after it and the proof agree.
 * The rule is deliberately conservative: an instruction may resume at the next one
 * unless it certainly cannot, and then the walk follows it there, so a layout that
 * broke that fall-through is refused.  Certainly not: jmp (direct, indirect, far),
 * ret and lret, iret, sysret and sysexit (they leave for another context), and a ud2
 * that is not a WARN (a BUG dies; a ud2 the bug table does not know dies in
 * do_error_trap() unless its exception-table fixup, a root of its own, takes it) and
 * is not the start of an emulation prefix ("ud2; .ascii "xen"; cpuid", decoded as
 * one instruction: the hypervisor emulates it and resumes after it).
 * Everything else resumes: calls (noreturn ones included), syscall and sysenter (Xen
 * PV hypercalls), int3, int n, int1, ud1 and ud0 (UBSAN traps), hlt, vmcall, vmlaunch
 * and vmresume (VMfail), and whatever this list does not know.
 */
#include "internal.h"

static bool is_legacy_prefix(unsigned char c)
{
	switch (c) {
	case 0x26: case 0x2e: case 0x36: case 0x3e: case 0x64: case 0x65:
	case 0x66: case 0x67: case 0xf0: case 0xf2: case 0xf3:
		return true;
	}
	return false;
}

static bool is_rex(unsigned char c)
{
	return (c & 0xf0) == 0x40;
}

/* 0f xx: sysret, sysexit; ud2 unless a WARN */
static bool two_byte_never_resumes(unsigned char op, bool warn)
{
	return op == 0x07 || op == 0x35 || (op == 0x0b && !warn);
}

bool verify_insn_never_resumes(const unsigned char *p, unsigned int len, bool warn)
{
	unsigned int i = 0;

	if (!p)
		return false;
	while (i < len && is_legacy_prefix(p[i]))
		i++;
	if (i < len && is_rex(p[i]))
		i++;
	if (i >= len)
		return false;
	switch (p[i]) {
	case 0xc2: case 0xc3: case 0xca: case 0xcb:	/* ret, lret */
	case 0xcf:					/* iret */
	case 0xe9: case 0xeb:				/* jmp */
		return true;
	case 0xff:	/* ff /4 jmp *, ff /5 ljmp * */
		return i + 1 < len && (((p[i + 1] >> 3) & 7) == 4 || ((p[i + 1] >> 3) & 7) == 5);
	case 0x0f:	/* a longer "ud2" is an emulation prefix and its instruction */
		return i + 1 < len && two_byte_never_resumes(p[i + 1], warn) &&
		       (p[i + 1] != 0x0b || i + 2 == len);
	}
	return false;
}
