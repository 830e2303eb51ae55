#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Alignment padding inside functions, as GCC 14 puts it before small loops, on the
# padding fixture (fixtures/padding.S), over random layouts with pad_kept left as it
# is: every output verifies; where pad_after_jmp moved, none of the nops that nothing
# reaches is left in it, and --stats counts them dropped; the nops pad_reached runs
# into its loop stay right in front of the loop's head (or of a jmp to it); pad_kept,
# re-targeted only, keeps its padding in place.  kbolt verify refuses such an output
# with a byte of pad_kept's padding changed, and with pad_reached's nops made int3
# fill.  Linked without relocations, with two values in its data that point into
# pad_kept (its padding, its jmp over it): pad_kept is left alone for them, and its
# layouts verify.  (Checked by objdump, not by kbolt.)
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
SEEDS=8
case "${OUT:-.build/default}" in *san*) SEEDS=4 ;; esac

need_fixture padding
fx=$tmp/padding

# split FILE: objdump's disassembly of each function of FILE, as FILE.d/NAME, and its
# instructions alone (no address, no bytes) as FILE.d/NAME.body
split() {
	mkdir -p "$1.d"
	objdump -d -j .text "$1" | awk -v d="$1.d" '
		/^[0-9a-f]+ <[^>]+>:$/ { f = d "/" substr($2, 2, length($2) - 3) }
		f && NF { print > f; n = split($0, t, "\t"); if (n >= 3) print t[3] > (f ".body") }'
}

# layouts FIXTURE PREFIX [ARGS...]: random layouts 1..$SEEDS of FIXTURE as PREFIX.N,
# each split, its --stats -j PREFIX.N.stats; the seeds written in $outs
layouts() {
	local fix=$1 prefix=$2 s bad=
	shift 2
	split "$fix"
	outs=
	for s in $(seq 1 "$SEEDS"); do
		"$KBOLT" optimize "$fix" -o "$prefix.$s" --layout random --seed "$s" "$@" --stats -j \
			>"$prefix.$s.stats" 2>"$prefix.$s.err" || bad+=" $s"
		[ -s "$prefix.$s" ] && split "$prefix.$s" && outs+=" $s"
	done
	check_eq "$SEEDS random layouts of $(basename "$fix") written and verified" "" "${bad# }"
}

# moved NAME [FIXTURE PREFIX]: the seeds in $outs whose output has a new layout of NAME
moved() {
	local s
	for s in $outs; do
		cmp -s "${2:-$fx}.d/$1.body" "${3:-$tmp/r}.$s.d/$1.body" || echo "$s"
	done
}

layouts "$fx" "$tmp/r" --skip-funcs pad_kept
set -- $outs

m=$(moved pad_after_jmp)
left=$(for s in $m; do grep -l nop "$tmp/r.$s.d/pad_after_jmp.body"; done)
runs=$(for s in $m; do json_get "$tmp/r.$s.stats" 'r["inner_padding_runs"]'; done | grep -c '^1$')
check "pad_after_jmp: moved in some layouts ($(echo $m | wc -w) of $#)" [ -n "$m" ]
check_eq "... none of its unreached padding is left in it" "" "$left"
check_eq "... --stats counts a run of padding dropped in each" "$(echo $m | wc -w)" "$runs"

# pad_reached: its two nops, and after the last the loop's head (add), or a jmp to it
m=$(moved pad_reached)
kept=0
for s in $outs; do
	d=$tmp/r.$s.d/pad_reached
	after=$(grep -A1 nop "$d" | tail -n 1)
	case "$after" in
	*jmp*) after=$(grep "^$(echo "$after" | awk '{print $(NF - 1)}'):" "$d") ;;
	esac
	[ "$(grep -c nop "$d")" = 2 ] && [ "$(echo "$after" | cut -f3)" = "add    %ecx,%eax" ] &&
		kept=$((kept + 1))
done
check "pad_reached: moved in some layouts ($(echo $m | wc -w) of $#)" [ -n "$m" ]
check_eq "... its two nops, which run, stay in front of the loop's head in all" "$#" "$kept"

