// SPDX-License-Identifier: GPL-2.0
/*
 * The list of every patch-site table kmeta knows, in the order commands print them.
 */
#include "../table.h"

extern const struct table_desc alternatives_table, paravirt_table, smp_locks_table,
	retpoline_sites_table, return_sites_table, call_sites_table, ibt_endbr_seal_table,
	cfi_sites_table, kcfi_traps_table, jump_table_table, static_call_sites_table,
	mcount_loc_table, ex_table_table, bug_table_table, orc_table, pci_fixup_table,
	kprobe_blacklist_table, runtime_const_table;

const struct table_desc *const kmeta_table_descs[] = {
	&alternatives_table,
	&paravirt_table,
	&smp_locks_table,
	&retpoline_sites_table,
	&return_sites_table,
	&call_sites_table,
	&ibt_endbr_seal_table,
	&cfi_sites_table,
	&kcfi_traps_table,
	&jump_table_table,
	&static_call_sites_table,
	&mcount_loc_table,
	&ex_table_table,
	&bug_table_table,
	&orc_table,
	&pci_fixup_table,
	&kprobe_blacklist_table,
	&runtime_const_table,
};

const unsigned int kmeta_nr_table_descs = ARRAY_SIZE(kmeta_table_descs);
