#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kbolt optimize and verify on real kernels.  Debian's 6.1 cloud kernel rewritten with
# three random layouts and with a profile layout from a boot-lab profile: each output
# verifies, passes kmeta check and boots through every workload with a clean console.
# (The lab's own kernels, rewritten by "make kbolt" as KASLR bzImages: kbuild.sh.)
# Outputs are deterministic; tampering is caught by verify; bad inputs are
# refused without writing anything.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
sanitized=0
case "${OUT:-.build/default}" in *san*) sanitized=1 ;; esac
need_kernels
if [ $have_kernels = 0 ]; then
	skip "optimize tests" "test kernels not fetched: run scripts/fetch-kernels"
	done_testing
	exit 0
fi

# optimize_ok DESCRIPTION OUT ARGS...: optimize $VMLINUX into OUT with -j --stats
optimize_ok() {
	local d=$1 out=$2
	shift 2
	# the DWARF is dwarf.sh's: here it is copied as it is, unless the test says
	case " $* " in
	*" --strip-debug "* | *" --update-debug "*) ;;
	*) set -- "$@" --no-update-debug ;;
	esac
	if "$KBOLT" optimize "$@" -o "$out" --stats -j >"$out.stats" 2>"$out.err"; then
		ok "$d"
	else
		fail "$d" "$(tail -n 5 "$out.err")"
	fi
}

if [ $sanitized = 1 ]; then
	# the sanitized build runs the whole pipeline on part of the kernel: every function
	# is decoded and analysed, the tcp ones are rewritten, verify runs on the result
	optimize_ok "sanitized: random layout of tcp_* on 6.1, verified" "$tmp/san" \
		"$VMLINUX_61" --layout random --seed 1 --funcs 'tcp_*'
	check_match "... rewrote some" '^[1-9]' "$(json_get "$tmp/san.stats" 'r["rewritten"]')"
	done_testing
	exit 0
fi

# --- random layouts on Debian's 6.1 ---
for seed in 1 2 3; do
	out=$tmp/r$seed
	optimize_ok "6.1, random layout, seed $seed: written and verified" "$out" \
		"$VMLINUX_61" --layout random --seed "$seed"
	share=$(json_get "$out.stats" 'round(100 * r["rewritten"] / r["multi_block"], 1)')
	check_match "... moved blocks in $share% of multi-block functions" \
		'^(6[5-9]|[7-9][0-9]|100)\.' "$share"
	safe=$(json_get "$out.stats" 'round(100 * r["multi_block_safe"] / r["multi_block"], 1)')
	check_match "... proved $safe% of multi-block functions safe to rewrite" \
		'^(9[5-9]|100)\.' "$safe"
	if [ $seed = 1 ]; then
		check "... kbolt verify accepts it on its own" "$KBOLT" verify "$VMLINUX_61" "$out"
		check_match "... kmeta check: 0 violations" " 0 violations" \
			"$("$KMETA" check "$out" 2>&1)"
		check_match "... kmeta diff shows moved alternatives, ORC, exception entries" \
			'^(alternatives|orc|ex_table): [-+]' "$("$KMETA" diff "$VMLINUX_61" "$out" 2>&1 | head -n 400)"
		old_id=$(readelf -n "$VMLINUX_61" | sed -n 's/.*Build ID: *//p')
		new_id=$(readelf -n "$out" | sed -n 's/.*Build ID: *//p')
		check "... has a new build-id ($new_id)" test -n "$new_id" -a "$new_id" != "$old_id"
		check_match "... and a .note.kbolt with its options" \
			'options: --layout random --seed 1' "$(readelf -p .note.kbolt "$out" 2>&1)"
		"$KBOLT" optimize "$VMLINUX_61" -o "$tmp/again" --layout random --seed 1 \
			--no-update-debug 2>/dev/null
		check "same inputs and options: byte-identical output" cmp -s "$out" "$tmp/again"
		rm -f "$tmp/again"
	else
		check "... differs from seed 1's output" bash -c "! cmp -s '$out' '$tmp/r1'"
	fi
	vm_boot "6.1, random layout, seed $seed: boots, every workload passes" \
		--kernel "$out" --workload all
	[ $seed = 1 ] || rm -f "$out"
done

