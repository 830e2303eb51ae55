#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kbolt profile merge: the counts of one kernel's profiles, times their weights, added
# per record; the same bytes whatever the order and grouping of the merges (checked
# over every order and every grouping of three profiles); refusals: profiles of two
# kernels, a sum past 64 bits, -w not once per profile, an output that is an input.
# On Debian's 6.1, the lab's proc and net profiles merged agree with the kernel's code
# and lay it out.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
sanitized=0
case "${OUT:-.build/default}" in *san*) sanitized=1 ;; esac

head_of() {	# head_of RECORDER
	printf '# kbolt profile\nkbolt-profile 1\nbuild-id -\nrelease 6.1.0-test\nrecorder %s\n' "$1"
}
{ head_of qemu-tcg; echo "B ffffffff81000000 ffffffff81000380 10 call"
  echo "F ffffffff81000005 ffffffff81000007 3"; } >"$tmp/a.prof"
{ head_of perf; echo "B ffffffff81000000 ffffffff81000380 5 call"
  echo "B ffffffff81000007 ffffffff8100000d 2 jcc"; echo "B ffffffff81000007 ffffffff8100000d 4 jmp"; } >"$tmp/b.prof"
{ head_of qemu-tcg; echo "F ffffffff81000005 ffffffff81000007 1"; } >"$tmp/c.prof"

merge() { "$KBOLT" profile merge "$@"; }
merge "$tmp/a.prof" "$tmp/b.prof" -o "$tmp/ab.prof"
check_eq "two profiles: counts added per (from, to, kind), records sorted, recorder 'merged'" \
"$(head_of merged)
B ffffffff81000000 ffffffff81000380 15 call
F ffffffff81000005 ffffffff81000007 3
B ffffffff81000007 ffffffff8100000d 2 jcc
B ffffffff81000007 ffffffff8100000d 4 jmp" "$(cat "$tmp/ab.prof")"
merge "$tmp/a.prof" "$tmp/c.prof" -o "$tmp/ac.prof"
check_match "one recorder: it is kept" '^recorder qemu-tcg$' "$(cat "$tmp/ac.prof")"
merge -w 3 "$tmp/a.prof" -w 2 "$tmp/b.prof" -o "$tmp/w.prof"
merge "$tmp/a.prof" "$tmp/a.prof" "$tmp/a.prof" "$tmp/b.prof" "$tmp/b.prof" -o "$tmp/rep.prof"
check "-w 3 A -w 2 B is A three times and B twice" cmp "$tmp/w.prof" "$tmp/rep.prof"
check_match "... 3 x 10 + 2 x 5 calls" '^B ffffffff81000000 ffffffff81000380 40 call$' \
	"$(cat "$tmp/w.prof")"
check "the merged profile reads back as it was written" bash -c \
	"'$KBOLT' profile merge '$tmp/ab.prof' -o '$tmp/ab2.prof' && cmp '$tmp/ab.prof' '$tmp/ab2.prof'"

# every order and every grouping of three profiles: one result, byte for byte
assoc() {	# assoc A B C: bytes of every merge tree of the three, one line each
	local p q r i=0 perms=("$1 $2 $3" "$1 $3 $2" "$2 $1 $3" "$2 $3 $1" "$3 $1 $2" "$3 $2 $1")
	for t in "${perms[@]}"; do
		read -r p q r <<< "$t"
		i=$((i + 1))
		merge "$p" "$q" "$r" -o "$tmp/flat$i" && sha256sum <"$tmp/flat$i"
		merge "$p" "$q" -o "$tmp/l$i" && merge "$tmp/l$i" "$r" -o "$tmp/left$i" &&
			sha256sum <"$tmp/left$i"
		merge "$q" "$r" -o "$tmp/r$i" && merge "$p" "$tmp/r$i" -o "$tmp/right$i" &&
			sha256sum <"$tmp/right$i"
	done
}
sums=$(assoc "$tmp/a.prof" "$tmp/b.prof" "$tmp/c.prof")
check_eq "three profiles merged in 6 orders x 3 groupings: 18 merges, one result" "18 1" \
	"$(wc -l <<< "$sums") $(sort -u <<< "$sums" | wc -l)"

