/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A miniature kernel image for the fuzz seed corpus and the input tests: one function
 * whose instructions are the sites of every patch-site table kmeta knows, and one entry
 * in each table, laid out as the kernel's headers define them (asm/alternative.h,
 * asm/paravirt_types.h, asm/jump_label.h, asm/extable.h, asm-generic/bug.h,
 * asm/orc_types.h, linux/static_call_types.h, linux/pci.h, asm/runtime-const.h).
 *
 * Assembled as a module (ET_REL: .modinfo carries the vermagic, kernel symbols stay
 * undefined) or, with --defsym VMLINUX=1, linked by make-seeds into a vmlinux (ET_EXEC:
 * linux_banner, the __start_/__stop_ bounds and the symbols sites point to).
 * --defsym V612=1 selects the 6.12 layouts (14-byte alt_instr, .orc_header).
 */

	.section .text, "ax"
	.globl	seed_func
	.type	seed_func, @function
seed_func:
.Lendbr:
	endbr64
.Lfentry:
	call	__fentry__
.Llock:
	lock incl seed_counter(%rip)
.Ljump:
	.byte	0x0f, 0x1f, 0x44, 0x00, 0x00	/* nop5: gas would pick a shorter nopl */
.Lalt:
	movl	$1, %eax
.Lpv:
	call	*pv_ops+24(%rip)
.Lstatic:
	call	__SCT__seed_call
	movl	$0xedcba988, %r10d	/* kCFI: the callee's hash checked, the ud2 trapping */
	addl	-15(%rax), %r10d
	je	.Lretpoline
.Ltrap:
	ud2
.Lretpoline:
	call	__x86_indirect_thunk_rax
.Lcall:
	call	seed_callee
.Lex:
	movl	(%rdi), %eax
.Lfixup:
	xorl	%eax, %eax
.Lptr:
	movabs	$0x0123456789abcdef, %rax
.Lshift:
	shrl	$12, %eax
.Lbug:
	ud2
.Lret:
	.byte	0xe9	/* jmp rel32 even where gas would pick a short jmp */
	.long	__x86_return_thunk - . - 4
	.size	seed_func, . - seed_func

	.type	seed_callee, @function
seed_callee:
	.byte	0xb8
	.long	0x12345678	/* kCFI preamble: movl $hash, %eax */
	ud2
	ret
	.size	seed_callee, . - seed_callee

	.type	seed_func.cold, @function
seed_func.cold:
	ud2
	.size	seed_func.cold, . - seed_func.cold

.ifdef VMLINUX
	/* what a module leaves undefined, the kernel defines */
	.globl	__fentry__, __x86_return_thunk, __x86_indirect_thunk_rax, __SCT__seed_call
	.type	__fentry__, @function
__fentry__:
	ret
	.size	__fentry__, 1
	.type	__x86_return_thunk, @function
__x86_return_thunk:
	ret
	int3
	.size	__x86_return_thunk, 2
	.type	__x86_indirect_thunk_rax, @function
__x86_indirect_thunk_rax:
	jmp	*%rax
	.size	__x86_indirect_thunk_rax, 2
	.type	__SCT__seed_call, @function
__SCT__seed_call:
	jmp	seed_callee
	.byte	0x0f, 0xb9, 0xcc	/* ud1 %esp, %ecx: the trampoline signature */
	.size	__SCT__seed_call, . - __SCT__seed_call
.endif

	.section .altinstr_replacement, "ax"
.Lrepl:
	movl	$2, %eax

	.section .altinstructions, "a"
__alt_instructions:
	.long	.Lalt - .
	.long	.Lrepl - .
.ifdef V612
	.long	(1 << 16) | 1	/* ALT_FLAG_NOT | X86_FEATURE_VME */
.else
	.word	0x8000 | 1
.endif
	.byte	5, 5
__alt_instructions_end:

	.section .parainstructions, "a"
	.balign	8
__parainstructions:
	.quad	.Lpv
	.byte	3, 6	/* type: pv_ops slot 3, len */
	.balign	8
__parainstructions_end:

	.section .smp_locks, "a"
	.balign	4
__smp_locks:
	.long	.Llock - .
__smp_locks_end:

	.section .retpoline_sites, "a"
__retpoline_sites:
	.long	.Lretpoline - .
__retpoline_sites_end:

	.section .return_sites, "a"
__return_sites:
	.long	.Lret - .
__return_sites_end:

	.section .call_sites, "a"
__call_sites:
	.long	.Lcall - .
