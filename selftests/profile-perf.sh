#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# perf script -F brstack --show-mmap-events text as a profile, on the flow fixture:
# a sample's branch stack read as branches and the fall-through ranges between them,
# user-space entries left out, the KASLR slide of the kernel's mmap event taken out;
# the records agree with the fixture's code; profile merge writes them with a text
# header, which reads back the same; refused: no mmap event, a malformed entry, a
# profile of a KASLR run merged with one in link addresses.  The same for ip samples (perf script -F ip,
# -F ip,sym, the default fields, a recording with callchains): kernel ips as samples,
# user ones dropped and counted, the event named; and, where perf can record on this
# machine, a real "perf record -e cpu-clock -a" read whole (the host's kernel: its
# addresses are only read, not checked against a vmlinux).
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
fx=$top/selftests/fixtures
need_fixture flow

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
	'bad.txt: error: kbolt: line 2: not perf script -F brstack or -F ip output:' \
	"$("$KBOLT" check-profile "$tmp/flow" "$tmp/bad.txt" 2>&1)"
{ echo "$mmap"; echo "            bash  1234  "; sed 1d "$tmp/perf.txt"; } >"$tmp/empty-first.txt"
check_match "an empty branch stack, the first sample too, counts nothing" \
	'empty-first.txt: 8 records \(weight 16\): 8 agree with the code' \
	"$("$KBOLT" check-profile "$tmp/flow" "$tmp/empty-first.txt" 2>&1)"
{ echo "$mmap"; echo "            bash  1234  "; } >"$tmp/only-empty.txt"
check_match "... but a text of nothing else is not perf's: one line naming the first" \
	'only-empty.txt: error: kbolt: line 2: not perf script -F brstack or -F ip output:' \
	"$("$KBOLT" check-profile "$tmp/flow" "$tmp/only-empty.txt" 2>&1)"
grep -v '^text ' "$tmp/perf.prof" >"$tmp/link.prof"
check_match "a KASLR run's profile and one in link addresses are not merged" \
	'link.prof is in link addresses, .*perf.prof in those of a KASLR run \(_text at 0x[0-9a-f]+\): the two are not merged$' \
	"$("$KBOLT" profile merge "$tmp/perf.prof" "$tmp/link.prof" -o "$tmp/m.prof" 2>&1)"

# -- ip samples, as perf script prints them (builtin-script.c: the ip right-aligned in
# 16 columns, no 0x).  flow_syscall+0x7 (the je) 3 times, +0x10 twice, __fentry__ once,
# two user-space ips.
ip() { printf '%16s' "${1#0x}"; }
ips=("$(at $fs 0x7)" "$(at $fs 0x10)" "$(at $fs 0x7)" 0x7f083d277e7a "$(at __fentry__ 0)"
     "$(at $fs 0x10)" 0x562b2537a0c1 "$(at $fs 0x7)")
syms=(flow_syscall flow_syscall flow_syscall __internal_atexit __fentry__ flow_syscall main
      flow_syscall)
{ echo "$mmap"; for a in "${ips[@]}"; do ip "$a"; echo; done; } >"$tmp/ip.txt"
{ echo "$mmap"; for i in "${!ips[@]}"; do echo "$(ip "${ips[$i]}") ${syms[$i]}"; done; } \
	>"$tmp/ipsym.txt"
{ echo "$mmap"; for i in "${!ips[@]}"; do
	printf '%16s %5d [%03d] %5d.%06d: %10d cpu-clock: %s %s+0x1 (%s)\n' bash 1234 1 4364 \
		$((361557 + i * 250)) 250000 "$(ip "${ips[$i]}")" "${syms[$i]}" '[kernel.kallsyms]'
  done; } >"$tmp/ipdefault.txt"
# with callchains (perf record -g): an empty sample line, the sampled ip first, its callers
{ echo "$mmap"; for a in "${ips[@]}"; do
	printf '\n\t%s\n\t%s\n\n' "$(ip "$a")" "$(ip "$(at $fs 0x1f)")"
  done; } >"$tmp/ipchain.txt"
