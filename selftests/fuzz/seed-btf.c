// SPDX-License-Identifier: GPL-2.0
/*
 * The BTF of the seed vmlinux (gcc -gbtf): the 6.1 table entry structs kmeta confirms its
 * layouts against, as the kernel defines them (asm/alternative.h, asm/orc_types.h,
 * asm/paravirt_types.h, asm/extable.h, asm-generic/bug.h, linux/jump_label.h,
 * linux/static_call_types.h, linux/pci.h), and a paravirt_patch_template with nested
 * members for the dotted-path lookup.  Only the types matter: nothing here is code.
 */
#include <stdint.h>

struct alt_instr {
	int32_t instr_offset;
	int32_t repl_offset;
	uint16_t cpuid;
	uint8_t instrlen;
	uint8_t replacementlen;
} __attribute__((packed));

struct orc_entry {
	int16_t sp_offset;
	int16_t bp_offset;
	unsigned sp_reg:4;
	unsigned bp_reg:4;
	unsigned type:2;
	unsigned end:1;
	unsigned unused:5;
} __attribute__((packed));

struct paravirt_patch_site {
	uint8_t *instr;
	uint8_t type;
	uint8_t len;
};

struct paravirt_callee_save {
	void *func;
};

struct pv_cpu_ops {
	void (*io_delay)(void);
	unsigned long (*get_debugreg)(int regno);
	void (*set_debugreg)(int regno, unsigned long value);
};

struct pv_irq_ops {
	struct paravirt_callee_save save_fl;
	struct paravirt_callee_save irq_disable;
	struct paravirt_callee_save irq_enable;
};

struct paravirt_patch_template {
	struct pv_cpu_ops cpu;
	struct pv_irq_ops irq;
	union {
		void (*flush_tlb_user)(void);
		void *anon_slot;
	};
};

struct exception_table_entry {
	int insn, fixup, data;
};

struct bug_entry {
	signed int bug_addr_disp;
	signed int file_disp;
	unsigned short line;
	unsigned short flags;
};

struct jump_entry {
	int32_t code;
	int32_t target;
	long key;
};

struct static_call_site {
	int32_t addr;
	int32_t key;
};

struct pci_fixup {
	uint16_t vendor;
	uint16_t device;
	uint32_t class;
	unsigned int class_shift;
	int hook_offset;
};

struct alt_instr seed_btf_alt;
struct orc_entry seed_btf_orc;
struct paravirt_patch_site seed_btf_pv;
struct paravirt_patch_template seed_btf_pv_ops;
struct exception_table_entry seed_btf_ex;
struct bug_entry seed_btf_bug;
struct jump_entry seed_btf_jump;
struct static_call_site seed_btf_sc;
struct pci_fixup seed_btf_pci;