__call_sites_end:

	.section .ibt_endbr_seal, "a"
__ibt_endbr_seal:
	.long	.Lendbr - .
__ibt_endbr_seal_end:

	.section .cfi_sites, "a"
__cfi_sites:
	.long	seed_callee - .
__cfi_sites_end:

	.section .kcfi_traps, "a"
__start___kcfi_traps:
	.long	.Ltrap - .
__stop___kcfi_traps:

	.section __jump_table, "aw"
	.balign	8
__start___jump_table:
	.long	.Ljump - .
	.long	.Lfixup - .
	.quad	seed_key - . + 1	/* JUMP_TYPE_TRUE in the low bit */
__stop___jump_table:

	.section .static_call_sites, "aw"
__start_static_call_sites:
	.long	.Lstatic - .
	.long	__SCK__seed_call - .
__stop_static_call_sites:

	.section __mcount_loc, "a"
	.balign	8
__start_mcount_loc:
	.quad	.Lfentry
__stop_mcount_loc:

	.section __ex_table, "a"
	.balign	4
__start___ex_table:
	.long	.Lex - .
	.long	.Lfixup - .
	.long	3 | (1 << 8)	/* EX_TYPE_UACCESS, reg cx */
__stop___ex_table:

	.section __bug_table, "aw"
__start___bug_table:
	.long	.Lbug - .
	.long	.Lfile - .
	.word	42
	.word	1 | (1 << 8)	/* BUGFLAG_WARNING, TAINT_WARN */
__stop___bug_table:

	.section .orc_unwind_ip, "a"
	.long	seed_func - .
	.long	.Lfentry - .
	.long	seed_callee - .

	.section .orc_unwind, "a"
	.word	8, 0, 0x0015	/* sp:sp+8 bp:(und) type:call */
	.word	16, -16, 0x0045
	.word	0, 0, 0x0400	/* end of unwind info */

.ifdef V612
	.section .orc_header, "a"
	.fill	20, 1, 0xab
.endif

	.section .pci_fixup, "a"
	.word	0x8086, 0xffff
	.long	0x060000
	.long	8
	.long	seed_callee - .

	.section _kprobe_blacklist, "aw"
	.balign	8
__start_kprobe_blacklist:
	.quad	seed_callee
__stop_kprobe_blacklist:

.ifdef VMLINUX
	.section runtime_ptr_seed_ptr, "a"
__start_runtime_ptr_seed_ptr:
	.long	.Lptr + 2 - .
__stop_runtime_ptr_seed_ptr:

	.section runtime_shift_seed_shift, "a"
__start_runtime_shift_seed_shift:
	.long	.Lshift + 2 - .
__stop_runtime_shift_seed_shift:
.endif

	.section .rodata, "a"
.Lfile:
	.asciz	"kernel/seed.c"
.Lcap_fpu:
	.asciz	"fpu"
.Lcap_vme:
	.asciz	"vme"
.ifdef VMLINUX
	.globl	linux_banner
	.type	linux_banner, @object
linux_banner:
.ifdef V612
	.asciz	"Linux version 6.12.118+deb12-cloud-amd64 (seed) #1 SMP\n"
.else
	.asciz	"Linux version 6.1.0-57-cloud-amd64 (seed) #1 SMP\n"
.endif
	.size	linux_banner, . - linux_banner

	.balign	8
	.globl	x86_cap_flags
	.type	x86_cap_flags, @object
x86_cap_flags:
	.quad	.Lcap_fpu, .Lcap_vme
	.size	x86_cap_flags, . - x86_cap_flags
.endif

	.section .data, "aw"
	.balign	8
seed_counter:
	.long	0
	.balign	8
	.type	seed_key, @object
seed_key:
	.quad	1
	.size	seed_key, 8
.ifdef VMLINUX
	.globl	pv_ops, __SCK__seed_call
	.type	pv_ops, @object
pv_ops:
	.fill	8, 8, 0
	.size	pv_ops, 64
	.type	__SCK__seed_call, @object
__SCK__seed_call:
	.quad	0
	.size	__SCK__seed_call, 8
.endif

.ifndef VMLINUX
	.section .modinfo, "a"
	.asciz	"license=GPL"
.ifdef V612
	.asciz	"vermagic=6.12.118+deb12-cloud-amd64 SMP preempt mod_unload modversions "
.else
	.asciz	"vermagic=6.1.0-57-cloud-amd64 SMP mod_unload modversions "
.endif
.endif

	.section .note.GNU-stack, "", @progbits