sample_of() {	# sample_of SYMBOL OFFSET COUNT: the S record merge writes
	echo "S $(at "$1" "$2" | sed 's/^0x//') $3"
}
want="recorder perf-ip
text $(printf '%x' $((0x$link + 0x2000000)))
dropped 2
$(sample_of $fs 0x7 3)
$(sample_of $fs 0x10 2)"
fentry=$(sample_of __fentry__ 0 1)
for form in ip ipsym ipdefault ipchain; do
	"$KBOLT" profile merge "$tmp/$form.txt" -o "$tmp/$form.prof"
	got=$(grep -v "^# \|^kbolt-profile\|^build-id\|^release\|^event" "$tmp/$form.prof")
	check_eq "perf script ($form): 6 kernel samples at 3 ips, 2 user ones dropped" \
		"$(sort <<<"$want
$fentry")" "$(sort <<<"$got")"
done
check_match "... the default fields name the event" '^event cpu-clock$' "$(cat "$tmp/ipdefault.prof")"
check_eq "... -F ip alone names none" 0 "$(grep -c '^event' "$tmp/ip.prof")"
out=$("$KBOLT" check-profile "$tmp/flow" "$tmp/ip.txt" 2>&1); rc=$?
check_eq "check-profile: the ip samples agree with the fixture's code (slide taken out)" \
	"0 3" "$rc $(sed -n 's/.* \([0-9]*\) agree with the code.*/\1/p' <<<"$out")"
if "$KBOLT" optimize "$tmp/flow" --profile "$tmp/ip.txt" -o "$tmp/opt-ip" 2>"$tmp/opt.err"; then
	ok "optimize lays the fixture out by ip samples alone (flow inference), verified"
else
	fail "optimize lays the fixture out by ip samples alone (flow inference), verified" \
		"$(cat "$tmp/opt.err")"
fi
{ echo "$mmap"; ip "$(at $fs 0x7)"; echo; echo "    zzzz flow_syscall"; } >"$tmp/badip.txt"
check_match "an ip that is no hex number: one line naming it" \
	'badip.txt: error: kbolt: line 3: not perf script -F brstack or -F ip output:     zzzz' \
	"$("$KBOLT" check-profile "$tmp/flow" "$tmp/badip.txt" 2>&1)"
{ echo "$mmap"; printf '\n\tnothex\n'; } >"$tmp/badchain.txt"
check_match "a callchain entry that is no hex number: one line naming it" \
	'badchain.txt: error: kbolt: line 3: not perf script -F brstack or -F ip output:' \
	"$("$KBOLT" check-profile "$tmp/flow" "$tmp/badchain.txt" 2>&1)"

# -- the real perf on this machine's own kernel, if it can record
if command -v perf >/dev/null &&
   perf record -q -e cpu-clock -a -o "$tmp/perf.data" -- sleep 1 >/dev/null 2>&1 &&
   perf script -i "$tmp/perf.data" -F ip --show-mmap-events >"$tmp/real.txt" 2>/dev/null; then
	nr=$(grep -vc PERF_RECORD "$tmp/real.txt")
	"$KBOLT" profile merge "$tmp/real.txt" -o "$tmp/real.prof"
	got=$(awk '$1 == "S" { n += $3 } $1 == "dropped" { d = $2 } END { print n + d }' "$tmp/real.prof")
	check_eq "real perf script -F ip: its $nr samples, kept or dropped" "$nr" "$got"
	check_match "... the kernel's _text from its mmap event" '^text ffffffff' "$(cat "$tmp/real.prof")"
	perf script -i "$tmp/perf.data" --show-mmap-events >"$tmp/real-default.txt" 2>/dev/null
	"$KBOLT" profile merge "$tmp/real-default.txt" -o "$tmp/real-default.prof"
	check_eq "... the default fields give the same samples" \
		"$(grep '^[Sd]' "$tmp/real.prof")" "$(grep '^[Sd]' "$tmp/real-default.prof")"
else
	skip "real perf script -F ip" "perf cannot record cpu-clock here"
fi
done_testing
