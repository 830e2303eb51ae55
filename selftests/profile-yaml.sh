#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# BOLT's YAML profile (Documentation/profile-format.rst, "BOLT's YAML"): each block found
# at the offset BOLT keeps in the low 16 bits of its hash, its last instruction its
# insns-th; successors from there, calls from the block's start plus off.  On
# selftests/fixtures/yaml.S linked at a user address: a hand-made YAML (what llvm-bolt-19
# wrote of in.fdata below) and, where llvm-bolt-19 is installed, the YAML it writes
# (-w) of that fdata now, every record agreeing with the code; a profile of samples;
# records it cannot place left out, counted, with a warning; and refusals, each exit 1
# with one line naming the file and line: malformed YAML, an unknown key, a function
# the kernel does not have (left out with --force), a bid out of range, a count that
# is not a number, another build-id, and use by a command without the vmlinux.
# profile-to-bolt --format yaml writes it: of in.fdata, the blocks, successors and calls
# llvm-bolt-19 -w writes; read back alike (the same weights per function, the same
# file written again); llvm-bolt-19 -profile-ignore-hash matches every function with
# no stale profile (without the option, all stale); samples as events; a record with
# no place left out with one warning; refusals that write nothing.  On 6.1, kbolt's YAML
# of the proc profile: numbered as perf2bolt-19's, read back alike, and the functions
# llvm-bolt-19 matches.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac

sed 's/0xffffffff81000000/0x401000/' "$top/selftests/fixtures/vmlinux.lds" >"$tmp/u.lds"
if ! gcc -c -o "$tmp/yaml.o" "$top/selftests/fixtures/yaml.S" ||
   ! ld -q --build-id -e _text -T "$tmp/u.lds" --no-warn-rwx-segments -o "$tmp/img" "$tmp/yaml.o"; then
	fail "the fixture builds"
	done_testing
	exit 1
fi
img=$tmp/img
id=$(readelf -n "$img" | awk '/Build ID/ { print $3 }')

cat >"$tmp/in.fdata" <<'EOF'
1 yf_join 2 1 yf_join 6 0 3
1 yf_join 2 1 yf_join 4 0 5
1 yf_join 4 1 yf_join 8 0 5
1 yf_tail 2 1 yf_tail 6 0 4
1 yf_tail 2 1 yf_tail 4 0 2
1 yf_tail 4 1 yf_leaf 0 0 2
1 yf_tail 8 1 yf_leaf 0 0 1
1 yf_tail 8 1 yf_tail a 0 3
1 yf_tail a 1 yf_join 0 0 3
1 yf_trap 2 1 yf_trap 6 0 6
1 yf_trap 7 1 yf_leaf 0 0 6
EOF
# what llvm-bolt-19 -w wrote of in.fdata (the build-id is the fixture's)
sed "s/@ID@/$id/" >"$tmp/hand.yaml" <<'EOF'
---
header:
  profile-version: 1
  binary-name:     img
  binary-build-id: @ID@
  profile-flags:   [ lbr ]
  profile-origin:  branch profile reader
  profile-events:  ''
  dfs-order:       false
  hash-func:       xxh3