# verify catches a wrong rewrite: one jcc's condition flipped in the new code
flip_jcc() {	# flip_jcc IN OUT: copy IN with the first rewritten function's first jcc flipped
	/usr/bin/python3 - "$VMLINUX_61" "$1" "$2" <<'EOF'
import sys, shutil
from elftools.elf.elffile import ELFFile
old, new, out = sys.argv[1:]
shutil.copyfile(new, out)
with open(old, 'rb') as fo, open(new, 'rb') as fn:
    text = ELFFile(fo).get_section_by_name('.text')
    base, off = text['sh_addr'], text['sh_offset']
    ot = text.data()
    fn.seek(off)
    nt = fn.read(len(ot))
for i in range(len(ot)):
    if ot[i] != nt[i] and 0x70 <= nt[i] <= 0x7f:
        with open(out, 'r+b') as f:
            f.seek(off + i)
            f.write(bytes([nt[i] ^ 1]))
        print(hex(base + i))
        break
EOF
}
where=$(flip_jcc "$tmp/r1" "$tmp/bad")
out=$("$KBOLT" verify "$VMLINUX_61" "$tmp/bad" 2>&1); rc=$?
check_eq "verify rejects an output with one jcc inverted (at $where)" 1 "$rc"
check_match "... and says where, as function+offset" 'error: kbolt: verify: [^ :]+\+0x[0-9a-f]+: ' "$out"
# ... and a relocated pointer in data that no longer holds what its relocation says
/usr/bin/python3 - "$tmp/r1" "$tmp/bad" <<'EOF'
import sys, shutil
from elftools.elf.elffile import ELFFile
shutil.copyfile(sys.argv[1], sys.argv[2])
with open(sys.argv[1], 'rb') as f:
    e = ELFFile(f)
    data = e.get_section_by_name('.data')
    r = next(e.get_section_by_name('.rela.data').iter_relocations())
    off = data['sh_offset'] + r['r_offset'] - data['sh_addr']
with open(sys.argv[2], 'r+b') as f:
    f.seek(off)
    b = f.read(1)
    f.seek(off)
    f.write(bytes([b[0] ^ 0x10]))
EOF
out=$("$KBOLT" verify "$VMLINUX_61" "$tmp/bad" 2>&1); rc=$?
check_eq "verify rejects an output with one relocated pointer changed" 1 "$rc"
check_match "... saying so" 'verify: .*: relocated value does not match its relocation' "$out"
# ... and a table entry that no longer points where the old one did, in a table
# compared slot by slot (return_sites, s32) and in one compared in site order
# (mcount_loc, 64-bit): its 100th slot, one byte further
bump_slot() {	# bump_slot IN OUT START_SYMBOL SLOT_SIZE: add 1 to the 100th slot's low byte
	cp "$1" "$2"
	bump_byte "$2" $((0x$(nm "$1" | awk -v s="$3" '$3 == s {print $1}') + 99 * $4))
}
for t in return_sites:__return_sites:4 mcount_loc:__start_mcount_loc:8; do
	IFS=: read -r name start size <<< "$t"
	bump_slot "$tmp/r1" "$tmp/bad" "$start" "$size"
	out=$("$KBOLT" verify "$VMLINUX_61" "$tmp/bad" 2>&1); rc=$?
	check_eq "verify rejects an output with one $name entry moved by a byte" 1 "$rc"
	check_match "... saying which entry" "verify: .*: $name: entry [0-9]+: " "$out"
done
# ... and an ORC entry that no longer gives the state it did: one in a rewritten
# function (its code compared through the map) and one outside (compared in place)
orc_entry() {	# orc_entry ORIG NEW inside|outside: address of an ORC entry to change
	/usr/bin/python3 - "$@" <<'EOF'
import bisect, struct, sys
from elftools.elf.elffile import ELFFile
fo, fn = open(sys.argv[1], 'rb'), open(sys.argv[2], 'rb')
eo, en = ELFFile(fo), ELFFile(fn)
inside = sys.argv[3] == 'inside'
ipsec, orc = en.get_section_by_name('.orc_unwind_ip'), en.get_section_by_name('.orc_unwind')
d = ipsec.data()
ips = [ipsec['sh_addr'] + 4 * k + v for k, (v,) in enumerate(struct.iter_unpack('<i', d))]
funcs = sorted((s['st_value'], s['st_size']) for s in eo.get_section_by_name('.symtab').iter_symbols()
               if s['st_info']['type'] == 'STT_FUNC' and s['st_size'])
starts = [a for a, _ in funcs]
to, tn = eo.get_section_by_name('.text'), en.get_section_by_name('.text')
co, cn, base = to.data(), tn.data(), to['sh_addr']
for k in range(len(ips) // 3, len(ips) - 1):	# away from the head's special code
    i = bisect.bisect_right(starts, ips[k]) - 1
    if i < 0 or not ips[k - 1] < ips[k] < ips[k + 1] or not base <= ips[k] < base + len(co):
        continue
    a, size = funcs[i]
    if ips[k + 1] >= a + size or cn[ips[k] - base] == 0xcc:
        continue
    if (co[a - base:a - base + size] != cn[a - base:a - base + size]) == inside:
        print('%x' % (orc['sh_addr'] + 6 * k))	# sp_offset's low byte
        break
EOF
}
for where in inside outside; do
	at=$(orc_entry "$VMLINUX_61" "$tmp/r1" $where)
	cp "$tmp/r1" "$tmp/bad"
	bump_byte "$tmp/bad" $((0x$at))
	out=$("$KBOLT" verify "$VMLINUX_61" "$tmp/bad" 2>&1); rc=$?
	check_eq "verify rejects an output with one ORC entry changed $where rewritten code" 1 "$rc"
	case $where in
	inside) msg='ORC state at its new place \+0x[0-9a-f]+ differs' ;;
	outside) msg='ORC state changed outside rewritten code' ;;
	esac
	check_match "... saying where" "verify: [^ :]+(\\+0x[0-9a-f]+)?: $msg" "$out"
