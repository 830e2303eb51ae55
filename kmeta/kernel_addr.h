/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where things are in the x86-64 kernel's virtual address space
 * (Documentation/arch/x86/x86_64/mm.rst; arch/x86/include/asm/page_64_types.h,
 * pgtable_64_types.h), for the code that tells kernel addresses from others.  Macros
 * only, so that the BPF program (kbolt/record/sampler.bpf.c) and the QEMU plugins,
 * which link nothing of kmeta, include it too.
 */
#ifndef KMETA_KERNEL_ADDR_H
#define KMETA_KERNEL_ADDR_H

/*
 * The kernel's half of the address space with 4-level paging: every kernel address
 * (its loaded sections are linked there), and no user one.  5-level paging starts it
 * lower, at 0xff00000000000000, but keeps the kernel's text and modules at the top.
 */
#define KERNEL_HALF_START	0xffff800000000000ULL
/*
 * The top 2 GiB: the kernel image's mapping from __START_KERNEL_map, its text in 2 MiB
 * pages (level2_kernel_pgt, arch/x86/kernel/head_64.S), then the module area, which
 * starts at KERNEL_MODULES_START (MODULES_VADDR without CONFIG_RANDOMIZE_BASE) or 1
 * GiB higher (with it).  An image at its link address (nokaslr, or a vmlinux booted
 * through PVH) lies below either.
 */
#define KERNEL_IMAGE_START	0xffffffff80000000ULL
#define KERNEL_MODULES_START	0xffffffffa0000000ULL

#endif