functions:
  - name:            yf_join
    fid:             1
    hash:            0x471679584A0388F0
    exec:            3
    nblocks:         4
    blocks:
      - bid:             0
        insns:           3
        hash:            0x6D000826EA2D0000
        exec:            3
        succ:            [ { bid: 1, cnt: 3 }, { bid: 2, cnt: 5 } ]
      - bid:             1
        insns:           1
        hash:            0x8B4C7982580A0006
        succ:            [ { bid: 2, cnt: 0 } ]
      - bid:             2
        insns:           1
        hash:            0xB116F5F3AF0008
  - name:            yf_tail
    fid:             2
    hash:            0xE39470C2211BC5DA
    exec:            0
    nblocks:         4
    blocks:
      - bid:             0
        insns:           2
        hash:            0xF7002F6BEA2D0000
        succ:            [ { bid: 2, cnt: 4 }, { bid: 1, cnt: 2 } ]
      - bid:             1
        insns:           1
        hash:            0x4C3623240F0004
        calls:           [ { off: 0x0, fid: 4, cnt: 2 } ]
      - bid:             2
        insns:           2
        hash:            0x1D4C1E93EA2D0006
        calls:           [ { off: 0x2, fid: 4, cnt: 1 } ]
        succ:            [ { bid: 3, cnt: 3 } ]
      - bid:             3
        insns:           1
        hash:            0x4C3623240F000A
        calls:           [ { off: 0x0, fid: 1, cnt: 3 } ]
  - name:            yf_trap
    fid:             3
    hash:            0xC6DA0F7B408D450B
    exec:            0
    nblocks:         4
    blocks:
      - bid:             0
        insns:           2
        hash:            0x7B000826EA2D0000
        succ:            [ { bid: 2, cnt: 6 }, { bid: 1, cnt: 0 } ]
      - bid:             2
        insns:           3
        hash:            0x4C2446EC260006
        calls:           [ { off: 0x1, fid: 4, cnt: 6 } ]
  - name:            yf_leaf
    fid:             4
    hash:            0xA6DBA46AF08DE417
    exec:            9
    nblocks:         1
    blocks:
      - bid:             0
        insns:           2
        hash:            0xE417F3AF0000
        exec:            9
...
EOF

kinds() {	# the check-profile -j figures: records ft branch sample disagree
	python3 -c 'import json, sys; r = json.load(sys.stdin)
k = r["by_kind"]; print(r["records"], k["ft"], k["branch"], k["sample"], r["disagree"])'
}
out=$("$KBOLT" check-profile -j "$img" "$tmp/hand.yaml" 2>"$tmp/err"); rc=$?
check_eq "hand-made YAML: check-profile passes, quietly" "0 " "$rc $(cat "$tmp/err")"
# 6 successors with counts (2 of them fall-throughs: a jne and a je not taken) and 4
# calls, tail calls among them
check_eq "... 10 records: 2 fall-throughs, 8 branches (the je of 'je; jmp' from the je), none disagree" \
	"10 2 8 0 0" "$(kinds <<<"$out")"
check_match "... the successors' and calls' counts, weight 35" 'records \(weight 35\): 10 agree' \
	"$("$KBOLT" check-profile "$img" "$tmp/hand.yaml")"
json=$("$KBOLT" heatmap -j "$img" "$tmp/hand.yaml" -o "$tmp/h.svg" 2>&1)
check_match "heatmap reads it too" '"lines":[1-9]' "$json"

bolt=/usr/lib/llvm-19/bin/llvm-bolt
if [ -x "$bolt" ]; then
	if "$bolt" "$img" -data="$tmp/in.fdata" -w "$tmp/bolt.yaml" -o "$tmp/img.bolt" \
		>"$tmp/bolt.log" 2>&1; then
		out=$("$KBOLT" check-profile -j "$img" "$tmp/bolt.yaml"); rc=$?
		check_eq "llvm-bolt-19 -w's YAML of the fdata: check-profile passes, every record agrees" \
			"0 10 2 8 0 0" "$rc $(kinds <<<"$out")"
	else
		fail "llvm-bolt-19 -w writes the YAML" "$(tail -n 3 "$tmp/bolt.log")"
	fi
else
	skip "llvm-bolt-19 -w's YAML of the fdata" "no $bolt"
fi

# a profile of samples (no LBR): a block's events at its first instruction
sed -e 's/\[ lbr \]/[ sample ]/' -e 's/^        exec: .*/        events:          7/' \
	-e '/succ:\|calls:/d' "$tmp/hand.yaml" >"$tmp/samples.yaml"
