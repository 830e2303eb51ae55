#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Sampled instruction addresses in kbolt's profile format (Documentation/profile-format.rst,
# "S records"): read with their event and dropped headers; checked by check-profile (at
# an instruction start inside a function, counted in the text and JSON reports); merged
# per address with weights, read back byte for byte; their KASLR slide taken out; shown
# by heatmap as the heat of their instruction; left out by profile-to-bolt; malformed
# lines refused, one located line each.  On the profile fuzzer's image
# (selftests/fuzz/make-profile-seeds: stages.S linked as a vmlinux).
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac

if ! "$top/selftests/fuzz/make-profile-seeds" "$tmp/fx" >"$tmp/fx.log" 2>&1; then
	fail "make-profile-seeds builds the image" "$(tail -n 5 "$tmp/fx.log")"
	done_testing
	exit 1
fi
image=$tmp/fx/image
seeds=$tmp/fx/seeds
build_id=$(sed -n 's/^build-id //p' "$seeds/kbolt-samples.prof")

head_of() {	# head_of RECORDER EVENT [HEADER...]: a kbolt profile's header
	local recorder=$1 event=$2
	shift 2
	printf '# kbolt profile\nkbolt-profile 1\nbuild-id %s\nrelease 6.1.0-test\n' "$build_id"
	printf 'recorder %s\nevent %s\n' "$recorder" "$event"
	[ $# -gt 0 ] && printf '%s\n' "$@"
	return 0
}

# -- check-profile
out=$("$KBOLT" check-profile "$image" "$seeds/kbolt-samples.prof"); rc=$?
check_eq "a sample at every instruction of every function: check-profile passes" 0 "$rc"
nr=$(grep -c "^S " "$seeds/kbolt-samples.prof")
weight=$(awk '$1 == "S" { w += $3 } END { print w }' "$seeds/kbolt-samples.prof")
check_match "... the text report counts the $nr samples and their weight" \
	": of these, $nr samples \\(weight $weight\\), 0 of them disagree\$" "$out"
json=$("$KBOLT" check-profile -j "$image" "$seeds/kbolt-samples.prof")
check_eq "... JSON: by_kind.sample and sample_disagree" "$nr 0" \
	"$(python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["by_kind"]["sample"], r["sample_disagree"])' <<<"$json")"
check "a profile of samples and edges passes" "$KBOLT" check-profile "$image" "$seeds/kbolt-mixed.prof"

# cfg_branches: 0x30 call (5), 0x35 test, 0x37 je, ..., 0x47 jmp, 0x4c-0x4f int3 padding
{ head_of kbolt-record cpu-clock; echo "S ffffffff81000035 7"; echo "S ffffffff81000036 2"
  echo "S ffffffff8100004d 3"; echo "S ffffffff81000037 1"; } >"$tmp/bad.prof"
out=$("$KBOLT" check-profile "$image" "$tmp/bad.prof"); rc=$?
check_eq "samples inside an instruction and in padding: check-profile exits 1" 1 "$rc"
check_match "... the one inside an instruction named" \
	'cfg_branches\+0x6 -> cfg_branches\+0x6 \(sample, 2 times\): the sample is not at the start of an instruction$' "$out"
check_match "... the one in the padding after the function named" \
	'\(sample, 3 times\): the sample is in the int3 padding outside any function$' "$out"
check_match "... counted" ': of these, 4 samples \(weight 13\), 2 of them disagree$' "$out"

# -- KASLR: a profile of a run with _text 0x2000000 higher
{ head_of kbolt-record cycles "text ffffffff83000030"
  sed -n 's/^S ffffffff81/S ffffffff83/p' "$seeds/kbolt-samples.prof"; } >"$tmp/slid.prof"
out=$("$KBOLT" check-profile "$image" "$tmp/slid.prof"); rc=$?
check_eq "samples of a KASLR run (text header): the slide is taken out, check-profile passes" \
	"0 0" "$rc $(grep -c disagree: <<<"$out")"
# two boots, two slides (0x2000000 and 0x4000000 above the image's _text), as kbolt
# record writes them: merged at the lower one, in any order, and still on the image
{ head_of kbolt-record cycles "text ffffffff85000030"
  sed -n 's/^S ffffffff81/S ffffffff85/p' "$seeds/kbolt-samples.prof"; } >"$tmp/slid2.prof"
"$KBOLT" profile merge "$tmp/slid2.prof" "$tmp/slid.prof" -o "$tmp/slid12.prof"
"$KBOLT" profile merge "$tmp/slid.prof" "$tmp/slid2.prof" -o "$tmp/slid21.prof"
check_eq "merge of two KASLR runs: at the lower _text, each record's count doubled" \
	"text ffffffff83000030|$(sed -n 's/^S \(ffffffff83[0-9a-f]*\) \([0-9]*\)$/S \1 \2/p' "$tmp/slid.prof" |
		awk '{ print $1, $2, $3 * 2 }' | tr '\n' '|')" \
	"$(grep '^text \|^S ' "$tmp/slid12.prof" | tr '\n' '|')"
