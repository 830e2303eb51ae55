#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Bad input gives one clear error naming the file (and the table where one is at fault)
# and exit 1, from kmeta summary and kmeta check alike: not an ELF file, an empty file,
# truncated ELF files (a small object, and the head of the real 6.1 vmlinux if fetched),
# a 32-bit object, stripped images, tables whose size is not a multiple of their entry
# size, a missing file, corrupt compressed modules.  And bad profiles for kbolt
# check-profile, in kbolt's and in BOLT's format: one error naming the file and the
# line.  Fixtures are built here, in $tmp.
. "$(dirname "$0")/lib.sh"
KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac

expect_error() {	# expect_error NAME FILE REGEX: both commands exit 1, one error, matching
	local name=$1 file=$2 re=$3 cmd rc
	for cmd in summary check; do
		"$KMETA" "$cmd" "$file" >"$tmp/out" 2>"$tmp/err"
		rc=$?
		check_eq "$name: $cmd exits 1" 1 "$rc"
		check_eq "$name: $cmd prints one message" 1 "$(grep -c '' "$tmp/err")"
		check_match "$name: $cmd names the file: $re" \
			"^$(re_quote "$file"): error: kmeta: ($re)\$" "$(cat "$tmp/err")"
	done
}

expect_ok() {	# expect_ok NAME FILE: the control case opens and checks clean
	check "$1: summary succeeds" "$KMETA" summary "$2"
	check "$1: check succeeds" "$KMETA" check "$2"
}

# A module, or with VMLINUX a vmlinux to link, with one smp_locks and one ex_table entry;
# ODD_SMP_LOCKS and ODD_EX_TABLE leave 2 and 1 stray bytes, BIG pads .text to BIG bytes
cat >"$tmp/fixture.S" <<'EOF'
	.text
	.globl	f
	.type	f, @function
f:
.Llock:
	lock incl x(%rip)
.Lload:
	movl	(%rdi), %eax
.Lfixup:
	ret
	.size	f, . - f
.ifdef BIG
	.fill	BIG, 1, 0xcc
.endif

	.section .smp_locks, "a"
__smp_locks:
	.long	.Llock - .
.ifdef ODD_SMP_LOCKS
	.short	0
.endif
__smp_locks_end:

	.section __ex_table, "a"
__start___ex_table:
	.long	.Lload - .
	.long	.Lfixup - .
	.long	3		/* EX_TYPE_UACCESS */
.ifdef ODD_EX_TABLE
	.byte	0
.endif
__stop___ex_table:

	.data
x:	.long	0

.ifdef VMLINUX
	.section .rodata, "a"
	.globl	linux_banner
	.type	linux_banner, @object
linux_banner:
	.asciz	"Linux version 6.1.0-test (bad-input) #1 SMP\n"
	.size	linux_banner, . - linux_banner
.else
	.section .modinfo, "a"
	.asciz	"vermagic=6.1.0-test SMP mod_unload modversions "
.endif
	.section .note.GNU-stack, "", @progbits
EOF

asm() {		# asm OUT [--defsym SYM=VAL...]: assemble the fixture
	local o=$1
	shift
	as --64 "$@" -o "$o" "$tmp/fixture.S"
}

link() {	# link OUT OBJ: a vmlinux at the kernel's address, a few KB (-n: no page padding)
	ld -n -e f -Ttext=0xffffffff81000000 --no-warn-rwx-segments -o "$1" "$2"
}

if ! asm "$tmp/good.o" || ! asm "$tmp/vm.o" --defsym VMLINUX=1 ||
   ! link "$tmp/vmlinux" "$tmp/vm.o"; then
	fail "assemble and link the fixture"
	done_testing
	exit 1
fi
expect_ok "control: the module" "$tmp/good.o"
expect_ok "control: the vmlinux" "$tmp/vmlinux"