out=$("$KBOLT" check-profile -j "$img" "$tmp/samples.yaml"); rc=$?
check_eq "profile-flags [ sample ]: the 2 blocks with events as samples, agreeing" \
	"0 2 0 0 2 0" "$rc $(kinds <<<"$out")"

# a block whose hash holds an offset inside an instruction: its records left out, counted
sed 's/hash:            0x8B4C7982580A0006/hash:            0x8B4C7982580A0007/' \
	"$tmp/hand.yaml" >"$tmp/drop.yaml"
out=$("$KBOLT" check-profile "$img" "$tmp/drop.yaml" 2>&1); rc=$?
check_eq "a block kbolt cannot place: check-profile passes without it" 0 "$rc"
check_match "... its edge left out and counted, with the line and why" \
	"drop.yaml: warning: kbolt: 1 records \\(weight 3\\) kbolt cannot place in $img's code, such as line 2[0-9] \\(the offset in its hash starts no instruction, or more than one\\): left out" \
	"$out"
check_match "... the rest checked" 'records \(weight 32\): 9 agree' "$out"

refused() {	# refused DESCRIPTION REGEX ARGS...: exit 1, one line
	local d=$1 re=$2 out rc
	shift 2
	out=$("$KBOLT" "$@" 2>&1); rc=$?
	check_eq "$d: exit 1, one line" "1 1" "$rc $(printf '%s\n' "$out" | wc -l)"
	check_match "... saying so" "$re" "$out"
}
edit() {	# edit NAME SED-SCRIPT: hand.yaml edited into NAME.yaml
	sed "$2" "$tmp/hand.yaml" >"$tmp/$1.yaml"
}
edit malformed 's/succ:            \[ { bid: 2, cnt: 4 }/succ:            [ { bid: 2, cnt: 4 /'
refused "malformed YAML" '^.*malformed.yaml: error: kbolt: line [0-9]+: malformed YAML: ' \
	check-profile "$img" "$tmp/malformed.yaml"
edit unknown 's/name:            yf_trap/name:            no_such_function/'
refused "a function the kernel does not have" \
	"unknown.yaml: error: kbolt: line 53: no function no_such_function in $img: a profile of another kernel" \
	check-profile "$img" "$tmp/unknown.yaml"
out=$("$KBOLT" check-profile -f "$img" "$tmp/unknown.yaml" 2>&1); rc=$?
check_eq "... with --force its records are left out, the rest checked" 0 "$rc"
check_match "... with a warning" 'warning: kbolt: 1 functions .* such as no_such_function \(line 53\): left out \(--force\)' "$out"
edit bid 's/      - bid:             3/      - bid:             9/'
refused "a bid out of range" 'bid.yaml: error: kbolt: line 49: yf_tail: bid 9 out of range \(nblocks 4\)$' \
	check-profile "$img" "$tmp/bid.yaml"
edit succbid 's/succ:            \[ { bid: 3, cnt: 3 } \]/succ:            [ { bid: 4, cnt: 3 } ]/'
refused "a successor's bid out of range" \
	'succbid.yaml: error: kbolt: line 48: yf_tail: successor bid 4 out of range \(nblocks 4\)$' \
	check-profile "$img" "$tmp/succbid.yaml"
edit count 's/{ bid: 1, cnt: 3 }/{ bid: 1, cnt: three }/'
refused "a count that is not a number" \
	'count.yaml: error: kbolt: line 22: cnt: not a number \(at most 9223372036854775807\): three$' \
	check-profile "$img" "$tmp/count.yaml"
edit key 's/^        insns:           1$/        insn:            1/'
refused "an unknown key" 'key.yaml: error: kbolt: line 24: block: unknown key insn$' \
	check-profile "$img" "$tmp/key.yaml"
edit other "s/binary-build-id: $id/binary-build-id: 0123456789abcdef/"
refused "another build-id" 'other.yaml: error: kbolt: recorded on build-id 0123456789abcdef, but .* has build-id' \
	check-profile "$img" "$tmp/other.yaml"
