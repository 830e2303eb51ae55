#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# BOLT's pre-aggregated profiles (kbolt/profile/prof_bolt.c) and the one place that decides
# whether a profile is of a kernel (kbolt/profile/profile_match.c), on a small vmlinux assembled
# here whose instructions are named by labels: a hand-made BOLT profile agrees with its
# code; kbolt -> BOLT -> kbolt gives the same edges but the interrupts; F ranges are
# checked instruction by instruction; a profile whose addresses miss the instructions is
# refused unless --force; a profile without records always is; profile-to-bolt's usage
# and output errors.  On the cached 6.1 and 6.12 kernels (skipped without them): records
# of the 6.1 proc profile in BOLT's format agree with 6.1, and 6.12 refuses them.
# Syntax errors of BOLT files are in bad-input.sh.
. "$(dirname "$0")/lib.sh"
KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac

cat >"$tmp/fixture.S" <<'EOF'
	.text
	.globl	f
	.type	f, @function
f:
f_cmp:	cmpq	%rsi, %rdi
f_jae:	jae	f_xor
f_mov:	movq	%rdi, %rax
f_add:	addq	$1, %rax
f_call:	call	g
f_test:	testq	%rax, %rax
f_jne:	jne	f_nop
f_jmp:	jmp	f_ret
f_xor:	xorl	%eax, %eax
f_nop:	nop
f_ret:	ret
	.size	f, . - f
	.globl	g
	.type	g, @function
g:	movq	%rdi, %rax
g_ret:	ret
	.size	g, . - g

	.section .rodata, "a"
	.globl	linux_banner
	.type	linux_banner, @object
linux_banner:
	.asciz	"Linux version 6.1.0-test (profile-bolt) #1 SMP\n"
	.size	linux_banner, . - linux_banner
	.section .note.GNU-stack, "", @progbits
EOF
vmlinux=$tmp/vmlinux
if ! as --64 -o "$tmp/fixture.o" "$tmp/fixture.S" ||
   ! ld -n -e f -Ttext=0xffffffff81000000 --no-warn-rwx-segments -o "$vmlinux" "$tmp/fixture.o"; then
	fail "assemble and link the fixture"
	done_testing
	exit 1
fi
declare -A a	# label -> address, in hex without 0x as both formats write them
while read -r addr _ name; do a[$name]=$addr; done < <(nm "$vmlinux")
mid=$(printf '%x' $((0x${a[f_add]} + 1)))	# inside the add

kbolt_head() {	# a kbolt profile's header naming the fixture's release
	printf 'kbolt-profile 1\nbuild-id -\nrelease 6.1.0-test\nrecorder test\n'
}

# -- a hand-made BOLT profile: every kind of line, a range across a call, leading blanks
cat >"$tmp/good.bolt" <<EOF
E cycles
B ${a[f_jae]} ${a[f_xor]} 3 1
F ${a[f_jae]} ${a[f_mov]} 5
F ${a[f_mov]} ${a[f_jne]} 5
B ${a[f_call]} ${a[g]} 5 0
B ${a[g_ret]} ${a[f_test]} 5 0
  f   ${a[f_xor]} ${a[f_ret]} 3
B ${a[f_jne]} ${a[f_nop]} 2 0
F ${a[f_jne]} ${a[f_jmp]} 3
B ${a[f_jmp]} ${a[f_ret]} 3 0
EOF
out=$("$KBOLT" check-profile "$vmlinux" "$tmp/good.bolt" 2>&1); rc=$?
check_eq "a hand-made BOLT profile: check-profile exits 0" 0 "$rc"
check_match "it agrees with the code, record by record" \
	'good.bolt: 9 records \(weight 34\): 9 agree with the code, 0 from sites patched at boot, 0 outside the image, 0 disagree' "$out"
out=$("$KBOLT" check-profile -p "$vmlinux" "$tmp/good.bolt" 2>&1)
check_match "B records have the kind branch" '"branch": 5' "$out"
check_match "F and f records are fall-throughs" '"ft": 4' "$out"

