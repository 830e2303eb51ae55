#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kbolt heatmap and the dyno stats of optimize --stats, on Debian's 6.1 with the proc
# profile scripts/bench-optimize caches (recorded first if missing).  The SVG is
# well-formed XML whose lit cells are the lines the footprint reports; the PNG decodes
# with every chunk's CRC right; the profile layout's footprint is no larger than the
# original's and it takes fewer branches; the dyno counts add up.  Bad inputs are refused with one line naming the
# file, and nothing is written.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
sanitized=0
case "${OUT:-.build/default}" in *san*) sanitized=1 ;; esac

# usage: exit 2, one line, before any file is read
usage_error() {	# usage_error DESCRIPTION REGEX ARGS...
	local d=$1 re=$2 err
	shift 2
	err=$("$KBOLT" "$@" 2>&1 >/dev/null)
	if [ $? = 2 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] &&
	   printf '%s\n' "$err" | grep -Eq -- "$re"; then
		ok "$d"
	else
		fail "$d" "$err"
	fi
}
usage_error "heatmap without -o" '^kbolt: error: usage: kbolt heatmap ' heatmap vmlinux p.prof
usage_error "heatmap with one file" '^kbolt: error: usage: kbolt heatmap ' heatmap vmlinux -o x.svg
usage_error "--optimized is heatmap's only" '^kbolt: error: --optimized does not apply to optimize$' \
	optimize vmlinux --profile p.prof --optimized x -o out
usage_error "heatmap takes no --stats" 'does not apply to heatmap$' heatmap vmlinux p.prof -o x.svg --stats
usage_error "heatmap: prefix h" '^kbolt: error: usage: kbolt heatmap ' h vmlinux

V=$VMLINUX_61
need_proc_profile_61 "heatmap tests"

py() { /usr/bin/python3 -c "$@"; }

# --- a profile layout, with its dyno stats ---
if "$KBOLT" optimize "$V" --profile "$prof" -o "$tmp/p" --stats -j >"$tmp/p.stats" 2>"$tmp/p.err"; then
	ok "6.1: profile layout written, with --stats -j"
else
	fail "6.1: profile layout written, with --stats -j" "$(tail -n 5 "$tmp/p.err")"
fi
d='r["dyno_stats"]'
keys=$(json_get "$tmp/p.stats" "' '.join(sorted($d['before']))")
check_eq "dyno_stats: every key, before and after" \
	"conditional ext_tsp_score fall_throughs non_taken_conditional taken taken_conditional total_branches unconditional_jmps" \
	"$keys"
sums=$(json_get "$tmp/p.stats" "all(
	s['taken_conditional'] + s['non_taken_conditional'] == s['conditional'] and
	s['taken_conditional'] + s['unconditional_jmps'] == s['taken'] and
	s['conditional'] + s['unconditional_jmps'] == s['total_branches']
	for s in ($d['before'], $d['after']))")
check_eq "dyno_stats: taken + non-taken = conditional, and the sums, before and after" True "$sums"
same=$(json_get "$tmp/p.stats" "$d['before']['conditional'] == $d['after']['conditional']")
check_eq "dyno_stats: as many conditional branches run before as after" True "$same"
tb=$(json_get "$tmp/p.stats" "$d['before']['taken']")
ta=$(json_get "$tmp/p.stats" "$d['after']['taken']")
if [ -n "$ta" ] && [ -n "$tb" ] && [ "$ta" -lt "$tb" ]; then
	ok "dyno_stats: the profile layout takes fewer branches ($tb before, $ta after)"
else
	fail "dyno_stats: the profile layout takes fewer branches" "before: $tb, after: $ta"
fi
if [ $sanitized = 1 ]; then
	# every run of the sanitized build on the 6.1 kernel takes minutes: one of each
	skip "text --stats and the rest" "sanitized build: the JSON run and one heatmap only"
else
	out=$("$KBOLT" optimize "$V" --profile "$prof" -o "$tmp/p2" --stats 2>&1)
	check_match "text --stats prints the dyno stats" '^ +[0-9]+ +[0-9]+ +\( *[-+][0-9.]+%\)  taken branches$' "$out"
	out=$("$KBOLT" optimize "$V" --layout random --seed 1 --funcs 'tcp_v4_*' -o "$tmp/r" --stats 2>&1)
	if printf '%s\n' "$out" | grep -q 'dyno stats'; then
		fail "no dyno stats without a profile" "$out"
	else
		ok "no dyno stats without a profile"
	fi
fi

# --- heatmap: SVG, both panels ---
svg=$tmp/heat.svg
if "$KBOLT" heatmap "$V" "$prof" --optimized "$tmp/p" -o "$svg" -j >"$tmp/heat.json" 2>"$tmp/heat.err"; then
	ok "heatmap: SVG of both panels written"
else
	fail "heatmap: SVG of both panels written" "$(tail -n 5 "$tmp/heat.err")"