refused "profile merge, which has no vmlinux to find the blocks in" \
	"hand.yaml: error: kbolt: its records name functions \\(BOLT's YAML\\), not addresses" \
	profile merge "$tmp/hand.yaml" -o "$tmp/m.prof"
check "... nothing written" test ! -e "$tmp/m.prof"

# profile-to-bolt --format yaml: kbolt's YAML of in.fdata, for llvm-bolt-19 and for kbolt
yshape() {	# yshape FILE: per function, nblocks and the blocks' bid/insns/offset/succ/calls
	python3 - "$1" <<'PY'
import sys, yaml
n = lambda v: int(v, 0)		# BaseLoader: strings only ("off" is no false)
d = yaml.load(open(sys.argv[1]), Loader=yaml.BaseLoader)
fids = {f['fid']: f['name'] for f in d['functions']}
for f in sorted(d['functions'], key=lambda f: f['name']):
    print(f['name'], f['nblocks'])
    for b in sorted(f.get('blocks', []), key=lambda b: n(b['bid'])):
        succ = sorted((n(s['bid']), n(s['cnt'])) for s in b.get('succ', []) if n(s['cnt']))
        calls = sorted((n(c['off']), fids.get(c['fid'], '?'), n(c['cnt']))
                       for c in b.get('calls', []) if n(c['cnt']))
        print(' ', b['bid'], b['insns'], n(b['hash']) & 0xffff, succ, calls)
PY
}
yweights() {	# yweights FILE: per function, the counts of its successors, calls and events
	python3 - "$1" <<'PY'
import sys, yaml
d = yaml.load(open(sys.argv[1]), Loader=yaml.BaseLoader)
for f in sorted(d['functions'], key=lambda f: f['name']):
    bs = f.get('blocks', [])
    w = sum(int(s['cnt']) for b in bs for s in b.get('succ', [])) + \
        sum(int(c['cnt']) for b in bs for c in b.get('calls', [])) + \
        sum(int(b.get('events', '0')) for b in bs)
    if w:
        print(f['name'], w)
PY
}
out=$("$KBOLT" profile-to-bolt --format yaml -o "$tmp/k.yaml" "$img" "$tmp/in.fdata" 2>&1); rc=$?
check_eq "profile-to-bolt --format yaml: writes the fdata's YAML, quietly" "0 " "$rc $out"
check_eq "... the blocks, successors and calls llvm-bolt-19 -w wrote of the same fdata" \
	"$(yshape "$tmp/hand.yaml")" "$(yshape "$tmp/k.yaml")"
check_match "... its header: lbr, kbolt's origin, address order, xxh3" \
	'profile-flags: +\[ lbr \] +profile-origin: +kbolt profile-to-bolt .* dfs-order: +false +hash-func: +xxh3' \
	"$(head -n 11 "$tmp/k.yaml" | tr '\n' ' ')"
out=$("$KBOLT" check-profile -j "$img" "$tmp/k.yaml"); rc=$?
check_eq "... read back by check-profile: the figures of llvm-bolt-19's own YAML" \
	"0 10 2 8 0 0" "$rc $(kinds <<<"$out")"
"$KBOLT" profile-to-bolt --format yaml -o "$tmp/k2.yaml" "$img" "$tmp/k.yaml"
check_eq "... written again from what was read back: the same weights per function" \
	"$(yweights "$tmp/k.yaml")" "$(yweights "$tmp/k2.yaml")"
