/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kbolt fix-sites (fix_sites.c): another tool's output with its return and retpoline
 * site lists pointed again at their instructions.
 */
#ifndef KBOLT_FIX_SITES_H
#define KBOLT_FIX_SITES_H

/* Write in, its site lists fixed and checked, to out; 0, or 1 after reporting */
int kbolt_fix_sites(const char *in, const char *out);

#endif