# -- the kernel's BTF describes the entry: the layout is read from it (table.c), and a
# member kmeta does not know stops kmeta and kbolt in one line, nothing written
btf_vmlinux() {	# btf_vmlinux OUT MEMBERS: the fixture linked with BTF of that entry struct
	printf 'struct exception_table_entry { %s };\nstruct exception_table_entry seed_ex;\n' \
		"$2" >"$tmp/btf.c"
	gcc -c -gbtf -o "$tmp/btf.o" "$tmp/btf.c" && ld -n -e f -Ttext=0xffffffff81000000 \
		--no-warn-rwx-segments -o "$1" "$tmp/vm.o" "$tmp/btf.o"
}
if btf_vmlinux "$tmp/vm-btf" "int insn; int fixup; int data;" &&
   btf_vmlinux "$tmp/vm-btf-moved" "int fixup; int insn; int data;" &&
   btf_vmlinux "$tmp/vm-btf-new" "int insn; int fixup; int data; int mystery;"; then
	expect_ok "BTF as the kernel's" "$tmp/vm-btf"
	check_match "BTF as the kernel's: the known layout" '^ex_table +6\.1\+ ' \
		"$("$KMETA" summary "$tmp/vm-btf" 2>&1)"
	# insn and fixup swapped in BTF: the site is read at +4, where the fixture has fixup
	check_match "BTF with members moved: the layout read from it" '^ex_table +btf ' \
		"$("$KMETA" summary "$tmp/vm-btf-moved" 2>&1)"
	check_match "BTF with members moved: the site read where BTF puts insn" '^f\+0x[0-9a-f]+ fixup=f\+0x[0-9a-f]+ ' \
		"$("$KMETA" dump ex_table "$tmp/vm-btf-moved" 2>&1)"
	check_eq "BTF with members moved: insn is the fixture's fixup (f+0x9)" "f+0x9" \
		"$("$KMETA" dump ex_table "$tmp/vm-btf-moved" 2>&1 | cut -d' ' -f1)"
	expect_error "BTF member kmeta does not know" "$tmp/vm-btf-new" \
		"ex_table: struct exception_table_entry in the kernel's BTF \(16 bytes\) has member 'mystery' \(at \+12\), which kmeta does not know; see Documentation/tables\.rst"
else
	fail "gcc -gbtf links the fixture with BTF"
fi

# The 6.1 kernel whose BTF names bug_entry's member file_disp otherwise: kbolt stops too
if [ -s "$VMLINUX_61" ] && cp "$VMLINUX_61" "$tmp/vmlinux-btf" &&
   python3 - "$tmp/vmlinux-btf" <<'EOF'
import subprocess, sys
sec = [l.split() for l in subprocess.check_output(["readelf", "-SW", sys.argv[1]], text=True)
       .replace("[ ", "[").splitlines() if " .BTF " in l][0]
off, size = int(sec[4], 16), int(sec[5], 16)
with open(sys.argv[1], "r+b") as f:
    f.seek(off)
    btf = f.read(size)
    at = btf.index(b"\0file_disp\0")
    f.seek(off + at + 1)
    f.write(b"file_dis9")
EOF
then
	"$KBOLT" optimize "$tmp/vmlinux-btf" -o "$tmp/vmlinux-btf.out" --layout random --seed 1 \
		>"$tmp/out" 2>"$tmp/err"
	check_eq "6.1 with a BTF member renamed: kbolt optimize exits 1" 1 "$?"
	check_eq "6.1 with a BTF member renamed: kbolt names the struct and member in one line" \
		"$tmp/vmlinux-btf: error: kbolt: bug_table: struct bug_entry in the kernel's BTF (12 bytes) has no member 'file_disp'; see Documentation/tables.rst" \
		"$(cat "$tmp/err")"
	check "6.1 with a BTF member renamed: nothing written" test ! -e "$tmp/vmlinux-btf.out"
	rm -f "$tmp/vmlinux-btf"
else
	skip "6.1 with a BTF member renamed" "$no_kernels"
fi

# -- not an ELF file at all
printf 'This is not an ELF file.\n' >"$tmp/text.ko"
expect_error "text file" "$tmp/text.ko" "not an ELF file"
: >"$tmp/empty.ko"
expect_error "empty file" "$tmp/empty.ko" "not a regular, non-empty file"
expect_error "missing file" "$tmp/missing.ko" "No such file or directory"

# -- truncated: as puts the section headers at the end, and the object is ~130 KB
asm "$tmp/big.o" --defsym BIG=131072
head -c 4096 "$tmp/big.o" >"$tmp/big-4k.o"
head -c 65536 "$tmp/big.o" >"$tmp/big-64k.o"
head -c 40 "$tmp/big.o" >"$tmp/big-40.o"
check_match "the object to truncate is over 64 KiB" '^[0-9]{6,}$' "$(stat -c %s "$tmp/big.o")"
expect_error "object truncated to 4 KiB" "$tmp/big-4k.o" "truncated: its section headers end at byte [0-9]+, but the file has [0-9]+ bytes"
expect_error "object truncated to 64 KiB" "$tmp/big-64k.o" "truncated: its section headers end at byte [0-9]+, but the file has [0-9]+ bytes"
expect_error "object truncated inside the ELF header" "$tmp/big-40.o" \
	"truncated: 40 bytes, less than an ELF header"
if [ -s "$VMLINUX_61" ]; then
	head -c $((4 << 20)) "$VMLINUX_61" >"$tmp/vmlinux-4m"
	expect_error "6.1 vmlinux truncated to 4 MiB" "$tmp/vmlinux-4m" "truncated: its section headers end at byte [0-9]+, but the file has [0-9]+ bytes"