check "... the same file" cmp "$tmp/k.yaml" "$tmp/k2.yaml"
if [ -x "$bolt" ]; then
	bopts=(-simplify-conditional-tail-calls=0 -v=1 -o "$tmp/k.bolt")
	"$bolt" "$img" -data="$tmp/k.yaml" -profile-ignore-hash "${bopts[@]}" >"$tmp/kb.log" 2>&1
	printf '%s\n' "$(grep -E 'matched [1-9]|non-empty' "$tmp/kb.log")" | sed 's/^/# /'
	check_match "llvm-bolt-19 -profile-ignore-hash: every function matched by name" \
		'BOLT-INFO: matched 4 functions with identical names' "$(cat "$tmp/kb.log")"
	check_match "... each with a non-empty profile" \
		'BOLT-INFO: 4 out of 4 functions in the binary \(100.0%\) have non-empty execution profile' \
		"$(cat "$tmp/kb.log")"
	check_eq "... no stale profile, no mismatch" "" \
		"$(grep -iE 'stale|did not match|mismatch|no successor|out of bounds' "$tmp/kb.log")"
	"$bolt" "$img" -data="$tmp/k.yaml" "${bopts[@]}" >"$tmp/kh.log" 2>&1
	check_match "... without -profile-ignore-hash, stale: kbolt writes no function hash" \
		'4 \(100.0% of all profiled\) functions have invalid \(possibly stale\) profile' \
		"$(cat "$tmp/kh.log")"
else
	skip "llvm-bolt-19 reads kbolt's YAML" "no $bolt"
fi
# samples: each block's samples as its events
{ printf 'kbolt-profile 1\nbuild-id %s\nrelease -\nrecorder test\n' "$id"
  for a in yf_join yf_tail yf_trap yf_leaf; do
	printf 'S %s 5\n' "$(nm "$img" | awk -v n=$a '$3 == n { print $1 }')"
  done
  printf 'S %x 4\n' $((0x$(nm "$img" | awk '$3 == "yf_trap" { print $1 }') + 7)); } >"$tmp/s.prof"
"$KBOLT" profile-to-bolt --format yaml -o "$tmp/s.yaml" "$img" "$tmp/s.prof"
check_eq "samples: [ sample ], the blocks' events" "[ sample ] 5 5 5 4 5" \
	"$(sed -n 's/.*profile-flags: *//p' "$tmp/s.yaml") $(sed -n 's/^        events: *//p' "$tmp/s.yaml" | tr '\n' ' ' | sed 's/ $//')"
out=$("$KBOLT" check-profile "$img" "$tmp/s.yaml")
check_match "... read back, the same 24 samples" ': of these, 5 samples \(weight 24\), 0 of them disagree' "$out"
# a record with no place in llvm-bolt's blocks: left out, counted, one warning
{ cat "$tmp/in.fdata"; echo "1 yf_trap 7 1 yf_leaf 1 0 2"; } >"$tmp/drop.fdata"
out=$("$KBOLT" profile-to-bolt --format yaml -o "$tmp/d.yaml" "$img" "$tmp/drop.fdata" 2>&1); rc=$?
check_eq "a call into the middle of a function: written without it, one line" "0 1" \
	"$rc $(printf '%s\n' "$out" | wc -l)"
check_match "... which counts it" \
	"drop.fdata: warning: kbolt: 1 records \\(weight 2\\) have no place in llvm-bolt's blocks of $img, such as yf_trap\\+0x7 -> yf_leaf\\+0x1 \\(a call or jump into the middle of another function\\): left out" \
	"$out"
check_eq "... the rest as before" "$(yweights "$tmp/k.yaml")" "$(yweights "$tmp/d.yaml")"
# usage and bad input: one line, nothing written or replaced
echo "previous" >"$tmp/keep.yaml"
usage_refused() {	# usage_refused DESCRIPTION STATUS REGEX ARGS...
	local d=$1 st=$2 re=$3 out rc
	shift 3
	out=$("$KBOLT" "$@" 2>&1); rc=$?
	check_eq "$d: exit $st, one line" "$st 1" "$rc $(printf '%s\n' "$out" | wc -l)"
	check_match "... saying so" "$re" "$out"
	check_eq "... the output left as it was" previous "$(cat "$tmp/keep.yaml")"
}
usage_refused "--format yaml without VMLINUX" 2 \
	'^kbolt: error: profile-to-bolt: --format yaml names functions: give VMLINUX PROFILE$' \
	profile-to-bolt --format yaml -o "$tmp/keep.yaml" "$tmp/in.fdata"