check "... the same bytes in the other order" cmp "$tmp/slid12.prof" "$tmp/slid21.prof"
out=$("$KBOLT" check-profile "$image" "$tmp/slid12.prof"); rc=$?
check_eq "... and check-profile finds every sample on the image" "0 0" \
	"$rc $(grep -c disagree: <<<"$out")"

# -- merge: same address summed, weighted; dropped weighted and summed; event kept or merged
{ head_of kbolt-record cpu-clock "dropped 5"; echo "S ffffffff81000035 7"
  echo "S ffffffff81000030 1"; } >"$tmp/a.prof"
{ head_of kbolt-record cpu-clock "dropped 1"; echo "S ffffffff81000035 2"
  echo "B ffffffff81000037 ffffffff81000040 4 jcc"; } >"$tmp/b.prof"
"$KBOLT" profile merge -w 3 "$tmp/a.prof" -w 2 "$tmp/b.prof" -o "$tmp/ab.prof"
check_eq "merge: samples of one address summed with the weights, dropped too, event kept" \
"# kbolt profile
kbolt-profile 1
build-id $build_id
release 6.1.0-test
recorder kbolt-record
event cpu-clock
dropped 17
S ffffffff81000030 3
S ffffffff81000035 25
B ffffffff81000037 ffffffff81000040 8 jcc" "$(cat "$tmp/ab.prof")"
check "... reads back as it was written" bash -c \
	"'$KBOLT' profile merge '$tmp/ab.prof' -o '$tmp/ab2.prof' && cmp '$tmp/ab.prof' '$tmp/ab2.prof'"
sed 's/^event .*/event cycles/' "$tmp/b.prof" >"$tmp/c.prof"
"$KBOLT" profile merge "$tmp/a.prof" "$tmp/c.prof" -o "$tmp/ac.prof"
check_match "two events: 'event merged'" '^event merged$' "$(cat "$tmp/ac.prof")"
{ head_of kbolt-record cpu-clock "dropped 18446744073709551615"; echo "S ffffffff81000035 2"; } \
	>"$tmp/big.prof"
out=$("$KBOLT" profile merge "$tmp/big.prof" "$tmp/a.prof" -o "$tmp/out.prof" 2>&1); rc=$?
check_eq "dropped counts past 64 bits: exit 1, nothing written" "1 1" \
	"$rc $(test -e "$tmp/out.prof"; echo $?)"
check_match "... one line" 'its dropped count times the weight 1, summed, does not fit in 64 bits$' "$out"

# -- the other consumers
{ head_of kbolt-record cpu-clock; echo "S ffffffff81000035 700"; echo "S ffffffff81000037 40"
  echo "S ffffffff81000059 5"; } >"$tmp/heat.prof"
json=$("$KBOLT" heatmap -j "$image" "$tmp/heat.prof" -o "$tmp/heat.svg")
check_match "heatmap: the heat of a cell is the samples in it (700 + 40), no transfer read" \
	'"max_count":740[,}]' "$json"
out=$("$KBOLT" profile-to-bolt -o "$tmp/s.bolt" "$seeds/kbolt-samples.prof" 2>&1); rc=$?
check_eq "profile-to-bolt of samples only: exit 1, nothing written" "1 1" \
	"$rc $(test -e "$tmp/s.bolt"; echo $?)"
check_match "... saying why" 'no records to write \(interrupts and samples are left out\)$' "$out"
"$KBOLT" profile-to-bolt -o "$tmp/m.bolt" "$seeds/kbolt-mixed.prof"
check_eq "profile-to-bolt of samples and edges: the edges only" \
	"$(grep -c '^[BF] ' "$seeds/kbolt-mixed.prof")" "$(wc -l <"$tmp/m.bolt")"

# -- malformed lines: one located line, exit 1
malformed() {	# malformed DESCRIPTION LINE
	{ head_of kbolt-record cpu-clock; echo "S ffffffff81000035 7"; echo "$2"; } >"$tmp/m.prof"
	out=$("$KBOLT" check-profile "$image" "$tmp/m.prof" 2>&1); rc=$?
	check_eq "$1: exit 1" 1 "$rc"
	check_eq "... one line naming the line" "$tmp/m.prof: error: kbolt: line 8: malformed: $2" "$out"
}
malformed "S without a count" "S ffffffff81000035"
malformed "S with a field too many" "S ffffffff81000035 7 8"
malformed "S with a negative count" "S ffffffff81000035 -7"
malformed "S with a count past 64 bits" "S ffffffff81000035 18446744073709551616"
malformed "a B record of kind sample" "B ffffffff81000035 ffffffff81000035 7 sample"
malformed "dropped not a number" "dropped many"
malformed "a sample record glued" "Sffffffff81000035 7"

done_testing
