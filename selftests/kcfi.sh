#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kCFI's checks (Clang's CONFIG_CFI_CLANG), on the kCFI fixture (fixtures/kcfi.S): the
# check before an indirect call (movl $-hash,%r10d; addl -15(%r11),%r10d; je; ud2)
# and the call after it are one piece to the kernel, which decodes the check at a
# .kcfi_traps entry - 12, resumes at the call with cfi=warn, and finds the check at the
# call's .retpoline_sites entry - 14 for FineIBT.  kmeta check is clean, and names a
# trap whose check is not Clang's (-DBROKEN); kbolt leaves that function alone
# (table_entry).  Over random layouts every output verifies and passes kmeta check,
# kcfi_caller moves, and at each trap the check's 14 bytes are the old ones with the
# call, a retpoline site, right after them.  An image with kCFI preambles (__cfi_)
# pads every function with 16 bytes the kernel owns; Clang gives a function that is not
# address-taken 11 nops there, after the previous function's alignment int3s: no layout
# of that previous function (pad_grower) grows into the 16.  (Bytes read by objdump,
# entries by kmeta dump.)
. "$(dirname "$0")/lib.sh"

SEEDS=8
case "${OUT:-.build/default}" in *san*) SEEDS=4 ;; esac

need_fixture kcfi
fx=$tmp/kcfi
check_eq "kmeta check: the fixture is clean" "$fx: info: kmeta: 0 violations" \
	"$("$KMETA" check "$fx" 2>&1)"

# addr FILE ENTRY: the address of kmeta dump's func+0xoff in FILE
addr() {
	local f=${2%+*} off=${2#*+}
	printf '%x' $((0x$(nm "$1" | awk -v f="$f" '$3 == f { print $1 }') + off))
}
# bytes FILE ADDR N: N bytes at ADDR, in hex
bytes() {
	/usr/bin/python3 -c '
import sys
from elftools.elf.elffile import ELFFile
with open(sys.argv[1], "rb") as f:
    addr, n = int(sys.argv[2], 16), int(sys.argv[3])
    s = next(x for x in ELFFile(f).iter_sections() if x["sh_addr"] <= addr < x["sh_addr"] + x["sh_size"])
    f.seek(s["sh_offset"] + addr - s["sh_addr"])
    print(f.read(n).hex())' "$1" "$2" "$3"
}
# checks FILE: for each trap, the 14 bytes of its check and whether the call after it
# is a retpoline site ("yes"/"no"), a line each
checks() {
	local t a rs
	rs=$("$KMETA" dump retpoline_sites "$1" | while read -r r; do addr "$1" "$r"; echo; done)
	for t in $("$KMETA" dump kcfi_traps "$1"); do
		a=$(addr "$1" "$t")
		printf '%s %s\n' "$(bytes "$1" "$(printf '%x' $((0x$a - 12)))" 14)" \
			"$(grep -qx "$(printf '%x' $((0x$a + 2)))" <<<"$rs" && echo yes || echo no)"
	done
}
old=$(checks "$fx")
check_eq "the fixture's checks, each with its call after it" \
	"41ba88a9cbed450353f174020f0b yes
41ba88a9cbed450353f174020f0b yes" "$old"

pad=$(printf '%x' $((0x$(nm "$fx" | awk '$3 == "pad_next" { print $1 }') - 16)))
pad_bytes=$(bytes "$fx" "$pad" 16)
check_eq "the 16 bytes before pad_next: pad_grower's last int3s and 11 nops" \
	cccccccccc9090909090909090909090 "$pad_bytes"
moved=0 kept=0 owned=0 grown=0
random_layouts "$fx"
for s in $written; do
	o=$tmp/r.$s
	[ "$(bytes "$o" "$pad" 16)" = "$pad_bytes" ] && owned=$((owned + 1))
	[ "$(func_body "$o" pad_grower)" != "$(func_body "$fx" pad_grower)" ] && grown=$((grown + 1))
	[ "$(checks "$o")" = "$old" ] && kept=$((kept + 1))
	[ "$(func_body "$o" kcfi_caller)" != "$(func_body "$fx" kcfi_caller)" ] && moved=$((moved + 1))
done
check "... kcfi_caller moved in some ($moved)" [ "$moved" -gt 0 ]
check_eq "... in each, every check's 14 bytes the old ones, its call right after them" \
	"$SEEDS" "$kept"
check_eq "... in each, the 16 bytes the kernel owns before pad_next as they were (pad_grower moved in $grown)" \
	"$SEEDS" "$owned"

# a trap whose check is not Clang's: named by kmeta check, its function left alone
if fixture_variant kcfi "$tmp/broken" -DBROKEN; then
	out=$("$KMETA" check "$tmp/broken" 2>&1)
	check_match "a nop between the je and the ud2: kmeta check names the trap" \
		'kcfi_traps: kcfi_broken\+0x[0-9a-f]+: expected the kCFI check before the ud2' "$out"
	"$KBOLT" optimize "$tmp/broken" -o "$tmp/broken.out" --layout random --seed 1 --stats -j \
		>"$tmp/broken.json" 2>"$tmp/broken.err"
	check_eq "... kbolt leaves kcfi_broken alone (table_entry), and only it" "1" \
		"$(json_get "$tmp/broken.json" 'r["skipped"]["table_entry"]["functions"]')"
	check_eq "... kcfi_broken's bytes as they were" "$(func_body "$tmp/broken" kcfi_broken)" \
		"$(func_body "$tmp/broken.out" kcfi_broken)"
else
	fail "the BROKEN fixture assembled and linked"
fi
done_testing