printf '1 yf_join 2 1 yf_join 6 0 3\n1 no_such 2 1 yf_join 6 0 3\n' >"$tmp/other.fdata"
usage_refused "a profile of another kernel" 1 \
	"other.fdata: error: kbolt: line 2: no function no_such in $img" \
	profile-to-bolt --format yaml -o "$tmp/keep.yaml" "$img" "$tmp/other.fdata"
printf 'kbolt-profile 1\nbuild-id %s\nrelease -\nrecorder test\nB %s %s 3 ret\n' "$id" \
	"$(printf %x $((0x$(nm "$img" | awk '$3 == "yf_leaf" { print $1 }') + 1)))" \
	"$(printf %x $((0x$(nm "$img" | awk '$3 == "yf_trap" { print $1 }') + 12)))" >"$tmp/ret.prof"
usage_refused "only returns" 1 \
	'ret.prof: error: kbolt: no records to write \(returns, interrupts, samples among branches and records of no function are left out\)$' \
	profile-to-bolt --format yaml -o "$tmp/keep.yaml" "$img" "$tmp/ret.prof"
check "... and no temporary file left" test -z "$(ls -A "$tmp" | grep '^\.kbolt-')"

# Debian's 6.1: what perf2bolt writes as YAML of the proc profile.  Not llvm-bolt-19 on
# the fixture's blocks only: LLVM decodes a lock prefix as an instruction of its own
# (lock cmpxchg counts 2 in insns), which the fixture has none of
perf2bolt=/usr/lib/llvm-19/bin/perf2bolt
prof=$(proc_profile_61)
case "${OUT:-.build/default}" in *san*) prof= ;; esac
if [ -z "$prof" ] || [ ! -x "$perf2bolt" ]; then
	skip "6.1: perf2bolt's YAML of the proc profile" \
		"no 6.1 kernel or profile, no $perf2bolt, or the sanitized pass"
	done_testing
	exit
fi
"$KBOLT" profile-to-bolt -o "$tmp/proc.bolt" "$prof"
if ! "$perf2bolt" -pa -p "$tmp/proc.bolt" --profile-format=yaml -o "$tmp/proc.yaml" \
	"$VMLINUX_61" >"$tmp/p2b.log" 2>&1; then
	fail "6.1: perf2bolt --profile-format=yaml writes the YAML" "$(tail -n 3 "$tmp/p2b.log")"
	done_testing
	exit 1
