#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kbolt as a step of the kernel's own build (kbuild/, scripts/kbuild-apply,
# Documentation/kbuild.rst), in the lab's 6.1 and 6.12 trees, which scripts/build-kernel
# builds with the series applied and CONFIG_KBOLT=y:
# - kbuild-apply: each series applies to a pristine tree, twice is once, and another
#   version or a tree that differs is refused, untouched;
# - "make kbolt KBOLT_PROFILE=" with a profile of the tree's own kernel: a bzImage that
#   boots relocated and passes every workload, with a module of the tree loaded; the
#   link's System.map, kallsyms, .BTF and Module.symvers unchanged; no ORC room missing;
# - a second run does nothing, a new profile redoes only kbolt and the boot image, the
#   same profile gives the same bytes, from the same link and from the kernel linked
#   again;
# - three random layouts (KBOLT_LAYOUT=random) boot, each the kernel kbolt made (the
#   guest's build-id), the first's DWARF proven (the default --update-debug): on 6.12,
#   whose postlink strips the .rela sections verify needs, on the step's own command
#   run again without the postlink, whose output stripped is vmlinux byte for byte;
# - later makes keep kbolt's vmlinux: a plain "make" after "make kbolt" (the kernel
#   linked again: kbolt again, the same bytes), "make KBOLT_PROFILE=" is the copy, a
#   new kbolt --version redoes the step; CONFIG_KBOLT_PROFILE, then Fedora's order
#   (the image, then "make modules" without the variable, then the install): the
#   installed debug vmlinux's build-id is the booted kernel's;
# - make bindeb-pkg with CONFIG_KBOLT_PROFILE (Debian's order): the packaged kernel
#   boots, and its build-id is the -dbg vmlinux's;
# - make binrpm-pkg: kbolt makes the vmlinux, the packaged kernel boots, its build-id
#   is the optimized vmlinux's;
# - bad input stops the build with one line: a profile of another kernel, a layout
#   that rewrites nothing (--require-rewrite), a missing profile or kbolt, a tree
#   without ORC or without relocations.
# The lab-tree part runs on the trees of LAB_VERSIONS (lib.sh: CI's sample is 6.12;
# scripts/lab-matrix runs 6.1 and 6.12); a variant such as 6.12-clang is made with the
# make variables its build was (LLVM=-19: out/make-vars).
. "$(dirname "$0")/lib.sh"

case "${OUT:-.build/default}" in
*san*)
	skip "kbolt in the kernel's build" "it exercises kernel builds, not the sanitized binaries (run once, in the normal pass)"
	done_testing
	exit 0 ;;
esac
VMTEST=$top/scripts/vmtest
KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
# as scripts/build-kernel builds the trees (scripts/kernels.conf)
lab_build_env