# -- kbolt -> BOLT -> kbolt: the same edges but the interrupt, kinds become "branch"
{ kbolt_head; cat <<EOF; } >"$tmp/kinds.prof"
B ${a[f_jae]} ${a[f_xor]} 3 jcc
F ${a[f_jae]} ${a[f_mov]} 5
B ${a[f_call]} ${a[g]} 5 call
B ${a[g_ret]} ${a[f_test]} 5 ret
B ${a[f_add]} ${a[g]} 1 int
B ${a[f_jmp]} ${a[f_ret]} 3 jmp
EOF
cat >"$tmp/kinds.expected" <<EOF
B ${a[f_jae]} ${a[f_xor]} 3 0
F ${a[f_jae]} ${a[f_mov]} 5
B ${a[f_call]} ${a[g]} 5 0
B ${a[g_ret]} ${a[f_test]} 5 0
B ${a[f_jmp]} ${a[f_ret]} 3 0
EOF
check "profile-to-bolt converts a kbolt profile" \
	"$KBOLT" profile-to-bolt -o "$tmp/kinds.bolt" "$tmp/kinds.prof"
check_eq "it writes every record but the interrupt, B with 0 mispredictions" \
	"$(cat "$tmp/kinds.expected")" "$(cat "$tmp/kinds.bolt" 2>&1)"
check "the BOLT profile read back agrees with the code" \
	"$KBOLT" check-profile "$vmlinux" "$tmp/kinds.bolt"
"$KBOLT" profile-to-bolt -o "$tmp/kinds2.bolt" "$tmp/kinds.bolt"
check "read back and written again, it is the same file" cmp "$tmp/kinds.bolt" "$tmp/kinds2.bolt"
check_eq "no temporary file is left" "" "$(ls -a "$tmp" | grep '^\.kbolt-')"

# -- fall-through ranges and branches without kinds that disagree with the code
disagree() {	# disagree DESCRIPTION RECORD REASON: a kbolt profile of that one record
	local d=$1 rec=$2 reason=$3 rc
	{ kbolt_head; printf '%s\n' "$rec"; } >"$tmp/one.prof"
	out=$("$KBOLT" check-profile "$vmlinux" "$tmp/one.prof" 2>&1); rc=$?
	check_eq "$d: exit 1" 1 "$rc"
	check_match "$d: $reason" "^$vmlinux: .*: $reason\$" "$out"
}
disagree "a range across a jmp" "F ${a[f_mov]} ${a[f_xor]} 1" \
	"fall-through range crosses an instruction that cannot fall through"
disagree "a range that ends inside an instruction" "F ${a[f_mov]} $mid 1" \
	"fall-through range does not end at an instruction boundary"
disagree "a fall-through backwards" "F ${a[f_add]} ${a[f_mov]} 1" \
	"fall-through does not reach the next instruction"
disagree "a fall-through into another function" "F ${a[f_mov]} ${a[g]} 1" \
	"fall-through does not reach the next instruction"
disagree "a range from a jmp" "F ${a[f_jmp]} ${a[f_ret]} 1" \
	"fall-through from an instruction that cannot fall through"
disagree "a branch from a mov" "B ${a[f_mov]} ${a[f_test]} 1 branch" \
	"the source instruction does not transfer control"
disagree "a branch off a jcc's target" "B ${a[f_jae]} ${a[f_ret]} 1 branch" \
	"the target differs from the branch's encoded target"

# -- a profile without build-id and release is judged by its addresses: at most 10% miss
bolt_with_misses() {	# bolt_with_misses GOOD BAD: GOOD records that land, BAD that miss
	local i
	for ((i = 0; i < $1; i++)); do echo "B ${a[f_jae]} ${a[f_xor]} 1 0"; done
	for ((i = 0; i < $2; i++)); do echo "B ${a[f_mov]} ${a[f_test]} 1 0"; done
}
re_vmlinux=$(re_quote "$vmlinux")
bolt_with_misses 9 1 >"$tmp/miss10.bolt"
out=$("$KBOLT" check-profile "$vmlinux" "$tmp/miss10.bolt" 2>&1)
check_match "1 miss in 10 records is accepted (checked, and it disagrees)" \
	'miss10.bolt: 10 records .* 9 agree with the code, .* 1 disagree' "$out"