fi
out=$("$KBOLT" check-profile "$VMLINUX_61" "$tmp/proc.yaml" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
check_eq "6.1: perf2bolt's YAML ($(grep -c '^  - name:' "$tmp/proc.yaml") functions) agrees with the kernel's code" \
	0 "$rc"
check_match "... no record disagrees" 'proc.yaml: [0-9]+ records .* 0 disagree' "$out"
# what cannot be placed (entry code kbolt does not decode as functions) stays small
dropped=$(sed -n 's/.*records (weight \([0-9]*\)) kbolt cannot place.*/\1/p' <<<"$out")
total=$(sed -n 's/.*proc.yaml: [0-9]* records (weight \([0-9]*\)).*/\1/p' <<<"$out")
check "... the weight left out, ${dropped:-0} of ${total:-?}, is under 2%" \
	test "$(( ${dropped:-0} * 50 ))" -lt "${total:-0}"

# Debian's 6.1: kbolt's own YAML of the proc profile, its blocks numbered as perf2bolt's
# YAML numbers them, read back alike, and matched by llvm-bolt-19
"$KBOLT" profile-to-bolt --format yaml -o "$tmp/k61.yaml" "$VMLINUX_61" "$prof" 2>"$tmp/k61.err"
rc=$?
sed 's/^/# /' "$tmp/k61.err"
nr=$(grep -c '^  - name:' "$tmp/k61.yaml")
check_eq "6.1: profile-to-bolt --format yaml writes the proc profile's YAML ($nr functions)" 0 "$rc"
dropped=$(sed -n 's/.*records (weight \([0-9]*\)) have no place.*/\1/p' "$tmp/k61.err")
total=$(sed -n 's/.*records (weight \([0-9]*\)): .*/\1/p' <<<"$("$KBOLT" check-profile "$VMLINUX_61" "$prof")")
# mostly the functions llvm-bolt-19 builds no CFG of (written with nblocks 0)
check "... the weight left out, ${dropped:-0} of ${total:-?}, is under 20%" \
	test "$(( ${dropped:-0} * 5 ))" -lt "${total:-0}"
out=$("$KBOLT" check-profile "$VMLINUX_61" "$tmp/k61.yaml" 2>&1); rc=$?
printf '%s\n' "$out" | sed 's/^/# /'
check_match "... read back: no record disagrees with the code" 'k61.yaml: [0-9]+ records .* 0 disagree' \
	"$out"
"$KBOLT" profile-to-bolt --format yaml -o "$tmp/k61b.yaml" "$VMLINUX_61" "$tmp/k61.yaml" \
	2>"$tmp/k61b.err"
check_eq "... written again from what was read back: nothing left out, the same weights per function" \
	"$(yweights "$tmp/k61.yaml")" "$(cat "$tmp/k61b.err")$(yweights "$tmp/k61b.yaml")"
python3 - "$tmp/proc.yaml" "$tmp/k61.yaml" >"$tmp/cmp61" <<'PY'
import sys, yaml
def load(p):
    d = yaml.load(open(p), Loader=yaml.CSafeLoader)
    return {f['name']: (f['nblocks'], {b['bid']: (b['hash'] & 0xffff, b['insns'])
            for b in f.get('blocks', [])}) for f in d['functions']}
p2b, kb = load(sys.argv[1]), load(sys.argv[2])
both = sorted(set(p2b) & set(kb))
nb = [n for n in both if p2b[n][0] != kb[n][0]]
blk = [n for n in both if n not in nb and any(p2b[n][1][i] != v
       for i, v in kb[n][1].items() if i in p2b[n][1])]
print(len(both), len(nb), len(blk), ' '.join(nb))
PY
read -r both nb blk names <"$tmp/cmp61"
check "6.1: of the $both functions of both YAMLs, perf2bolt-19's and kbolt's, nblocks differs in ${nb:-?} ($names): at most 3" \
	test "${nb:-9}" -le 3
check_eq "... and no block's offset or insns differs" 0 "$blk"
if [ -x "$bolt" ]; then
	"$bolt" "$VMLINUX_61" -data="$tmp/k61.yaml" -o "$tmp/v61.bolt" -profile-ignore-hash \
		-simplify-conditional-tail-calls=0 -skip-funcs=irq_entries_start,native_safe_halt/1 \
		-v=1 >"$tmp/b61.log" 2>&1
	rm -f "$tmp/v61.bolt"
	grep -E 'BOLT-INFO: matched [1-9]|non-empty|could not be optimized|did not match' \
		"$tmp/b61.log" | sed 's/^/# /'
	matched=$(sed -n 's/BOLT-INFO: matched \([0-9]*\) functions with identical names/\1/p' \
		"$tmp/b61.log")
	check "6.1: llvm-bolt-19 matches ${matched:-none} of the $nr functions by name: all but 5 at most" \
		test "${matched:-0}" -ge $((nr - 5))
	check_eq "... and calls no profile stale" "" "$(grep -i 'possibly stale' "$tmp/b61.log")"
else
	skip "6.1: llvm-bolt-19 reads kbolt's YAML" "no $bolt"
fi
done_testing
