# SPDX-License-Identifier: GPL-2.0
# TAP helpers for the shell test scripts: source it, call ok/fail/skip/check_*, end with
# done_testing.  Each script prints "ok N - ..." lines and closes with "N passed, N failed".
#
# Environment: KMETA and KBOLT (the binaries under test, default kmeta/kmeta and
# kbolt/kbolt, relative to the top of the tree unless absolute), KBOLT_CACHE (fetched
# kernels, see scripts/kernels.conf), TMPDIR, KBOLT_QUICK (below), KBOLT_PROGRESS_FD
# (progress).

set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$top/scripts/kernels.conf"
KMETA=${KMETA:-$top/kmeta/kmeta}
case "$KMETA" in /*) ;; *) KMETA=$top/$KMETA ;; esac
KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
VMLINUX_61=$KBOLT_CACHE/$KERNEL_61_RELEASE/vmlinux
VMLINUX_612=$KBOLT_CACHE/$KERNEL_612_RELEASE/vmlinux
MODROOT=$KBOLT_CACHE/modroot
# The lab's own kernels (scripts/build-kernel) that the tests build and boot: CI keeps
# 6.12 as its sample; scripts/lab-matrix runs the same tests on every lab kernel
# (KBOLT_LAB_VERSIONS="6.1 6.12", Documentation/lab.rst).  VER-VARIANT names a variant
# (6.12-clang: "scripts/build-kernel --variant clang 6.12")
LAB_VERSIONS=${KBOLT_LAB_VERSIONS:-6.12}
# Why a test on a fetched kernel skips.  KBOLT_QUICK=1 (make check-quick) leaves every
# kernel out: what needs one skips, and build_lab_kernel builds none
no_kernels="no test kernels in $KBOLT_CACHE (scripts/fetch-kernels)"
if [ -n "${KBOLT_QUICK:-}" ]; then
	VMLINUX_61= VMLINUX_612= MODROOT=
	no_kernels="KBOLT_QUICK=1 (make check-quick) leaves the kernels out"
fi

_tap_n=0
_tap_pass=0
_tap_fail=0
_tap_skip=0
tmp=$(mktemp -d "${TMPDIR:-/tmp}/kbolt-test.XXXXXX")
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT

ok() {		# ok DESCRIPTION
	_tap_n=$((_tap_n + 1)); _tap_pass=$((_tap_pass + 1))
	echo "ok $_tap_n - $*"
}

fail() {	# fail DESCRIPTION [DIAGNOSTIC...]
	_tap_n=$((_tap_n + 1)); _tap_fail=$((_tap_fail + 1))
	echo "not ok $_tap_n - $1"
	shift
	local l
	for l in "$@"; do printf '%s\n' "$l" | sed 's/^/# /'; done
}

skip() {	# skip DESCRIPTION REASON
	_tap_n=$((_tap_n + 1)); _tap_skip=$((_tap_skip + 1))
	echo "ok $_tap_n - $1 # SKIP $2"
}

check() {	# check DESCRIPTION COMMAND...: passes when COMMAND exits 0
	local d=$1
	shift
	local out
	if out=$("$@" 2>&1); then ok "$d"; else fail "$d" "command: $*" "$(printf '%s\n' "$out" | tail -n 5)"; fi
}

check_eq() {	# check_eq DESCRIPTION EXPECTED ACTUAL
	if [ "$2" = "$3" ]; then ok "$1"; else fail "$1" "expected: $2" "actual:   $3"; fi
}

check_match() {	# check_match DESCRIPTION REGEX TEXT
	if printf '%s\n' "$3" | grep -Eq -- "$2"; then ok "$1"; else fail "$1" "no line matches /$2/ in:" "$(printf '%s\n' "$3" | head -n 5)"; fi
}

need_kernels() {	# sets have_kernels; tests on real kernels skip with a reason without them
	if [ -s "$VMLINUX_61" ] && [ -s "$VMLINUX_612" ]; then
		have_kernels=1
	else
		have_kernels=0
	fi
}

# progress TEXT: "# TEXT" shown when it happens, not when the script ends: on the stream
# selftests/run keeps open for it (KBOLT_PROGRESS_FD), else on stderr
progress() {
	if [ -n "${KBOLT_PROGRESS_FD:-}" ] &&
	   { echo "# $*" >&"$KBOLT_PROGRESS_FD"; } 2>/dev/null; then
		return
	fi
	echo "# $*" >&2
}

# lab_base VER: the kernel version of a lab name (6.12 of 6.12-clang)
lab_base() { echo "${1%%-*}"; }
# lab_args VER: build-kernel's arguments for a lab name (--variant clang 6.12)
lab_args() {
	case $1 in
	*-*) echo "--variant ${1#*-} ${1%%-*}" ;;
	*) echo "$1" ;;
	esac
}

# build_lab_kernel VER LOG: scripts/build-kernel VER (VER-VARIANT: its variant), which
# prints the output directory, its messages in LOG.  A build the cache does not hold
# takes minutes: it is announced before (progress) and timed after.  Under KBOLT_QUICK
# it fails, building nothing.
build_lab_kernel() {
	local ver=$1 log=$2 cores start rc=0 took
	if [ -n "${KBOLT_QUICK:-}" ]; then
		echo "KBOLT_QUICK=1 (make check-quick) builds no kernel" >"$log"
		return 1
	fi
	# shellcheck disable=SC2046 # lab_args: words
	"$top/scripts/build-kernel" --cached $(lab_args "$ver") 2>"$log" && return 0
	cores=$(nproc)
	progress "building the lab's $ver kernel (scripts/build-kernel $(lab_args "$ver")), about" \
		"$(( (10 + cores - 1) / cores )) minutes on $cores cores; log in $log"
	start=$SECONDS
	# shellcheck disable=SC2046
	"$top/scripts/build-kernel" $(lab_args "$ver") 2>"$log" || rc=$?
	took="$(( (SECONDS - start) / 60 )) min $(( (SECONDS - start) % 60 )) s"
	if [ $rc = 0 ]; then
		progress "... the lab's $ver kernel built in $took"
	else
		progress "... scripts/build-kernel $(lab_args "$ver") failed after $took (exit $rc)"
	fi
	return $rc
}

# need_fixture NAME [--no-relocs]: the fixture fixtures/NAME.S (such as flow, the probes
# of flow.sh), a miniature vmlinux kbolt can optimize, assembled and linked as $tmp/NAME,
# with its relocations (ld -q) unless --no-relocs (as 6.2+ kernels are); else the script
# ends, failed
need_fixture() {
	local fx=$top/selftests/fixtures q=-q
	[ "${2:-}" = --no-relocs ] && q=
	if ! gcc -c -o "$tmp/$1.o" "$fx/$1.S" ||
	   ! ld $q -e _text -T "$fx/vmlinux.lds" --no-warn-rwx-segments -o "$tmp/$1" "$tmp/$1.o"; then
		fail "assemble the $1 fixture"
		done_testing
		exit 1
	fi
}

# fixture_variant NAME OUT [GCC-FLAGS...]: fixtures/NAME.S assembled with the flags
# (-DAPART, -DBROKEN: a planted fault) and linked with its relocations as OUT; false if
# either step fails
fixture_variant() {
	local name=$1 out=$2
	shift 2
	gcc -c "$@" -o "$out.o" "$top/selftests/fixtures/$name.S" &&
		ld -q -e _text -T "$top/selftests/fixtures/vmlinux.lds" --no-warn-rwx-segments \
			-o "$out" "$out.o"
}

# random_layouts FILE: random layouts 1..$SEEDS of FILE as $tmp/r.N, each checked two
# ways, then "SEEDS random layouts written and verified" and "... kmeta check clean on
# each" tested; the seeds written in $written
random_layouts() {
	local s o bad= clean=0
	written=
	for s in $(seq 1 "$SEEDS"); do
		o=$tmp/r.$s
		if ! "$KBOLT" optimize "$1" -o "$o" --layout random --seed "$s" >/dev/null 2>"$o.err"; then
			bad+=" $s"
			continue
		fi
		"$KMETA" check "$o" >/dev/null 2>&1 && clean=$((clean + 1))
		written+=" $s"
	done
	check_eq "$SEEDS random layouts written and verified" "" "${bad# }"
	check_eq "... kmeta check clean on each" "$SEEDS" "$clean"
}

re_quote() {	# a string as an extended regex matching it literally
	printf '%s' "$1" | sed 's/[][\.*^$+?(){}|/]/\\&/g'
}

# func_body FILE NAME: the instructions of function NAME in FILE's .text, as objdump
# prints them, without addresses or bytes
func_body() {
	objdump -d -j .text "$1" | sed -n "/<$2>:/,/^\$/p" | cut -f3
}

VMTEST=$top/scripts/vmtest
vm_boot() {	# vm_boot DESCRIPTION VMTEST-ARGS...: the boot must pass; the console stays in $tmp/console
	local d=$1 out
	shift
	if out=$("$VMTEST" "$@" --log "$tmp/console" 2>&1); then
		ok "$d ($(printf '%s\n' "$out" | grep -c '^ok ') guest tests)"
	else
		fail "$d" "$(printf '%s\n' "$out" | grep -v '^ok ' | tail -n 25)"
	fi
}

done_testing() {
	if [ "$_tap_skip" -gt 0 ]; then
		echo "$_tap_pass passed, $_tap_fail failed, $_tap_skip skipped"
	else
		echo "$_tap_pass passed, $_tap_fail failed"
	fi
	[ "$_tap_fail" -eq 0 ]
}

# json_get FILE EXPR: EXPR of r, the JSON object on FILE's last line (kbolt's -j
# statistics), printed by python
json_get() {
	tail -n 1 "$1" | /usr/bin/python3 -c "import json, sys; r = json.load(sys.stdin); print($2)"
}

# bump_byte FILE ADDR: add 1 to the byte of FILE that is loaded at address ADDR (a
# number bash reads: 0x... or a wrapped negative), in place
bump_byte() {
	poke_bytes "$1" "$2"
}

# poke_bytes FILE ADDR [HEX]: the bytes of FILE loaded from address ADDR made HEX (such as
# cccc), in place; without HEX, the byte there plus 1
poke_bytes() {
	/usr/bin/python3 - "$1" "$(printf '%x' "$2")" "${3:-}" <<'EOF'
import sys
from elftools.elf.elffile import ELFFile
path, addr, new = sys.argv[1], int(sys.argv[2], 16), bytes.fromhex(sys.argv[3])
with open(path, 'rb') as f:
    sec = next(s for s in ELFFile(f).iter_sections() if s['sh_type'] != 'SHT_NOBITS' and
               s['sh_addr'] <= addr < s['sh_addr'] + s['sh_size'])
    off = sec['sh_offset'] + addr - sec['sh_addr']
with open(path, 'r+b') as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(new or bytes([(b[0] + 1) & 0xff]))
EOF
}

# proc_profile_61: the path of the proc profile of Debian's 6.1 that
# scripts/cached-profile keeps for every tool, recorded first if missing; empty if the
# kernel is missing or the recording failed.
proc_profile_61() {
	[ -s "$VMLINUX_61" ] || return 0
	"$top/scripts/cached-profile" "$VMLINUX_61" proc 2>/dev/null || true
}

# need_proc_profile_61 WHAT: set $prof to that profile, or end the script: WHAT
# skipped without the kernel, a failure if the recording failed
need_proc_profile_61() {
	if [ ! -s "$VMLINUX_61" ]; then
		skip "$1" "$no_kernels"
		done_testing
		exit 0
	fi
	prof=$(proc_profile_61)
	if [ -z "$prof" ]; then
		fail "6.1: the proc profile recorded" "scripts/vmtest --record-profile failed"
		done_testing
		exit 1
	fi
}

# check_relocated DESCRIPTION VMLINUX: the last boot's console ($tmp/console) shows
# _text away from VMLINUX's link address, where KASLR put it (any 2 MB step)
check_relocated() {
	local link ran
	link=$(nm "$2" | awk '$3 == "_text" {print $1}')
	ran=$(sed -n 's/^kbolt-lab: _text //p' "$tmp/console" | tr -d '\r')
	if [ -n "$ran" ] && [ "$ran" != "$link" ]; then
		ok "$1 (_text $link -> $ran)"
	else
		fail "$1" "linked at $link, ran at '${ran:-?}'"
	fi
}
