#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# References from code kbolt does not decode as a function, on the asmrefs fixture
# (fixtures/asmrefs.S), linked without relocations, over random layouts: every output
# verifies; ref_victim, which only bytes inside an assembler symbol's movabs seem to
# point into, moves in some; ref_kept (a real jmp from that symbol) and ref_past_bad
# (a jmp past a byte capstone does not know) stay as they are, counted.  A mutant
# optimizer that takes every such reference for none is refused by kbolt verify, which
# sweeps the code itself.  (Function bodies compared by objdump, not by kbolt.)
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
SEEDS=8
sanitized=0
case "${OUT:-.build/default}" in *san*) SEEDS=4 sanitized=1 ;; esac

need_fixture asmrefs --no-relocs
fx=$tmp/asmrefs

# layouts KBOLT PREFIX: random layouts 1..$SEEDS, PREFIX.N, its --stats -j and stderr
layouts() {
	local s
	for s in $(seq 1 "$SEEDS"); do
		"$1" optimize "$fx" -o "$2.$s" --layout random --seed "$s" --stats -j \
			>"$2.$s.stats" 2>"$2.$s.err"
		echo $? >"$2.$s.rc"
	done
}
# same NAME PREFIX: in how many of the layouts NAME is as it was
same() {
	local s n=0
	for s in $(seq 1 "$SEEDS"); do
		[ -s "$2.$s" ] && cmp -s <(func_body "$fx" "$1") <(func_body "$2.$s" "$1") && n=$((n + 1))
	done
	echo $n
}

layouts "$KBOLT" "$tmp/r"
bad=$(for s in $(seq 1 "$SEEDS"); do [ "$(cat "$tmp/r.$s.rc")" = 0 ] || echo "$s"; done)
check_eq "$SEEDS random layouts written and verified" "" "$(echo $bad)"
check "ref_victim (no jmp: a movabs's immediate) moved in some ($((SEEDS - $(same ref_victim "$tmp/r"))) of $SEEDS)" \
	[ "$(same ref_victim "$tmp/r")" -lt "$SEEDS" ]
for f in ref_kept ref_past_bad; do
	check_eq "$f: as it was in all $SEEDS layouts" "$SEEDS" "$(same $f "$tmp/r")"
done
check_eq "... both counted: reference from code kbolt did not decode" 2 \
	"$(json_get "$tmp/r.1.stats" 'r["skipped"]["undecoded_ref"]["functions"]')"

# The verifier checks on its own: a mutant optimizer that ignores every such reference
if [ $sanitized = 1 ]; then
	skip "mutant (undecoded references ignored)" "the sanitized pass"
else
	m=$tmp/mutant
	mkdir -p "$m"
	cp -r "$top/common" "$top/kmeta" "$top/kbolt" "$top/Makefile" "$top/Documentation" "$m"
	sed -i 's/^\t\t    kmeta_swept_may_ref(p->opt->img, p->hits\[k\].start, p->hits\[k\].end))$/\t\t    false)/' \
		"$m/kbolt/pass/decode.c"
	if ! grep -q '^		    false)$' "$m/kbolt/pass/decode.c"; then
		fail "mutant: planted" "kbolt/pass/decode.c no longer has the line to mutate"
	elif ! make -s -C "$m" OUT=.build/m .build/m/kbolt/kbolt >"$tmp/mutant.log" 2>&1; then
		fail "mutant: built" "$(tail -n 5 "$tmp/mutant.log")"
	else
		layouts "$m/.build/m/kbolt/kbolt" "$tmp/m"
		refused=0
		for s in $(seq 1 "$SEEDS"); do
			[ "$(cat "$tmp/m.$s.rc")" = 1 ] && [ ! -e "$tmp/m.$s" ] &&
				cat "$tmp/m.$s.err" "$tmp/m.$s.stats" | grep -q \
				'verify: ref_\(kept\|past_bad\)+0x15: may be referenced from code that no function.s decode covers, at 0x' &&
				refused=$((refused + 1))
		done
		check_eq "mutant (undecoded references ignored): verify refuses every layout, nothing written" \
			"$SEEDS" "$refused"
	fi
fi
done_testing
