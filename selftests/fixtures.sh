#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Unit tests of kmeta on miniature kernels assembled at test time (fixtures/tables.S):
# a linked "vmlinux" (tables found by __start_/__stop_ symbols, layouts chosen by the
# release in linux_banner) and the same object as an ET_REL "module" (tables found by
# section, relocations applied on read).  Planted violations must be found.
. "$(dirname "$0")/lib.sh"

fx=$top/selftests/fixtures
build() {	# build NAME RELEASE [CPP flags...] -> $tmp/NAME.o and $tmp/NAME.vmlinux
	local name=$1 rel=$2
	shift 2
	gcc -c -DRELEASE="\"$rel\"" "$@" -o "$tmp/$name.o" "$fx/tables.S" &&
		ld -q -T "$fx/vmlinux.lds" --no-warn-rwx-segments -o "$tmp/$name.vmlinux" "$tmp/$name.o"
}

build good 6.1.0-test || { fail "assemble the fixture"; done_testing; exit 1; }
build bad 6.1.0-test -DBAD_SMP_LOCK -DUNSORTED_EXTABLE
build moved 6.1.0-test -DOTHER_FIXUP
build old 5.10.0-test
build clang 6.1.0-test -DNOP_MCOUNT -DCS_RETURN
build mixed 6.1.0-test -DNOP_MCOUNT_A

for kind in vmlinux o; do
	f=$tmp/good.$kind
	what=$([ $kind = o ] && echo module || echo vmlinux)
	s=$("$KMETA" summary -j "$f")
	check_match "$what: summary names the release" '"release":"6.1.0-test"' "$s"
	count() { printf '%s' "$s" | /usr/bin/python3 -c "import json,sys; t=json.load(sys.stdin)['tables']['$1']; print(t['entries'], t['filler'])"; }
	check_eq "$what: alternatives: 1 entry" "1 0" "$(count alternatives)"
	check_eq "$what: smp_locks: 1 entry, 1 zero filler slot" "1 1" "$(count smp_locks)"
	check_eq "$what: ex_table: 2 entries" "2 0" "$(count ex_table)"
	check_eq "$what: return_sites: 2 entries" "2 0" "$(count return_sites)"
	check_eq "$what: orc absent" "0 0" "$(count orc)"
	check_eq "$what: alternative decoded" \
		"func_a+0x11 replacement=.altinstr_replacement+0x0 cpuid=X86_FEATURE_(9*32+20) instrlen=5 replacementlen=5" \
		"$("$KMETA" dump alternatives "$f")"
	check_eq "$what: ex_table decoded" \
		"func_a+0x8 fixup=func_a+0xb data=EX_TYPE_UACCESS
func_b+0x5 fixup=func_b+0x7 data=EX_TYPE_UACCESS" "$("$KMETA" dump ex_table "$f")"
	check_eq "$what: jump_table key and polarity decoded" \
		"func_a+0xd target=func_a+0x1b key=static_key_x|0x1" "$("$KMETA" dump jump_table "$f")"
	check_eq "$what: bug_table file, line and flags decoded" \
		"func_a+0xf file=fixture.c line=42 flags=WARNING" "$("$KMETA" dump bug_table "$f")"
	check_eq "$what: dump --func selects" "func_b+0x5 fixup=func_b+0x7 data=EX_TYPE_UACCESS" \
		"$("$KMETA" dump ex_table "$f" --func 'func_b*')"
	check "$what: kmeta check passes" "$KMETA" check "$f"
done

a=$("$KMETA" dump ex_table "$tmp/good.vmlinux" -j | /usr/bin/python3 -c \
	"import json,sys; print(json.load(sys.stdin)['entries'][0]['site_addr'])")
check_eq "dump --addr selects one site" "func_a+0x8 fixup=func_a+0xb data=EX_TYPE_UACCESS" \
	"$("$KMETA" dump ex_table "$tmp/good.vmlinux" --addr "$a")"

out=$("$KMETA" check "$tmp/bad.vmlinux" 2>/dev/null); rc=$?
check_eq "check fails on planted violations" 1 "$rc"
check_match "check: lock prefix violation located" \
	'bad.vmlinux: smp_locks: func_a\+0x5: no lock prefix' "$out"
check_match "check: unsorted ex_table found" 'ex_table: func_a\+0x8: table not sorted' "$out"
out=$("$KMETA" check -j "$tmp/bad.vmlinux")
check_match "check -j counts violations" '"nr_violations":2' "$out"

# Clang's forms: every fentry site a nop5 (objtool --mnop), a cs-prefixed return thunk jmp
check "fentry sites all nop5, a cs-prefixed return jmp: kmeta check passes" \
	"$KMETA" check "$tmp/clang.vmlinux"
check_eq "... the return site decoded at the prefix" "func_a+0x16
func_b+0x7" "$("$KMETA" dump return_sites "$tmp/clang.vmlinux")"
out=$("$KMETA" check "$tmp/mixed.vmlinux" 2>/dev/null); rc=$?
check_eq "one fentry site a nop5, the other a call: check fails" 1 "$rc"
check_match "... naming the nop5 (calls are as many: the build's form)" \
	'mixed.vmlinux: mcount_loc: func_a: expected call __fentry__ \(e8 rel32\): a nop5 makes ftrace_bug\(\) at boot' "$out"

out=$("$KMETA" diff "$tmp/good.vmlinux" "$tmp/moved.vmlinux"); rc=$?
check_eq "diff exits 1 when tables differ" 1 "$rc"
check_eq "diff shows the moved fixup" "ex_table: - func_a+0x8 fixup=func_a+0xb data=EX_TYPE_UACCESS
ex_table: + func_a+0x8 fixup=func_a+0xd data=EX_TYPE_UACCESS" "$out"
check "diff of an image with itself is empty" "$KMETA" diff "$tmp/good.vmlinux" "$tmp/good.o"
check_match "diff -j" '"nr_differences":2' "$("$KMETA" diff -j "$tmp/good.vmlinux" "$tmp/moved.vmlinux")"

out=$("$KMETA" summary "$tmp/old.vmlinux" 2>&1); rc=$?
check_eq "unknown kernel version: summary fails" 1 "$rc"
check_match "unknown layout names table and release" \
	"old.vmlinux: error: kmeta: alternatives: no known entry layout for kernel release '5.10.0-test'" "$out"

check_eq "unknown table: usage exit 2" 2 "$("$KMETA" dump nosuch "$tmp/good.o" >/dev/null 2>&1; echo $?)"
check_eq "unknown command: exit 2" 2 "$("$KMETA" frobnicate "$tmp/good.o" >/dev/null 2>&1; echo $?)"
check_eq "command prefix works" "$("$KMETA" summary "$tmp/good.o")" "$("$KMETA" su "$tmp/good.o")"
check_eq "--func outside dump: exit 2" 2 "$("$KMETA" check --func x "$tmp/good.o" >/dev/null 2>&1; echo $?)"
check_match "-j errors are JSON" '^\{"error":' "$("$KMETA" summary -j /nonexistent 2>/dev/null)"

xz -k -c "$tmp/good.o" > "$tmp/good.ko.xz"
zstd -q -c "$tmp/good.o" > "$tmp/good.ko.zst"
plain=$("$KMETA" dump ex_table "$tmp/good.o")
check_eq ".ko.xz reads like the module" "$plain" "$("$KMETA" dump ex_table "$tmp/good.ko.xz")"
check_eq ".ko.zst reads like the module" "$plain" "$("$KMETA" dump ex_table "$tmp/good.ko.zst")"
done_testing