# refusals, one line each, nothing written
refused() {	# refused DESCRIPTION RC REGEX ARGS...
	local d=$1 want=$2 re=$3 out rc
	shift 3
	rm -f "$tmp/out.prof"
	out=$(merge "$@" 2>&1); rc=$?
	check_eq "$d: exit $want" "$want" "$rc"
	check_match "... one line saying so" "$re" "$out"
	check "... nothing written" test ! -e "$tmp/out.prof"
}
sed 's/^release .*/release 6.12.0-test/' "$tmp/b.prof" >"$tmp/other.prof"
refused "profiles of two kernels" 1 \
	"^$tmp/other.prof: error: kbolt: a profile of another kernel than $tmp/a.prof's" \
	"$tmp/a.prof" "$tmp/other.prof" -o "$tmp/out.prof"
{ head_of x; echo "B ffffffff81000000 ffffffff81000380 9223372036854775808 call"; } >"$tmp/big.prof"
refused "a sum past 64 bits" 1 'does not fit in 64 bits$' \
	"$tmp/big.prof" "$tmp/big.prof" -o "$tmp/out.prof"
refused "a weight that makes a count pass 64 bits" 1 'times the weight 2 does not fit in 64 bits$' \
	-w 2 "$tmp/big.prof" -o "$tmp/out.prof"
refused "-w not once per profile" 2 'give -w once for every profile \(2\), or not at all' \
	-w 2 "$tmp/a.prof" "$tmp/b.prof" -o "$tmp/out.prof"
refused "-w 0" 2 "^kbolt: error: -w takes a whole number from 1, not '0'$" \
	-w 0 "$tmp/a.prof" -o "$tmp/out.prof"
out=$("$KBOLT" profile frob "$tmp/a.prof" -o "$tmp/out.prof" 2>&1); rc=$?
check_eq "an unknown subcommand: exit 2" 2 "$rc"
check_match "... named" "^kbolt: error: profile: unknown subcommand 'frob' \\(merge, portable, translate\\)$" "$out"
cp "$tmp/a.prof" "$tmp/keep.prof"
out=$(merge "$tmp/a.prof" "$tmp/b.prof" -o "$tmp/a.prof" 2>&1); rc=$?
check_eq "an output that is an input: exit 2, the input intact" "2 same" \
	"$rc $(cmp -s "$tmp/a.prof" "$tmp/keep.prof" && echo same)"

# Debian's 6.1: the lab's profiles of two workloads, merged
proc=$(proc_profile_61)
net=
[ -n "$proc" ] && net=$("$top/scripts/cached-profile" "$VMLINUX_61" net 2>/dev/null)
if [ -z "$proc" ] || [ -z "$net" ] || [ $sanitized = 1 ]; then
	skip "6.1: proc and net merged" "$no_kernels, or the sanitized pass"
else
	merge -w 1 "$proc" -w 2 "$net" -o "$tmp/mix.prof"
	sums=$(assoc "$proc" "$net" "$tmp/a.prof" 2>/dev/null)
	check_eq "6.1: a profile of another kernel is refused in every merge tree" 0 \
		"$(grep -c . <<< "$sums")"
	check_match "6.1: proc + 2 x net agrees with the kernel's code" ' 0 disagree' \
		"$("$KBOLT" check-profile "$VMLINUX_61" "$tmp/mix.prof" 2>&1)"
	n=$(( $(grep -c '^[BF] ' "$proc") + $(grep -c '^[BF] ' "$net") ))
	m=$(grep -c '^[BF] ' "$tmp/mix.prof")
	check "... its $m records are fewer than the $n of both (shared ones added)" [ "$m" -lt "$n" ]
	if "$KBOLT" optimize "$VMLINUX_61" --profile "$tmp/mix.prof" --strip-debug \
		-o "$tmp/mix.vmlinux" 2>"$tmp/mix.err"; then
		ok "... lays the kernel out, verified"
	else
		fail "... lays the kernel out, verified" "$(tail -n 3 "$tmp/mix.err")"
	fi
fi
done_testing