else
	skip "6.1 vmlinux truncated to 4 MiB" "$no_kernels"
fi

# -- not what kmeta models
printf '\t.text\n\tnop\n\tret\n' >"$tmp/x32.S"
if as --32 -o "$tmp/x32.o" "$tmp/x32.S"; then
	expect_error "32-bit object" "$tmp/x32.o" \
		"not a 64-bit ELF file \\(kmeta handles x86-64 kernels only\\)"
else
	fail "as --32 assembles a 32-bit object"
fi
strip -o "$tmp/vmlinux-strip" "$tmp/vmlinux"
objcopy --strip-all "$tmp/vmlinux" "$tmp/vmlinux-strip-all"
for f in vmlinux-strip vmlinux-strip-all; do
	expect_error "stripped vmlinux ($f)" "$tmp/$f" "no symbol table \\(a stripped image\\?\\).*"
done

# -- a table that is not a whole number of entries, found by section and by symbols
asm "$tmp/odd-locks.o" --defsym ODD_SMP_LOCKS=1
expect_error "module with a 6-byte .smp_locks" "$tmp/odd-locks.o" \
	"smp_locks: \\.smp_locks is 6 bytes, not a multiple of the 4-byte entry"
asm "$tmp/odd-ex.o" --defsym ODD_EX_TABLE=1
expect_error "module with a 13-byte __ex_table" "$tmp/odd-ex.o" \
	"ex_table: __ex_table is 13 bytes, not a multiple of the 12-byte entry"
asm "$tmp/odd-vm.o" --defsym VMLINUX=1 --defsym ODD_SMP_LOCKS=1 &&
	link "$tmp/vmlinux-odd-locks" "$tmp/odd-vm.o"
expect_error "vmlinux with 6 bytes between __smp_locks and __smp_locks_end" \
	"$tmp/vmlinux-odd-locks" \
	"smp_locks: __smp_locks is 6 bytes, not a multiple of the 4-byte entry"

# -- compressed modules: intact (control), corrupt in the middle, cut short
xz -c "$tmp/good.o" >"$tmp/good.ko.xz"
expect_ok "control: the module as .ko.xz" "$tmp/good.ko.xz"
cp "$tmp/good.ko.xz" "$tmp/corrupt.ko.xz"
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' |
	dd of="$tmp/corrupt.ko.xz" bs=1 seek=200 conv=notrunc 2>/dev/null
expect_error "corrupt .ko.xz" "$tmp/corrupt.ko.xz" "xz: corrupt or truncated data.*"
head -c 300 "$tmp/good.ko.xz" >"$tmp/short.ko.xz"
expect_error "truncated .ko.xz" "$tmp/short.ko.xz" "xz: corrupt or truncated data.*"
cp "$tmp/text.ko" "$tmp/text.ko.xz"
expect_error "text file named .ko.xz" "$tmp/text.ko.xz" "xz: corrupt or truncated data.*"
zstd -q -c "$tmp/good.o" >"$tmp/good.ko.zst"
cp "$tmp/good.ko.zst" "$tmp/corrupt.ko.zst"
printf '\xde\xad\xbe\xef\xde\xad\xbe\xef' |
	dd of="$tmp/corrupt.ko.zst" bs=1 seek=100 conv=notrunc 2>/dev/null
expect_error "corrupt .ko.zst" "$tmp/corrupt.ko.zst" "zstd: .*"

# -- profiles: kbolt check-profile exits 1 with one message naming the profile and line
expect_prof_error() {	# expect_prof_error NAME FILE REGEX
	local name=$1 file=$2 re=$3 rc
	"$KBOLT" check-profile "$tmp/vmlinux" "$file" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check_eq "$name: check-profile exits 1" 1 "$rc"
	check_eq "$name: one message" 1 "$(grep -c '' "$tmp/err")"
	check_match "$name: names the file: $re" "^$(re_quote "$file"): error: kbolt: ($re)\$" \
		"$(cat "$tmp/err")"
}
good=ffffffff81000000	# f's first instruction
printf 'B %s %s 1 0\nF %s\n' $good $good $good >"$tmp/short-line.bolt"
expect_prof_error "BOLT F record missing fields" "$tmp/short-line.bolt" \
	"line 2: malformed: want F\\|f START END COUNT: F $good"
printf 'B %s %s 1 0\nB %s 0x%s 1 0\n' $good $good $good $good >"$tmp/0x.bolt"
expect_prof_error "BOLT address with 0x" "$tmp/0x.bolt" \
	"line 2: malformed: want B FROM TO COUNT MISPREDS: B $good 0x$good 1 0"
printf 'F %s %s 1\n%s\n' $good $good 'garbage, not a record' >"$tmp/garbage.bolt"
expect_prof_error "BOLT garbage line" "$tmp/garbage.bolt" \
	"line 2: not a B, F, f or E record: garbage, not a record"