# --- kbuild-apply, on the files each series touches, from the pristine source ---
for ver in 6.1 6.12 7.3; do
	tarball=$(source_tarball "$ver")
	[ -r "$tarball" ] || { skip "kbuild-apply $ver" "$tarball missing"; continue; }
	# a context line of the first patch of the link's step, changed: the series must
	# not fit (6.15 and later link vmlinux.unstripped upstream; 7.3's step is 0004)
	case $ver in
	6.*) changed='s/^vmlinux: scripts\/link-vmlinux.sh/vmlinux:  scripts\/link-vmlinux.sh/'
	     changed_patch=0001-kbuild-link-vmlinux ;;
	*) changed='s/^vmlinux: $(vmlinux-relocated) FORCE/vmlinux:  $(vmlinux-relocated) FORCE/;s/^vmlinux: vmlinux.unstripped FORCE/vmlinux:  vmlinux.unstripped FORCE/'
	   changed_patch=0004-kbuild-with-CONFIG_KBOLT ;;
	esac
	t=$tmp/apply-$ver
	mkdir -p "$t"
	files=$(sed -n 's|^--- a/||p' "$top/kbuild/$ver"/*.patch | sort -u | sed "s|^|linux-source-$ver/|")
	tar -xJf "$tarball" -C "$t" linux-source-$ver/Makefile $files 2>/dev/null
	tree=$t/linux-source-$ver
	cp -a "$tree" "$t/pristine"
	out=$("$top/scripts/kbuild-apply" "$tree" 2>&1); rc=$?
	check_eq "kbuild-apply $ver: the series applies (exit 0)" 0 "$rc"
	n=$(grep -vc '^#' "$top/kbuild/$ver/series")
	check_match "... saying so" "applied the kbolt series for $ver \\($n patches\\)" "$out"
	check "... scripts/Makefile.kbolt is in the tree" test -f "$tree/scripts/Makefile.kbolt"
	out=$("$top/scripts/kbuild-apply" "$tree" 2>&1); rc=$?
	check_eq "kbuild-apply $ver twice: exit 0" 0 "$rc"
	check_match "... applied already" 'is applied already$' "$out"
	cp -a "$t/pristine" "$t/other"
	sed -i 's/^VERSION = .*/VERSION = 6/; s/^PATCHLEVEL = .*/PATCHLEVEL = 5/' "$t/other/Makefile"
	out=$("$top/scripts/kbuild-apply" "$t/other" 2>&1); rc=$?
	check_eq "kbuild-apply on a 6.5 tree: exit 1" 1 "$rc"
	check_match "... one line naming what it found and what it knows" \
		'^kbuild-apply: .*: Linux 6\.5\.[0-9]+: no kbolt series for 6\.5\.[0-9]+ \(there are: 6\.1 6\.12 7\.3\)$' "$out"
	cp -a "$t/pristine" "$t/changed"
	sed -i "$changed" "$t/changed/scripts/Makefile.vmlinux"
	cp -a "$t/changed" "$t/changed.before"
	out=$("$top/scripts/kbuild-apply" "$t/changed" 2>&1); rc=$?
	check_eq "kbuild-apply on a tree the series does not fit: exit 1" 1 "$rc"
	check_match "... naming the patch" "^kbuild-apply: .*: $changed_patch.*does not apply" "$out"
	check "... the tree untouched" diff -r "$t/changed.before" "$t/changed"
	# no fuzz: a context line changed three lines from the change, which GNU patch's
	# default fuzz would let through
	cp -a "$t/pristine" "$t/fuzzy"
	sed -i 's/^\$(BOOT_TARGETS): vmlinux$/$(BOOT_TARGETS):  vmlinux/' "$t/fuzzy/arch/x86/Makefile"
	cp -a "$t/fuzzy" "$t/fuzzy.before"
	p6=$(grep -l '^+kbolt: bzImage' "$top/kbuild/$ver"/*.patch)
	check_match "... (a tree GNU patch takes with fuzz 1)" 'with fuzz 1' \
		"$(cd "$t/fuzzy.before" && patch --dry-run -p1 <"$p6" 2>&1)"
	out=$("$top/scripts/kbuild-apply" "$t/fuzzy" 2>&1); rc=$?
	check_eq "kbuild-apply $ver on a tree the series fits only with fuzz: exit 1" 1 "$rc"
	check_match "... naming the patch" "^kbuild-apply: .*: the kbolt series for $ver \\(made on $ver\\.[0-9]+\\) does not fit: $(basename "$p6") does not apply with no fuzz" "$out"
	check "... the tree untouched" diff -r "$t/fuzzy.before" "$t/fuzzy"
	# the series chosen by the full version: one for this very release stands before
	# the one of its line; a git work tree is patched with git apply, no .orig left
	mkdir -p "$t/inst/kbuild"
	cp "$top/scripts/kbuild-apply" "$t/inst/" && cp -r "$top/kbuild/$ver" "$t/inst/kbuild/"
	cp -r "$top/kbuild/$ver" "$t/inst/kbuild/$ver.0"
	sed -i 's/^SUBLEVEL = .*/SUBLEVEL = 0/' "$t/pristine/Makefile"
	cp -a "$t/pristine" "$t/git" && (cd "$t/git" && git init -q && git add -f -A . &&
		git -c user.name=t -c user.email=t@t commit -q -m t)
	out=$("$t/inst/kbuild-apply" "$t/git" 2>&1); rc=$?
	check_eq "kbuild-apply $ver on Linux $ver.0, with a series for $ver.0 beside the one for $ver: exit 0" 0 "$rc"
	check_match "... the series for $ver.0 chosen" "applied the kbolt series for $ver\\.0 \\(" "$out"
	check_eq "... in a git work tree: what git apply changed, no .orig or .rej" "" \
		"$(cd "$t/git" && git status --short --ignored | grep -E '\.(orig|rej)$')"
	cp -a "$tree" "$t/patched" && sed -i 's/^SUBLEVEL = .*/SUBLEVEL = 0/' "$t/patched/Makefile"
	check "... the same tree as patch makes" diff -r --exclude=.git "$t/git" "$t/patched"
done
out=$("$top/scripts/kbuild-apply" 2>&1); rc=$?
check_eq "kbuild-apply without a tree: usage, exit 2" 2 "$rc"

# --- the lab trees ---
# The kernel's make runs as from a shell, not with make check's flags: their -s would
# silence the "  KBOLT   vmlinux" lines checked below.
unset MAKEFLAGS MFLAGS MAKELEVEL
mk() {	# mk LOGFILE MAKE-ARGS...: make in the lab tree of $ver, output to LOGFILE
	local log=$1
	shift
	# shellcheck disable=SC2086 # make_vars: words (LLVM=-19)
	make -C "$src" O="$obj" KBOLT="$KBOLT" $make_vars -j"$(nproc)" "$@" >"$log" 2>&1
}
# check_packaged IMAGE WHAT VMLINUX NAME: the kernel a package made, IMAGE (WHAT in the
# test names), is VMLINUX (NAME), the optimized one: it carries .note.kbolt, and IMAGE
# boots relocated, passes proc and reports VMLINUX's build-id
check_packaged() {
	check "... $4 carries .note.kbolt" sh -c "readelf -SW '$3' | grep -q '\.note\.kbolt'"
	vm_boot "... $2 boots relocated, proc passes" --kernel "$1" --kaslr --workload proc
	check_relocated "... at a randomized address" "$3"
	check_booted "... the guest's build-id is $4's" "$3"
}
sha() { sha256sum "$1" | cut -c1-16; }
# check_booted NAME VMLINUX: the kernel vm_boot just booted is VMLINUX (its build-id,
# from /sys/kernel/notes in the guest)
check_booted() {
	check_eq "$1" "$(build_id "$2")" \
		"$(sed -n 's/^kbolt-lab: build-id //p' "$tmp/console" | tr -d '\r')"
}
# saved_cmd: the command Kbuild saved for kbolt's target (.$kt.cmd; 6.1 names it cmd_vmlinux)
saved_cmd() { sed -n "s/^savedcmd_$kt := //p; s/^cmd_$kt := //p" "$obj/.$kt.cmd"; }
# check_step_dwarf NAME: the DWARF of the image the kbolt step made, proven.  verify
# needs the .rela sections on both sides, and 6.12's postlink strips them from vmlinux:
# so the step's command (.vmlinux.cmd) is run again without the postlink, its output
# (with the .rela sections stripped as the postlink strips them, where vmlinux lacks
# them) must be vmlinux byte for byte, and verify --debug-info proves that output.
# 7.3's vmlinux.kbolt keeps them: the command's output must be it.
check_step_dwarf() {
	local cmd pre=$tmp/step.out
	cmd=$(saved_cmd |
		sed "s/.*; : kbolt [^;]*; //; s/ && .*//; s/ *\$//; s/ -o $kt\$//")
	check_match "$1: the step's command saved" '^[^ ]*kbolt optimize .*vmlinux\.unstripped$' "$cmd"
	(cd "$obj" && eval "$cmd -o '$pre'") >"$tmp/step.log" 2>&1
	if ! readelf -S "$kout" | grep -q ' \.rela\.text '; then
		"$(tree_objcopy)" --remove-section='.rel.*' --remove-section='.rel__*' \
			--remove-section='.rela.*' --remove-section='.rela__*' "$pre" "$pre.stripped"
		check "... run again without the postlink, stripped as the postlink does: vmlinux" \
			cmp "$pre.stripped" "$obj/vmlinux"
	else
		check "... run again: $kt" cmp "$pre" "$kout"
	fi
	check_match "... verify --debug-info proves it" \
		'debug info of [0-9]+ instructions in [0-9]+ functions compared: verified$' \
		"$("$KBOLT" verify --debug-info "$obj/vmlinux.unstripped" "$pre" 2>&1)"
	rm -f "$pre" "$pre.stripped"
}
# tree_objcopy: the objcopy the tree's make runs, LLVM's with LLVM= (Kbuild's forms:
# LLVM=1, LLVM=-19, LLVM=/path/), else binutils'
tree_objcopy() {
	local v
	for v in $make_vars; do
		case $v in
		LLVM=1) echo llvm-objcopy; return ;;
		LLVM=-*) echo "llvm-objcopy${v#LLVM=}"; return ;;
		LLVM=*/) echo "${v#LLVM=}llvm-objcopy"; return ;;
		esac
	done
	echo objcopy
}
# set_config_profile FILE: CONFIG_KBOLT_PROFILE of the lab tree ("" unsets it)
set_config_profile() {
	"$src/scripts/config" --file "$obj/.config" --set-str KBOLT_PROFILE "$1"
	# shellcheck disable=SC2086
	make -C "$src" O="$obj" $make_vars olddefconfig >/dev/null 2>&1
}
# steps_of_vmlinux LOG: the steps of kbolt's target LOG shows, KBOLT or COPY
steps_of_vmlinux() { grep -oE "^  (KBOLT|COPY) +${kt//./\\.}\$" "$1" | awk '{print $1}' | tr '\n' ' '; }
# later_makes: what a make after "make kbolt" does to kbolt's vmlinux (the last random
# layout's, seed 3, is in the tree)
later_makes() {
	local id b
	id=$(build_id "$obj/vmlinux") b=$(sha "$obj/arch/x86/boot/bzImage")
	mk "$tmp/plain.log"; rc=$?
	check_eq "$ver: a plain make after make kbolt: exit 0, vmlinux not made again" "0 " \
		"$rc $(steps_of_vmlinux "$tmp/plain.log")"
	check_eq "... vmlinux's build-id and the bzImage kbolt's still" "$id $b" \
		"$(build_id "$obj/vmlinux") $(sha "$obj/arch/x86/boot/bzImage")"
	touch "$obj/vmlinux.unstripped"
	mk "$tmp/plain.log" bzImage; rc=$?
	check_eq "... the kernel linked again (a newer vmlinux.unstripped): kbolt runs again" "0 KBOLT " \
		"$rc $(steps_of_vmlinux "$tmp/plain.log")"
	check_eq "... with the options it had: the same vmlinux" "$id" "$(build_id "$obj/vmlinux")"
	mk "$tmp/plain.log" bzImage KBOLT_PROFILE=; rc=$?
	check_eq "... make KBOLT_PROFILE= (empty): the copy of the link" "0 COPY " \
		"$rc $(steps_of_vmlinux "$tmp/plain.log")"
	check_eq "... vmlinux's code is the link's" "$(section_bytes "$obj/vmlinux.unstripped" .text)" \
		"$(section_bytes "$obj/vmlinux" .text)"

	# kbolt's version is part of the command: a wrapper that reports another
	printf '#!/bin/sh\n[ "$1" = --version ] && [ -n "$KBOLT_TEST_VERSION" ] && { echo "$KBOLT_TEST_VERSION"; exit 0; }\nexec %s "$@"\n' \
		"$KBOLT" >"$tmp/kbolt-wrap" && chmod +x "$tmp/kbolt-wrap"
	mk "$tmp/v1.log" kbolt KBOLT="$tmp/kbolt-wrap" KBOLT_PROFILE="$prof2"
	mk "$tmp/v2.log" kbolt KBOLT="$tmp/kbolt-wrap" KBOLT_PROFILE="$prof2"
	KBOLT_TEST_VERSION="kbolt 0.1-next" mk "$tmp/v3.log" kbolt KBOLT="$tmp/kbolt-wrap" KBOLT_PROFILE="$prof2"
	check_eq "$ver: make kbolt twice, then with a kbolt of another --version: kbolt ran first and last" \
		"KBOLT | | KBOLT " "$(steps_of_vmlinux "$tmp/v1.log")| $(steps_of_vmlinux "$tmp/v2.log")| $(steps_of_vmlinux "$tmp/v3.log")"

	# Fedora's order: the image with the profile, then make modules in a make of its
	# own, without it, then the install of the modules and of the debug vmlinux
	mk "$tmp/fedora-image.log" bzImage KBOLT_PROFILE="$prof2"; rc=$?
	check_eq "$ver: Fedora's order: make bzImage KBOLT_PROFILE=: exit 0, kbolt made vmlinux" "0 KBOLT " \
		"$rc $(steps_of_vmlinux "$tmp/fedora-image.log")"
	id=$(build_id "$obj/vmlinux")
	mk "$tmp/fedora-modules.log" modules; rc=$?
	check_eq "... then make modules without the variable: exit 0, vmlinux not made again" "0 " \
		"$rc $(steps_of_vmlinux "$tmp/fedora-modules.log")"
	rm -rf "$tmp/fedora-root"
	mk "$tmp/fedora-install.log" modules_install INSTALL_MOD_PATH="$tmp/fedora-root"; rc=$?
	krel=$(cat "$obj/include/config/kernel.release")
	mkdir -p "$tmp/fedora-root/usr/lib/debug/lib/modules/$krel"
	cp "$obj/vmlinux" "$tmp/fedora-root/usr/lib/debug/lib/modules/$krel/vmlinux"
	check_eq "... then make modules_install: exit 0, vmlinux not made again" "0 " \
		"$rc $(steps_of_vmlinux "$tmp/fedora-install.log")"
	vm_boot "... the image boots relocated, proc passes" \
		--kernel "$obj/arch/x86/boot/bzImage" --kaslr --workload proc
	check_booted "... the installed debug vmlinux is the booted kernel (build-id)" \
		"$tmp/fedora-root/usr/lib/debug/lib/modules/$krel/vmlinux"
	check_eq "... which is kbolt's, made by the image's make" "$id" \
		"$(build_id "$tmp/fedora-root/usr/lib/debug/lib/modules/$krel/vmlinux")"

	# the profile in the configuration (another name of the same profile, so that the
	# command changes): every make that makes vmlinux uses it
	cp "$prof2" "$tmp/config.prof"
	set_config_profile "$tmp/config.prof"
	mk "$tmp/config.log" bzImage; rc=$?
	check_eq "$ver: CONFIG_KBOLT_PROFILE set, make bzImage: exit 0, kbolt made vmlinux" "0 KBOLT " \
		"$rc $(steps_of_vmlinux "$tmp/config.log")"
	check_match "... with the configured profile" "--profile $tmp/config.prof " \
		"$(saved_cmd)"
	mk "$tmp/config.log" modules; rc=$?
	check_eq "... then make modules: exit 0, vmlinux not made again" "0 " \
		"$rc $(steps_of_vmlinux "$tmp/config.log")"
	rm -f "$tmp/config.prof"
	mk "$tmp/config.log" modules; rc=$?
	check "... a configured profile that is missing stops the build" test "$rc" -ne 0
	check_match "... one line naming it" "^kbolt: CONFIG_KBOLT_PROFILE=$tmp/config.prof: no such file" \
		"$(cat "$tmp/config.log")"
	set_config_profile ""
	rm -rf "$tmp/fedora-root"
}
# the bytes of section $2 of ELF file $1
section_bytes() { objcopy -O binary --only-section="$2" "$1" "$tmp/sec" 2>/dev/null && sha "$tmp/sec"; }
# the bytes of every kallsyms_* object of ELF file $1, by its symbol's value and size
kallsyms_bytes() {
	/usr/bin/python3 - "$1" <<'EOF' | sha256sum | cut -c1-16
import sys
from elftools.elf.elffile import ELFFile
with open(sys.argv[1], 'rb') as f:
    elf = ELFFile(f)
    syms = sorted((s.name, s['st_value'], s['st_size']) for s in elf.get_section_by_name('.symtab').iter_symbols()
                  if s.name.startswith('kallsyms_') and s['st_size'])
    for name, addr, size in syms:
        sec = next(x for x in elf.iter_sections() if x['sh_addr'] <= addr < x['sh_addr'] + x['sh_size'])
        f.seek(sec['sh_offset'] + addr - sec['sh_addr'])
        sys.stdout.write('%s %s\n' % (name, f.read(size).hex()))
    print(len(syms))
EOF
}
build_id() { readelf -n "$1" | sed -n 's/.*Build ID: *//p' | head -n 1; }