done
# ... and one that loses code: tcp_v4_rcv's first short jcc made a jmp to the same
# target, so the old instructions after it are reached no more
jcc_to_jmp() {	# jcc_to_jmp IN OUT FUNC: copy IN with it done, print the address
	local addr size a
	read -r addr size < <(nm -S "$1" | awk -v f="$3" '$4 == f {print $1, $2; exit}')
	a=$(objdump -d --start-address=0x"$addr" \
		--stop-address="$(printf '0x%x' $((0x$addr + 0x$size)))" "$1" |
		awk -F'\t' '$2 ~ /^7[0-9a-f] [0-9a-f][0-9a-f] *$/ {sub(/:.*/, "", $1); print $1; exit}')
	a=${a// /}
	[ -n "$a" ] || return 0
	cp "$1" "$2"
	/usr/bin/python3 - "$2" "$a" <<'EOF'
import sys
from elftools.elf.elffile import ELFFile
addr = int(sys.argv[2], 16)
with open(sys.argv[1], 'r+b') as f:
    t = ELFFile(f).get_section_by_name('.text')
    f.seek(t['sh_offset'] + addr - t['sh_addr'])
    f.write(b'\xeb')
EOF
	echo "$a"
}
where=$(jcc_to_jmp "$tmp/r1" "$tmp/bad" tcp_v4_rcv)
check_match "tcp_v4_rcv has a short jcc in seed 1's output" '^[0-9a-f]+$' "$where"
out=$("$KBOLT" verify "$VMLINUX_61" "$tmp/bad" 2>&1); rc=$?
check_eq "verify rejects an output whose jcc became a jmp (at $where)" 1 "$rc"
check_match "... and names the old instructions no longer reached" \
	'verify: tcp_v4_rcv\+0x[0-9a-f]+: old instruction not found in the new code' "$out"
# ... and one whose ORC table lost its last entry (both sections one entry shorter in
# their headers): the states are never looked up past the shorter table
/usr/bin/python3 - "$tmp/r1" "$tmp/bad" <<'EOF'
import shutil, struct, sys
from elftools.elf.elffile import ELFFile
shutil.copyfile(sys.argv[1], sys.argv[2])
with open(sys.argv[2], 'r+b') as f:
    e = ELFFile(f)
    at = {}
    for i, s in enumerate(e.iter_sections()):
        if s.name in ('.orc_unwind_ip', '.orc_unwind'):
            at[s.name] = (e['e_shoff'] + i * e['e_shentsize'] + 32, s['sh_size'])
    for name, entry in (('.orc_unwind_ip', 4), ('.orc_unwind', 6)):
        off, size = at[name]
        f.seek(off)
        f.write(struct.pack('<Q', size - entry))
EOF
out=$("$KBOLT" verify "$VMLINUX_61" "$tmp/bad" 2>&1); rc=$?
check_eq "verify rejects an output whose ORC table is one entry short" 1 "$rc"
check_match "... saying so" 'verify: the ORC tables are missing or of different sizes' "$out"
rm -f "$tmp/bad"

# --- profile layout from a boot-lab profile, in both profile formats ---
prof=$tmp/proc.prof
# deterministic: the same profile every run, so the weight figures below are stable
vm_boot "6.1: profile of proc and net recorded" --kernel "$VMLINUX_61" \
	--workload proc --workload net --deterministic --record-profile "$prof"
optimize_ok "6.1, profile layout: written and verified" "$tmp/p" "$VMLINUX_61" --profile "$prof"
w=$(json_get "$tmp/p.stats" 'round(100 * (r["rewritten_weight"] + r["kept_weight"]) / r["profile_weight"], 2)')
check_match "... profile weight in functions kbolt rewrote or proved already in order: $w%" \
	'^(9[89]|100)\.' "$w"
m=$(json_get "$tmp/p.stats" 'round(100 * r["rewritten_weight"] / r["profile_weight"], 2)')
check_match "... of which in functions with a new layout: $m%" '^[5-9][0-9]\.' "$m"
# functions that grew into their padding get the ELF size of their new code
g=$(json_get "$tmp/p.stats" 'r["padding_functions"]')
n=$(diff <(readelf -sW "$VMLINUX_61" | awk '$4 == "FUNC" {print $2, $3, $8}') \
	<(readelf -sW "$tmp/p" | awk '$4 == "FUNC" {print $2, $3, $8}') | grep -c '^>')
check "... $g functions grew into their padding; $n function symbols have a new size" \
	test "$g" -gt 0 -a "$n" -ge "$g" -a "$n" -le $((2 * g))
vm_boot "6.1, profile layout: boots, every workload passes" --kernel "$tmp/p" --workload all
rm -f "$tmp/p"
"$KBOLT" profile-to-bolt -o "$tmp/proc.bolt" "$prof" 2>/dev/null
optimize_ok "6.1, profile layout from the same profile in BOLT's format, --strip-debug" \
	"$tmp/pb" "$VMLINUX_61" --profile "$tmp/proc.bolt" --strip-debug
mb=$(($(stat -c %s "$tmp/pb") >> 20))
check_match "... without the DWARF: $mb MB" '^([1-9]|[1-9][0-9]|1[0-4][0-9])$' "$mb"
check_match "... kmeta check: 0 violations" " 0 violations" "$("$KMETA" check "$tmp/pb" 2>&1)"
vm_boot "... boots, every workload passes" --kernel "$tmp/pb" --workload all
rm -f "$tmp/pb"

# --- bad input: refused, nothing written ---
refused() {	# refused DESCRIPTION REGEX ARGS...: optimize fails, says REGEX, writes no -o
	local d=$1 re=$2 out rc
	shift 2
	out=$("$KBOLT" optimize "$@" -o "$tmp/none" 2>&1); rc=$?
	if [ $rc = 1 ] && [ ! -e "$tmp/none" ] && printf '%s\n' "$out" | grep -Eq -- "$re"; then
		ok "$d"
	else
		fail "$d" "exit $rc, output $(ls "$tmp/none" 2>&1)" "$out"
	fi
	[ -z "$(ls -A "$tmp" | grep '^\.kbolt-')" ] || fail "$d: a temporary file was left"
}
objcopy --strip-all "$VMLINUX_61" "$tmp/stripped"
refused "a stripped vmlinux is refused" 'no symbol table' "$tmp/stripped" \
	--layout random --seed 1
rm -f "$tmp/stripped"
sed 's/^build-id .*/build-id 0123456789abcdef0123456789abcdef01234567/' "$prof" >"$tmp/other.prof"
refused "a profile of another kernel (its build-id) is refused" 'recorded on build-id' \
	"$VMLINUX_61" --profile "$tmp/other.prof"
check "... unless --force" "$KBOLT" optimize "$VMLINUX_61" --profile "$tmp/other.prof" --force \
	--funcs 'tcp_v4_*' -o "$tmp/forced"
rm -f "$tmp/forced"
head -c 300 "$prof" >"$tmp/trunc.prof"
refused "a truncated profile is refused" 'line [0-9]+' "$VMLINUX_61" --profile "$tmp/trunc.prof"
/usr/bin/python3 -c '
import sys
for l in open(sys.argv[1]):
    f = l.split()
    if f and f[0] in "BF":
        f[1] = "%x" % (int(f[1], 16) + 3)
        f[2] = "%x" % (int(f[2], 16) + 3)
    print(" ".join(f))' "$tmp/proc.bolt" >"$tmp/shifted.bolt"
refused "a BOLT profile whose addresses miss the kernel's branches is refused" \
	'miss' "$VMLINUX_61" --profile "$tmp/shifted.bolt"
out=$("$KBOLT" optimize "$VMLINUX_61" --layout random --seed 1 -o "$tmp/nodir/out" 2>&1); rc=$?
check_eq "an output in a missing directory: exit 1" 1 "$rc"
check_match "... saying why" 'cannot create a file in' "$out"

done_testing