printf 'F %s %s 1\n\nF %s %s 1\n' $good $good $good $good >"$tmp/empty-line.bolt"
expect_prof_error "BOLT empty line" "$tmp/empty-line.bolt" "line 2: not a B, F, f or E record: "
printf 'E cycles\nB 0123abcd:%s %s 1 0\n' $good $good >"$tmp/buildid.bolt"
expect_prof_error "BOLT buildid:offset location" "$tmp/buildid.bolt" \
	"line 2: a BUILDID:OFFSET location \\(kbolt reads kernel addresses only\\): B 0123abcd:$good $good 1 0"
printf 'B %s %s 1 0\nB %s ffffffff8100' $good $good $good >"$tmp/truncated.bolt"
expect_prof_error "BOLT file cut in a line" "$tmp/truncated.bolt" \
	"line 2: truncated \\(no newline at the end\\)"
{ printf 'B %s %s 1 0\nB ' $good $good; head -c 600 /dev/zero | tr '\0' 1; echo; } >"$tmp/long.bolt"
expect_prof_error "BOLT line of 602 characters" "$tmp/long.bolt" "line 2: line too long"
printf 'B %s %s 99999999999999999999 0\n' $good $good >"$tmp/big.bolt"
expect_prof_error "BOLT count over 2^63" "$tmp/big.bolt" \
	"line 1: malformed: want B FROM TO COUNT MISPREDS: .*"
printf 'E cycles\n' >"$tmp/no-records.bolt"
expect_prof_error "BOLT profile without records" "$tmp/no-records.bolt" \
	"no records: nothing was recorded"
printf 'kbolt-profile 1\nbuild-id -\nF %s %s 1' $good $good >"$tmp/truncated.prof"
expect_prof_error "kbolt profile cut in a line" "$tmp/truncated.prof" \
	"line 3: truncated \\(no newline at the end\\)"

# -- kbolt optimize and verify: usage errors exit 2, bad images exit 1, nothing written
expect_usage() {	# expect_usage NAME REGEX ARGS...
	local name=$1 re=$2 rc
	shift 2
	"$KBOLT" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check_eq "$name: exits 2" 2 "$rc"
	check_match "$name: says why: $re" "$re" "$(cat "$tmp/err")"
}
expect_usage "optimize without -o" "usage: kbolt optimize" optimize "$tmp/vmlinux" --layout random
expect_usage "optimize --layout fast" "--layout takes profile, greedy or random, not 'fast'" \
	optimize "$tmp/vmlinux" -o "$tmp/o" --layout fast
expect_usage "optimize --seed x1" "--seed takes a number, not 'x1'" \
	optimize "$tmp/vmlinux" -o "$tmp/o" --layout random --seed x1
expect_usage "optimize with neither a profile nor a layout" "give --layout random --seed N" \
	optimize "$tmp/vmlinux" -o "$tmp/o"
expect_usage "optimize --layout profile without a profile" "--layout profile needs --profile" \
	optimize "$tmp/vmlinux" -o "$tmp/o" --layout profile
expect_usage "optimize --layout greedy without a profile" "--layout greedy needs --profile" \
	optimize "$tmp/vmlinux" -o "$tmp/o" --layout greedy
expect_usage "verify with one file" "usage: kbolt verify" verify "$tmp/vmlinux"
expect_optimize_error() {	# expect_optimize_error NAME FILE REGEX
	local name=$1 file=$2 re=$3 rc
	"$KBOLT" optimize "$file" -o "$tmp/o" --layout random --seed 1 >"$tmp/out" 2>"$tmp/err"
	rc=$?
	check_eq "$name: optimize exits 1" 1 "$rc"
	check_match "$name: names the file: $re" "^$(re_quote "$file"): error: kbolt: ($re)\$" \
		"$(cat "$tmp/err")"
	check "$name: writes nothing" test ! -e "$tmp/o"
}
expect_optimize_error "a module" "$tmp/good.o" "a module: kbolt rewrites a linked vmlinux"
# without .rela.text it is not refused for that (no-relocations mode), but for its ORC
expect_optimize_error "a vmlinux without an ORC table" "$tmp/vmlinux" "no ORC table .*"
expect_optimize_error "a text file" "$tmp/text.ko" "not an ELF file"
head -c 4096 "$tmp/vmlinux" >"$tmp/cut"
"$KBOLT" verify "$tmp/vmlinux" "$tmp/cut" >"$tmp/out" 2>"$tmp/err"
check_eq "verify of a truncated output exits 1" 1 "$?"
check_match "... naming it" "^$(re_quote "$tmp/cut"): error: kbolt: truncated" "$(cat "$tmp/err")"

done_testing