for ver in $LAB_VERSIONS; do
	if ! out=$(build_lab_kernel "$ver" "$tmp/build.log"); then
		fail "$ver: the lab kernel builds" "$(tail -n 20 "$tmp/build.log")"
		continue
	fi
	root=$KBOLT_CACHE/build/$ver
	src=$root/linux-source-$(lab_base "$ver") obj=$root/obj
	make_vars=$(cat "$out/make-vars" 2>/dev/null || true)
	# kbolt's target: vmlinux up to 6.14; from 6.15 (kbuild/7.3) vmlinux.kbolt, which
	# keeps the relocations, and vmlinux and the boot image's relocation table are made
	# from it
	case $ver in 6.*) kt=vmlinux ;; *) kt=vmlinux.kbolt ;; esac
	kout=$obj/$kt
	check "$ver: CONFIG_KBOLT=y in the lab tree" grep -qx CONFIG_KBOLT=y "$obj/.config"
	# the tree as build-kernel left it: vmlinux a copy of the link
	mk "$tmp/restore.log" bzImage KBOLT_PROFILE=
	if ! prof=$("$top/scripts/cached-profile" "$obj/vmlinux.unstripped" proc 2>"$tmp/prof.log"); then
		fail "$ver: the proc profile of the tree's kernel recorded" "$(tail -n 5 "$tmp/prof.log")"
		continue
	fi

	# ORC room: the spare slots CONFIG_KBOLT_ORC_SPARE reserved
	"$KBOLT" optimize "$obj/vmlinux.unstripped" --layout random --seed 1 --stats -j \
		-o "$tmp/rand" >"$tmp/stats.json" 2>&1
	nr=$(json_get "$tmp/stats.json" "r['skipped']['orc_full']['functions']" 2>/dev/null || echo '?')
	check_eq "$ver: random layout, no function put back for ORC room" 0 "$nr"
	rm -f "$tmp/rand"

	rm -rf "$tmp/mod" && cp -r "$top/selftests/fixtures/module" "$tmp/mod"
	# Module.symvers, the exports an external module links against, comes with "modules"
	if mk "$tmp/mod.log" modules && make -C "$src" O="$obj" $make_vars M="$tmp/mod" modules >>"$tmp/mod.log" 2>&1; then
		ok "$ver: a module built against the tree"
	else
		fail "$ver: a module built against the tree" "$(tail -n 10 "$tmp/mod.log")"
	fi
	# make kbolt with the profile
	sums_before=$(sha "$obj/Module.symvers")
	start=$SECONDS
	mk "$tmp/kbolt.log" kbolt KBOLT_PROFILE="$prof"; rc=$?
	check_eq "$ver: make kbolt KBOLT_PROFILE=proc: exit 0 ($((SECONDS - start)) s)" 0 "$rc"
	check_match "... kbolt made $kt" "^  KBOLT   ${kt//./\\.}\$" "$(cat "$tmp/kbolt.log")"
	check "... vmlinux carries .note.kbolt" sh -c "readelf -SW '$obj/vmlinux' | grep -q '\.note\.kbolt'"
	check "... its code differs from the link's" test "$(section_bytes "$obj/vmlinux" .text)" != \
		"$(section_bytes "$obj/vmlinux.unstripped" .text)"
	check_eq "... System.map: the same symbols at the same addresses" \
		"$(nm -n "$obj/vmlinux.unstripped" | sha256sum)" "$(nm -n "$kout" | sha256sum)"
	check_eq "... kallsyms: the same bytes" "$(kallsyms_bytes "$obj/vmlinux.unstripped")" \
		"$(kallsyms_bytes "$obj/vmlinux")"
	check_eq "... .BTF: the same bytes" "$(section_bytes "$obj/vmlinux.unstripped" .BTF)" \
		"$(section_bytes "$obj/vmlinux" .BTF)"
	check_eq "... Module.symvers unchanged" "$sums_before" "$(sha "$obj/Module.symvers")"
	check "... vmlinux's build-id is not the link's" test "$(build_id "$obj/vmlinux")" != \
		"$(build_id "$obj/vmlinux.unstripped")"
	vm_boot "$ver: the bzImage boots relocated, loads the module, passes every workload" \
		--kernel "$obj/arch/x86/boot/bzImage" --kaslr --workload all --module "$tmp/mod/kbolt_hello.ko"
	check_relocated "... at a randomized address" "$obj/vmlinux.unstripped"
	check_booted "... the kernel kbolt made: the guest's build-id is vmlinux's" "$obj/vmlinux"
	check_match "... the module ran" 'kbolt_hello: loaded, 5 bytes copied' "$(cat "$tmp/console")"

	# incremental: the same profile does nothing, a new one only kbolt and the boot image
	v=$(stat -c %Y.%s "$obj/vmlinux") b=$(stat -c %Y.%s "$obj/arch/x86/boot/bzImage")
	mk "$tmp/again.log" kbolt KBOLT_PROFILE="$prof"; rc=$?
	check_eq "$ver: make kbolt again, the same profile: exit 0" 0 "$rc"
	check_eq "... vmlinux and bzImage untouched" "$v $b" \
		"$(stat -c %Y.%s "$obj/vmlinux") $(stat -c %Y.%s "$obj/arch/x86/boot/bzImage")"
	check "... no step ran" sh -c "! grep -qE '^  (KBOLT|LD|CC|COPY) ' '$tmp/again.log'"
	prof2=$tmp/merged.prof
	files_prof=$("$top/scripts/cached-profile" "$obj/vmlinux.unstripped" files 2>/dev/null)
	"$KBOLT" profile merge "$prof" "$files_prof" -o "$prof2" 2>"$tmp/merge.log"
	mk "$tmp/new.log" kbolt KBOLT_PROFILE="$prof2"; rc=$?
	check_eq "$ver: make kbolt with a new profile: exit 0" 0 "$rc"
	steps=$(grep -oE '^  [A-Z0-9]+ +[^ ]+' "$tmp/new.log" | awk '{print $1}' | sort -u | tr '\n' ' ')
	check_match "... kbolt ran" 'KBOLT' "$steps"
	# the boot image's own objects are made again from the new vmlinux (voffset.h)
	check_eq "... nothing of the kernel compiled or linked again (steps: $steps)" "" \
		"$(grep -E '^  (CC|AS|LD|AR) ' "$tmp/new.log" | grep -v ' arch/x86/boot/')"
	check "... the boot image was made again" test "$obj/arch/x86/boot/bzImage" -nt "$prof2"
	v=$(sha "$obj/vmlinux") b=$(sha "$obj/arch/x86/boot/bzImage")
	rm -f "$kout"
	mk "$tmp/redo.log" kbolt KBOLT_PROFILE="$prof2"
	check_eq "$ver: the same profile again from the link: the same vmlinux and bzImage" "$v $b" \
		"$(sha "$obj/vmlinux") $(sha "$obj/arch/x86/boot/bzImage")"
	# linked again (6.1's series keeps pahole from -j when KBUILD_BUILD_TIMESTAMP is
	# set, as 6.12 does): the same link, so the profile still fits, and the same bytes
	id=$(build_id "$obj/vmlinux.unstripped")
	rm -f "$obj/vmlinux.unstripped"
	mk "$tmp/relink.log" kbolt KBOLT_PROFILE="$prof2"; rc=$?
	check_eq "$ver: linked again, make kbolt: exit 0, the link's build-id unchanged" "0 $id" \
		"$rc $(build_id "$obj/vmlinux.unstripped")"
	check_eq "... the same vmlinux and bzImage" "$v $b" \
		"$(sha "$obj/vmlinux") $(sha "$obj/arch/x86/boot/bzImage")"

	# torture mode: CI's sample is seed 1, scripts/lab-matrix runs 1 2 3
	for seed in ${KBOLT_KBUILD_SEEDS:-1}; do
		mk "$tmp/rand.log" kbolt KBOLT_LAYOUT=random KBOLT_SEED=$seed; rc=$?
		check_eq "$ver: make kbolt KBOLT_LAYOUT=random KBOLT_SEED=$seed: exit 0" 0 "$rc"
		vm_boot "... boots relocated, every workload passes" \
			--kernel "$obj/arch/x86/boot/bzImage" --kaslr --workload all
		check_relocated "... at a randomized address" "$obj/vmlinux.unstripped"
		check_booted "... the kernel kbolt made: the guest's build-id is vmlinux's" "$obj/vmlinux"
		[ $seed = 1 ] && check_step_dwarf "... its DWARF updated by default"
	done

	later_makes
	# bad input: one line, the build stops, no vmlinux
	# a profile of another kernel: the tree's own, its build-id changed
	sed 's/^build-id .*/build-id 0123456789abcdef0123456789abcdef01234567/' "$prof" >"$tmp/other.prof"
	mk "$tmp/bad.log" kbolt KBOLT_PROFILE="$tmp/other.prof"; rc=$?
	check "$ver: a profile of another kernel stops the build" test "$rc" -ne 0
	check_match "... with kbolt's line naming the build-id" 'build-id' "$(grep -m1 'error: kbolt' "$tmp/bad.log")"
	check "... and no $kt is left" test ! -e "$kout"
	# a layout that moves nothing (every function excluded stands for a kernel whose
	# DWARF kbolt cannot update): the build stops rather than ship the link as kbolt's
	mk "$tmp/bad.log" kbolt KBOLT_PROFILE="$prof" KBOLT_FLAGS="--skip-funcs '*'"; rc=$?
	check "$ver: a profile layout that rewrites nothing stops the build" test "$rc" -ne 0
	check_match "... with kbolt's line naming the reason" \
		'error: kbolt: no function with profile weight is rewritten: [0-9.]+% of the weight skipped as filtered' \
		"$(grep -m1 'error: kbolt' "$tmp/bad.log")"
	check "... and no $kt is left" test ! -e "$kout"
	mk "$tmp/bad.log" kbolt KBOLT_PROFILE="$tmp/nonexistent.prof"; rc=$?
	check "$ver: a missing profile stops the build" test "$rc" -ne 0
	check_match "... one line naming it" "^kbolt: KBOLT_PROFILE=$tmp/nonexistent.prof: no such file" \
		"$(cat "$tmp/bad.log")"
	make -C "$src" O="$obj" $make_vars KBOLT=/nonexistent/kbolt KBOLT_PROFILE="$prof" kbolt >"$tmp/bad.log" 2>&1; rc=$?
	check "$ver: a kbolt that is not installed stops the build" test "$rc" -ne 0
	check_match "... one line naming it" "^kbolt: '/nonexistent/kbolt' not found: install kbolt" \
		"$(cat "$tmp/bad.log")"
	mk "$tmp/bad.log" kbolt; rc=$?
	check "$ver: make kbolt without a profile stops" test "$rc" -ne 0
	check_match "... saying what to set" 'make kbolt: set KBOLT_PROFILE=FILE' "$(cat "$tmp/bad.log")"
	for opt in "UNWINDER_ORC:-d UNWINDER_ORC -e UNWINDER_FRAME_POINTER" "RANDOMIZE_BASE:-d RANDOMIZE_BASE"; do
		name=${opt%%:*} sobj=$tmp/obj-no-$name
		mkdir -p "$sobj"
		cp "$obj/.config" "$sobj/.config"
		# shellcheck disable=SC2086
		"$src/scripts/config" --file "$sobj/.config" ${opt#*:}
		make -C "$src" O="$sobj" $make_vars olddefconfig >/dev/null 2>&1
		make -C "$src" O="$sobj" $make_vars KBOLT="$KBOLT" KBOLT_PROFILE="$prof" -j"$(nproc)" kbolt \
			>"$tmp/bad.log" 2>&1; rc=$?
		check "$ver: a tree without CONFIG_$name stops the build" test "$rc" -ne 0
		check_match "... before compiling, one line naming it" \
			"^kbolt: KBOLT_PROFILE or KBOLT_LAYOUT is set, but CONFIG_KBOLT is not.*CONFIG_$name" \
			"$(cat "$tmp/bad.log")"
		check "... nothing compiled" sh -c "! grep -qE '^  CC +(init|kernel|mm)/' '$tmp/bad.log'"
		rm -rf "$sobj"
	done

	# the kernel packages of the optimized kernel: a package build links again (the
	# package's revision is in the kernel's version string), so its profile is portable
	rm -f "$root"/*.deb
	"$KBOLT" profile portable "$obj/vmlinux.unstripped" "$prof" -o "$tmp/proc.portable" 2>"$tmp/port.log"
	# Debian's order: the profile in the configuration, one make of the package
	set_config_profile "$tmp/proc.portable"
	mk "$tmp/deb.log" bindeb-pkg KBOLT_FLAGS=--stats KDEB_COMPRESS=gzip; rc=$?
	set_config_profile ""
	check_eq "$ver: make bindeb-pkg, CONFIG_KBOLT_PROFILE set: exit 0" 0 "$rc"
	check_match "... kbolt made $kt" "^  KBOLT   ${kt//./\\.}\$" "$(cat "$tmp/deb.log")"
	image=$(ls "$root"/linux-image-*.deb 2>/dev/null | grep -v -- '-dbg_' | head -n 1)
	dbg=$(ls "$root"/linux-image-*-dbg_*.deb 2>/dev/null | head -n 1)
	if [ -n "$image" ] && [ -n "$dbg" ]; then
		rm -rf "$tmp/pkg" && mkdir "$tmp/pkg"
		dpkg -x "$image" "$tmp/pkg" && dpkg -x "$dbg" "$tmp/pkg"
		kimg=$(ls "$tmp"/pkg/boot/vmlinuz-* | head -n 1)
		kdbg=$(find "$tmp/pkg/usr/lib/debug" -name 'vmlinux*' -type f | head -n 1)
		check_packaged "$kimg" "the packaged kernel" "$kdbg" "the -dbg vmlinux"
	else
		fail "... a linux-image and a -dbg package" "$(ls "$root"/*.deb 2>&1; tail -n 20 "$tmp/deb.log")"
	fi
	rm -f "$root"/*.deb "$root"/*.buildinfo "$root"/*.changes

	# upstream's RPM of the optimized kernel, with the same portable profile: 6.12's
	# spec links again with the package's release in the version string, 6.1's finds
	# vmlinux up to date from the Debian packages, so the profile is made newer: that
	# redoes the kbolt step (and only that), and it shows in this build on both.  6.1's
	# rpmbuild takes its directory from RPMOPTS, 6.12's is $obj/rpmbuild; Debian's
	# rpm database knows none of a spec's build dependencies.
	rm -rf "$tmp/rpm" "$obj/rpmbuild"
	touch "$tmp/proc.portable"
	mk "$tmp/rpm.log" binrpm-pkg KBOLT_PROFILE="$tmp/proc.portable" KBOLT_FLAGS=--stats \
		RPMOPTS="--nodeps --define '_topdir $tmp/rpm'"; rc=$?
	check_eq "$ver: make binrpm-pkg KBOLT_PROFILE=: exit 0" 0 "$rc"
	check_match "... kbolt made $kt" "^  KBOLT   ${kt//./\\.}\$" "$(cat "$tmp/rpm.log")"
	rpm=$(find "$tmp/rpm" "$obj/rpmbuild" -name 'kernel-[0-9]*.x86_64.rpm' 2>/dev/null | head -n 1)
	if [ -n "$rpm" ]; then
		rm -rf "$tmp/rpmroot" && mkdir "$tmp/rpmroot"
		(cd "$tmp/rpmroot" && rpm2cpio "$rpm" | cpio -idm --quiet)
		kimg=$(find "$tmp/rpmroot" -name 'vmlinuz*' -type f | head -n 1)
		check_packaged "$kimg" "the kernel of $(basename "$rpm")" "$obj/vmlinux" \
			"the optimized vmlinux"
	else
		fail "... a kernel RPM" "$(tail -n 20 "$tmp/rpm.log")"
	fi
	rm -rf "$tmp/rpm" "$obj/rpmbuild"

	# leave the tree as build-kernel made it
	mk "$tmp/restore.log" bzImage KBOLT_PROFILE=
done
done_testing