fi
cells=$(py "
import xml.etree.ElementTree as ET, sys
ns = '{http://www.w3.org/2000/svg}'
root = ET.parse(sys.argv[1]).getroot()
n = {g.get('id'): sum(1 for r in g.iter(ns + 'rect') if r.get('class') == 'c')
     for g in root.iter(ns + 'g')}
print(n.get('before'), n.get('after'))" "$svg" 2>&1)
lines=$(json_get "$tmp/heat.json" 'r["before"]["lines"], r["after"]["lines"]' | tr -d '(),')
check_eq "SVG is well-formed XML; its lit cells are the lines reported" "$lines" "$cells"
fp=$(json_get "$tmp/heat.json" '"%d %d %d %d" % (r["before"]["lines"], r["after"]["lines"], r["before"]["pages"], r["after"]["pages"])')
read -r lb la pb pa <<<"$fp"
if [ -n "$pa" ] && [ "$la" -le "$lb" ] && [ "$pa" -le "$pb" ] && [ "$lb" -gt 1000 ]; then
	ok "footprint of the profile layout: $lb -> $la lines, $pb -> $pa pages"
else
	fail "footprint of the profile layout no larger" "$fp"
fi

if [ $sanitized = 1 ]; then
	done_testing
	exit 0
fi

# --- heatmap: PNG, one panel, text summary ---
png=$tmp/heat.png
out=$("$KBOLT" heatmap "$V" "$prof" -o "$png" 2>&1)
check_match "heatmap: PNG written, footprint printed" \
	"^footprint before: $lb lines of 64 bytes, $pb pages of 4 KiB \\(" "$out"
png_ok=$(py "
import struct, sys, zlib
d = open(sys.argv[1], 'rb').read()
assert d[:8] == b'\x89PNG\r\n\x1a\n', 'signature'
p, idat, types = 8, b'', []
while p < len(d):
    n, = struct.unpack('>I', d[p:p + 4])
    t, body = d[p + 4:p + 8], d[p + 8:p + 8 + n]
    crc, = struct.unpack('>I', d[p + 8 + n:p + 12 + n])
    assert zlib.crc32(t + body) & 0xffffffff == crc, 'CRC of ' + t.decode()
    types.append(t.decode())
    if t == b'IHDR':
        w, h, depth, colour = struct.unpack('>IIBB', body[:10])
    if t == b'IDAT':
        idat += body
    p += 12 + n
assert types[0] == 'IHDR' and types[-1] == 'IEND' and 'IDAT' in types, types
raw = zlib.decompress(idat)
assert (depth, colour) == (8, 2) and len(raw) == (3 * w + 1) * h, 'size'
assert all(raw[y * (3 * w + 1)] == 0 for y in range(h)), 'filter'
print('ok', w, h)" "$png" 2>&1)
check_match "PNG: signature, IHDR/IDAT/IEND CRCs, decodes to its size" '^ok [0-9]+ [0-9]+$' "$png_ok"

# --- the same file for --optimized: the panels agree ---
same=$("$KBOLT" heatmap "$V" "$prof" --optimized "$V" -o "$tmp/same.svg" -j 2>&1)
check_eq "--optimized VMLINUX itself: the same footprint after" True \
	"$(printf '%s\n' "$same" | py 'import json, sys; r = json.load(sys.stdin); print(r["before"] == dict(r["after"], file=r["before"]["file"]))' 2>&1)"

# --- bad input: one line naming the file, nothing written ---
# refused DESCRIPTION REGEX OUT ARGS...: exit 1 or 2, one line matching REGEX, no OUT
refused() {
	local d=$1 re=$2 o=$3 err rc
	shift 3
	err=$("$KBOLT" heatmap "$@" -o "$o" 2>&1 >/dev/null)
	rc=$?
	if [ $rc -ne 0 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] &&
	   printf '%s\n' "$err" | grep -Eq -- "$re" && [ ! -e "$o" ] &&
	   [ -z "$(ls -A "$(dirname "$o")" 2>/dev/null | grep '^\.kbolt-')" ]; then
		ok "$d"
	else
		fail "$d" "exit $rc" "$err"
	fi
}
mkdir -p "$tmp/bad"
refused "missing profile refused" "^$tmp/bad/nosuch.prof: error: kbolt: No such file" \
	"$tmp/bad/x.svg" "$V" "$tmp/bad/nosuch.prof"
sed 's/^build-id .*/build-id 0123456789abcdef0123456789abcdef01234567/' "$prof" >"$tmp/bad/other.prof"
refused "profile of another kernel (build-id) refused" \
	"^$tmp/bad/other.prof: error: kbolt: recorded on build-id 0123" "$tmp/bad/x.svg" \
	"$V" "$tmp/bad/other.prof"
refused "output in a missing directory refused before any work" \
	"^$tmp/bad/nodir/x.svg: error: kbolt: cannot create a file in" "$tmp/bad/nodir/x.svg" \
	"$V" "$prof"
mkdir -p "$tmp/bad/dir.svg"
err=$("$KBOLT" heatmap "$V" "$prof" -o "$tmp/bad/dir.svg" 2>&1 >/dev/null)
if [ $? = 1 ] && printf '%s\n' "$err" | grep -q "^$tmp/bad/dir.svg: error: kbolt: cannot rename" &&
   [ -z "$(ls -A "$tmp/bad/dir.svg")" ] && [ -z "$(ls -A "$tmp/bad" | grep '^\.kbolt-')" ]; then
	ok "output that is a directory: refused, temporary file removed"
else
	fail "output that is a directory: refused, temporary file removed" "$err"
fi
refused "an output that is neither .svg nor .png refused" "heatmap: -o FILE must end in .svg or .png" \
	"$tmp/bad/x.gif" "$V" "$prof"
refused "an --optimized file of another kernel refused" "/vmlinux: error: kbolt: not an output of kbolt optimize for" \
	"$tmp/bad/x.svg" "$V" "$prof" --optimized "$VMLINUX_612"
done_testing