bolt_with_misses 8 2 >"$tmp/miss20.bolt"
out=$("$KBOLT" check-profile "$vmlinux" "$tmp/miss20.bolt" 2>&1); rc=$?
check_eq "2 misses in 10 records: refused, exit 1" 1 "$rc"
check_eq "the refusal is one message" 1 "$(printf '%s\n' "$out" | grep -c '')"
check_match "it names the profile, the share and --force" \
	"miss20.bolt: error: kbolt: 2 of its 10 records in $re_vmlinux's unpatched code \\(20\\.0%\\) miss its instructions: a profile of another kernel, or of addresses moved by KASLR \\(--force uses it anyway\\)\$" "$out"
out=$("$KBOLT" check-profile -f "$vmlinux" "$tmp/miss20.bolt" 2>&1)
check_match "with --force, a warning" \
	"miss20.bolt: warning: kbolt: 2 of its 10 records in $re_vmlinux's unpatched code \\(20\\.0%\\) miss its instructions \\(--force\\)\$" "$out"
check_match "with --force, the records are checked" 'miss20.bolt: 10 records .* 2 disagree' "$out"
{ bolt_with_misses 9 0; echo "B $mid ${a[f_test]} 1 0"; echo "B ${a[f_jae]} $mid 1 0"; } \
	>"$tmp/mid.bolt"
out=$("$KBOLT" check-profile "$vmlinux" "$tmp/mid.bolt" 2>&1)
check_match "an end inside an instruction misses" '2 of its 11 records .* \(18\.2%\) miss' "$out"
{ bolt_with_misses 9 0; echo "F ${a[f_mov]} ${a[g]} 1"; echo "F ${a[f_add]} ${a[f_mov]} 1"; } \
	>"$tmp/ft.bolt"
out=$("$KBOLT" check-profile "$vmlinux" "$tmp/ft.bolt" 2>&1)
check_match "a range into another function, or backwards, misses" '2 of its 11 records .* miss' \
	"$out"
printf 'B 1000 2000 5 0\nF 3000 3010 5\n' >"$tmp/outside.bolt"
out=$("$KBOLT" check-profile "$vmlinux" "$tmp/outside.bolt" 2>&1); rc=$?
check_eq "a profile with no record in the image: exit 1" 1 "$rc"
check_match "it says so" "outside.bolt: error: kbolt: none of its 2 records is in $re_vmlinux's code: " \
	"$out"
check_match "with --force, a warning" "none of its 2 records is in $re_vmlinux's code \\(--force\\)" \
	"$("$KBOLT" check-profile -f "$vmlinux" "$tmp/outside.bolt" 2>&1)"
{ bolt_with_misses 1 0; echo "B 1000 2000 5 0"; echo "B 1000 2000 5 0"; } >"$tmp/some.bolt"
check "records outside the image do not count as misses" \
	"$KBOLT" check-profile "$vmlinux" "$tmp/some.bolt"
# the kbolt format without build-id and release is judged the same way
{ printf 'kbolt-profile 1\nbuild-id -\nrelease -\n'; bolt_with_misses 8 2 | sed 's/ 0$/ branch/'; } \
	>"$tmp/anon.prof"
check_match "a kbolt profile without build-id and release: refused the same way" \
	'anon.prof: error: kbolt: 2 of its 10 records' "$("$KBOLT" check-profile "$vmlinux" "$tmp/anon.prof" 2>&1)"

# -- no records: refused, --force or not
printf 'E cycles\n' >"$tmp/empty.bolt"
for f in "" -f; do
	out=$("$KBOLT" check-profile $f "$vmlinux" "$tmp/empty.bolt" 2>&1); rc=$?
	check_eq "a profile without records${f:+ and $f}: exit 1" 1 "$rc"
	check_match "a profile without records${f:+ and $f}: refused" \
		'empty.bolt: error: kbolt: no records: nothing was recorded$' "$out"
done

