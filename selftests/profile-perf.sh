#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# perf script -F brstack --show-mmap-events text as a profile, on the flow fixture:
# a sample's branch stack read as branches and the fall-through ranges between them,
# user-space entries left out, the KASLR slide of the kernel's mmap event taken out;
# the records agree with the fixture's code; profile merge writes them with a text
# header, which reads back the same; refused: no mmap event, a malformed entry, two
# profiles of two KASLR offsets merged.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
fx=$top/selftests/fixtures
need_flow_fixture

# The fixture's flow_syscall run at _text + 0x2000000: its call to __fentry__, the
# return, then je, jne taken and the tail jmp to the thunk; most recent first
link=$(nm "$tmp/flow" | awk '$3 == "_text" {print $1}')
at() {	# at SYMBOL OFFSET: where SYMBOL+OFFSET ran
	printf '0x%x' $(( 0x$(nm "$tmp/flow" | awk -v s="$1" '$3 == s {print $1}') + $2 + 0x2000000 ))
}
fs=flow_syscall
stack="$(at $fs 0x1f)/$(at __x86_return_thunk 0)/P/-/-/0 $(at $fs 0x17)/$(at $fs 0x1b)/P/-/-/3"
stack="$stack $(at $fs 0x7)/$(at $fs 0x10)/M/-/-/2 $(at __fentry__ 0)/$(at $fs 0x5)/P/-/-/1"
stack="$stack $(at $fs 0)/$(at __fentry__ 0)/P/-/-/0"
mmap=$(printf '     swapper     0 [000]     0.000000: PERF_RECORD_MMAP -1/0: [0x%x(0x1e00000) @ 0x%x]: x [kernel.kallsyms]_text' \
	$((0x$link + 0x2000000)) $((0x$link + 0x2000000)))
{ echo "$mmap"
  echo "            bash  1234  $stack"
  echo "            bash  1234  $stack"
  echo "            bash  1234  0x7f0000001000/0x7f0000002000/P/-/-/0  $(at $fs 0x1f)/0x7f0000003000/P/-/-/1"
} >"$tmp/perf.txt"

out=$("$KBOLT" check-profile "$tmp/flow" "$tmp/perf.txt" 2>&1); rc=$?
check_eq "check-profile: the perf profile agrees with the fixture's code (exit 0)" 0 "$rc"
check_match "... 8 records, all agree: 5 branches, 3 ranges (the one of no instruction left out)" \
	'perf.txt: 8 records \(weight 16\): 8 agree with the code' "$out"
"$KBOLT" profile merge "$tmp/perf.txt" -o "$tmp/perf.prof"
check_match "profile merge: the recorder is perf-brstack" '^recorder perf-brstack$' "$(cat "$tmp/perf.prof")"
check_match "... and the header says where _text ran" "^text $(printf '%x' $((0x$link + 0x2000000)))\$" \
	"$(cat "$tmp/perf.prof")"
check_match "... the je taken twice, a branch of unknown kind" \
	"^B $(at $fs 0x7 | sed 's/^0x//') $(at $fs 0x10 | sed 's/^0x//') 2 branch\$" "$(cat "$tmp/perf.prof")"
check_match "... the range from after the je to the jne" \
	"^F $(at $fs 0x10 | sed 's/^0x//') $(at $fs 0x17 | sed 's/^0x//') 2\$" "$(cat "$tmp/perf.prof")"
check_eq "... user space and kernel-to-user entries left out" 0 \
	"$(grep -c '7f0000' "$tmp/perf.prof")"
check_match "the merged profile, with its text header, agrees too" ' 8 agree with the code' \
	"$("$KBOLT" check-profile "$tmp/flow" "$tmp/perf.prof" 2>&1)"
if "$KBOLT" optimize "$tmp/flow" --profile "$tmp/perf.txt" -o "$tmp/opt" 2>"$tmp/opt.err"; then
	ok "optimize lays the fixture out by it, verified"
else
	fail "optimize lays the fixture out by it, verified" "$(cat "$tmp/opt.err")"
fi

sed 1d "$tmp/perf.txt" >"$tmp/nommap.txt"
out=$("$KBOLT" check-profile "$tmp/flow" "$tmp/nommap.txt" 2>&1); rc=$?
check_eq "no mmap event: exit 1" 1 "$rc"
check_match "... saying to print it" "nommap.txt: error: kbolt: no mmap event of \\[kernel.kallsyms\\]_text" "$out"
{ echo "$mmap"; echo "  bash 1 0x1/zz/P/-/-/0"; } >"$tmp/bad.txt"
check_match "a malformed entry: one line naming it" \
	'bad.txt: error: kbolt: line 2: not perf script -F brstack output:' \
	"$("$KBOLT" check-profile "$tmp/flow" "$tmp/bad.txt" 2>&1)"
sed 's/^text .*/text ffffffff84000000/' "$tmp/perf.prof" >"$tmp/other-run.prof"
check_match "two KASLR offsets are not merged" 'addresses of two KASLR offsets are not merged$' \
	"$("$KBOLT" profile merge "$tmp/perf.prof" "$tmp/other-run.prof" -o "$tmp/m.prof" 2>&1)"
done_testing
