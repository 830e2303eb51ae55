/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The order of a kbolt profile's records: by from, then to, then kind.  The QEMU
 * plugin writes its profile in it (record/qemu_plugin.c, built apart: this header
 * needs nothing but stdint.h), and profile merge too (merge.c), so that merging one
 * recorded profile gives it back in the same order.
 */
#ifndef KBOLT_RECORD_ORDER_H
#define KBOLT_RECORD_ORDER_H

#include <stdint.h>

static inline int record_order(uint64_t from_a, uint64_t to_a, unsigned int kind_a,
			       uint64_t from_b, uint64_t to_b, unsigned int kind_b)
{
	if (from_a != from_b)
		return from_a < from_b ? -1 : 1;
	if (to_a != to_b)
		return to_a < to_b ? -1 : 1;
	return (kind_a > kind_b) - (kind_a < kind_b);
}

#endif