# first_nop FILE FUNC: the address of FUNC's first nop in FILE, and its offset in FUNC
first_nop() {
	local start at
	start=$(awk 'NR == 1 {print $1}' "$1.d/$2")
	at=$(awk -F: '/nop/ {print $1; exit}' "$1.d/$2")
	printf '%s 0x%x\n' "$at" $((0x$at - 0x$start))
}

# pad_kept: re-targeted, its padding the same bytes at the same place
m=$(moved pad_kept)
same=$(for s in $m; do
	grep nop "$fx.d/pad_kept" | grep -v -x -F -f "$tmp/r.$s.d/pad_kept" >/dev/null || echo "$s"
done)
check "pad_kept: re-targeted in some layouts (seeds $(echo $m))" [ -n "$m" ]
check_eq "... its padding left in place in each" "$(echo $m)" "$(echo $same)"

# Planted: a byte of pad_kept's padding changed (in its first nop's displacement);
# pad_reached's nops made int3 fill, as if they were padding nobody runs
if [ -n "$m" ]; then
	read -r at off < <(first_nop "$fx" pad_kept)
	cp "$tmp/r.${m%%$'\n'*}" "$tmp/bad-pad"
	bump_byte "$tmp/bad-pad" $((0x$at + 5))
	out=$("$KBOLT" verify "$fx" "$tmp/bad-pad" 2>&1)
	check_eq "planted: pad_kept's padding changed: verify refuses it" 1 "$?"
	check_match "... naming its first byte" "verify: pad_kept: new byte at \\+$off is neither" \
		"$out"
fi
read -r at off < <(first_nop "$tmp/r.$1" pad_reached)
cp "$tmp/r.$1" "$tmp/bad-reached"
poke_bytes "$tmp/bad-reached" $((0x$at)) cccccccccccccccccccccccc
out=$("$KBOLT" verify "$fx" "$tmp/bad-reached" 2>&1)
check_eq "planted: pad_reached's nops, which run, made int3: verify refuses it" 1 "$?"
check_match "... at the first of them" \
	"verify: pad_reached\\+$(first_nop "$fx" pad_reached | cut -d' ' -f2): instruction differs" \
	"$out"

# Without relocations: the values leave pad_kept alone, each must lead to the same byte
nr=$tmp/norelocs
if gcc -c -DVALUES -o "$nr.o" "$top/selftests/fixtures/padding.S" &&
   ld -e _text -T "$top/selftests/fixtures/vmlinux.lds" --no-warn-rwx-segments -o "$nr" "$nr.o"
then
	layouts "$nr" "$tmp/n"
	check_eq "... pad_kept, and only it, left alone for the values in its padding and at its jmp" \
		1 "$(json_get "$tmp/n.1.stats" 'r["skipped"]["data_value"]["functions"]')"
	m=$(moved pad_kept "$nr" "$tmp/n")
	check "... re-targeted in some layouts (seeds $(echo $m)), verified" [ -n "$m" ]
else
	fail "the padding fixture linked without relocations"
fi

# --require-rewrite (what a kernel build passes): an output that moves nothing is an
# error naming the reason that skipped the most functions, and nothing is written
"$KBOLT" optimize "$fx" -o "$tmp/none" --layout random --seed 1 --require-rewrite \
	--funcs 'no_such_*' >/dev/null 2>"$tmp/none.err"
check_eq "--require-rewrite, every function excluded: exit 1" 1 "$?"
check_match "... one line naming the reason" "^$(re_quote "$fx"): error: kbolt: no function is rewritten: [0-9]+ of [0-9]+ functions skipped as filtered \\(excluded by --funcs/--skip-funcs\\); nothing written \\(--require-rewrite\\)\$" \
	"$(cat "$tmp/none.err")"
check "... nothing written" test ! -e "$tmp/none"
"$KBOLT" optimize "$fx" -o "$tmp/some" --layout random --seed 1 --require-rewrite 2>"$tmp/some.err"
check_eq "--require-rewrite, functions moved: exit 0" 0 "$?"
done_testing