# -- profile-to-bolt: usage and output errors leave nothing behind
usage_error() {	# usage_error DESCRIPTION REGEX ARGS...
	local d=$1 re=$2 rc
	shift 2
	out=$("$KBOLT" "$@" 2>&1); rc=$?
	check_eq "$d: exit 2" 2 "$rc"
	check_match "$d: message" "^kbolt: error: $re\$" "$out"
}
usage_error "profile-to-bolt without -o" \
	'usage: kbolt profile-to-bolt \[--format pre\|fdata\|yaml\] -o OUT \[VMLINUX\] PROFILE' \
	profile-to-bolt "$tmp/kinds.prof"
usage_error "check-profile with -o" '-o/--output does not apply to check-profile' \
	check-profile -o "$tmp/x" "$vmlinux" "$tmp/kinds.prof"
usage_error "-o without its argument" "option '-o' needs an argument; try 'kbolt --help'" \
	profile-to-bolt "$tmp/kinds.prof" -o
out=$("$KBOLT" profile-t -o "$tmp/no/such/dir/out.bolt" "$tmp/kinds.prof" 2>&1); rc=$?
check_eq "an output in a missing directory: exit 1" 1 "$rc"
check_match "it names the file it could not create" \
	"^$tmp/no/such/dir/out.bolt: error: kbolt: cannot create a file in $tmp/no/such/dir: No such file or directory\$" "$out"
{ kbolt_head; echo "B ${a[f_add]} ${a[g]} 1 int"; } >"$tmp/int.prof"
out=$("$KBOLT" profile-to-bolt -o "$tmp/int.bolt" "$tmp/int.prof" 2>&1); rc=$?
check_eq "a profile of interrupts only: exit 1" 1 "$rc"
check_match "nothing to write" 'int.prof: error: kbolt: no records to write \(interrupts and samples are left out\)$' \
	"$out"
check_eq "no output and no temporary file are left" "" "$(ls "$tmp"/int.bolt* 2>/dev/null)"

# -- the real kernels: the beginning of the 6.1 proc profile (Documentation/profile-format.rst)
need_kernels
if [ "$have_kernels" = 1 ]; then
	cat >"$tmp/61.prof" <<EOF
# kbolt profile: exact kernel edges from the QEMU TCG plugin
kbolt-profile 1
build-id -
release -
recorder qemu-tcg
B ffffffff8100329f ffffffff810032a5 70768 call
B ffffffff810032a5 ffffffff810032ab 70768 call
B ffffffff810032b2 ffffffff8100329f 66345 jcc
F ffffffff810032b2 ffffffff810032b4 4423
B ffffffff810032c1 ffffffff8102f280 4423 jmp
B ffffffff8103ffff ffffffff81040009 392 jcc
F ffffffff819c606d ffffffff819c606f 5902
B ffffffff819c6077 ffffffff81c00be0 407 int
B ffffffff819c607a ffffffff8126eed9 3017 ret
EOF
	check "the 6.1 records convert" "$KBOLT" profile-to-bolt -o "$tmp/61.bolt" "$tmp/61.prof"
	check_eq "profile-format.rst shows the lines profile-to-bolt writes" \
		"$(sed -n '/^    B ffffffff8100329f ffffffff810032a5 70768 0$/,/^$/p' \
		   "$top/Documentation/profile-format.rst" | sed '/^$/d; s/^    //')" \
		"$(head -n 5 "$tmp/61.bolt")"
	out=$("$KBOLT" check-profile "$VMLINUX_61" "$tmp/61.bolt" 2>&1); rc=$?
	check_eq "they agree with the 6.1 kernel (exit 0)" 0 "$rc"
	check_match "every record is checked or patched" \
		'61.bolt: 8 records \(weight [0-9]+\): [0-9]+ agree with the code, [0-9]+ from sites patched at boot, 0 outside the image, 0 disagree' "$out"
	out=$("$KBOLT" check-profile "$VMLINUX_612" "$tmp/61.bolt" 2>&1); rc=$?
	check_eq "the 6.12 kernel refuses them (exit 1)" 1 "$rc"
	check_match "for the share that misses its instructions" \
		'61.bolt: error: kbolt: [0-9]+ of its 8 records in .* miss its instructions: ' "$out"
else
	skip "the 6.1 proc records in BOLT's format, on the 6.1 and 6.12 kernels" \
		"$no_kernels"
fi

done_testing
