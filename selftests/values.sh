#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Without relocations kbolt reads every loaded byte as a possible address inside a
# function, and leaves a function alone when a value may point inside it
# (data_value).  On the values fixture (fixtures/values.S), linked without
# relocations, over random layouts: every output verifies; the three functions an
# immediate, a pointer in a writable and executable .data (7.x's) and an offset from
# its field there point into are left as they are, and counted; val_victim, whose
# address +0xd1 shows only in bytes that are no operand (a ModRM's displacement with
# the immediate after it, in a function and in an alternative's replacement, and two
# functions' bytes across the end of one), moves.
# (Checked by objdump, not by kbolt.)
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
SEEDS=8
case "${OUT:-.build/default}" in *san*) SEEDS=4 ;; esac

need_fixture values --no-relocs
fx=$tmp/values
check_eq "... its .data is writable and executable" WAX \
	"$(readelf -SW "$fx" | awk '/ \.data / { for (i = 1; i <= NF; i++) if ($i ~ /^[WAX]+$/) print $i }')"


bad= outs=
for s in $(seq 1 "$SEEDS"); do
	"$KBOLT" optimize "$fx" -o "$tmp/r.$s" --layout random --seed "$s" --stats -j \
		>"$tmp/r.$s.stats" 2>"$tmp/r.$s.err" || bad+=" $s"
	[ -s "$tmp/r.$s" ] && outs+=" $s"
done
check_eq "$SEEDS random layouts written and verified" "" "${bad# }"
check_eq "... three functions counted as left alone for a value (data_value)" 3 \
	"$(json_get "$tmp/r.1.stats" 'r["skipped"]["data_value"]["functions"]')"
check_eq "... and --stats says there are no relocations" False \
	"$(json_get "$tmp/r.1.stats" 'r["relocations"]')"
for f in val_imm_target val_ptr_target val_prel_target; do
	same=0
	for s in $outs; do
		cmp -s <(func_body "$fx" $f) <(func_body "$tmp/r.$s" $f) && same=$((same + 1))
	done
	check_eq "$f: as it was in all $SEEDS layouts" "$SEEDS" "$same"
done
moved=0
for s in $outs; do
	cmp -s <(func_body "$fx" val_victim) <(func_body "$tmp/r.$s" val_victim) || moved=$((moved + 1))
done
check "val_victim: moved in some layouts ($moved of $SEEDS)" [ "$moved" -gt 0 ]
done_testing
