#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Portable profiles (kbolt profile portable; Documentation/profile-format.rst, "The
# portable profile"): written from an address profile, deterministic, read back, and
# matched onto another build.  On the hash fixture (selftests/fixtures/hash.S) and a
# "next build" of it whose functions all moved, one changed and a clone renumbered:
# every kind of match, the records at the right new addresses; malformed files
# refused with a located line.  Blocks matched one for one (hash_twin, two blocks of
# one code, where the next build has one), and records that no longer agree with the
# code counted before they are dropped.  Source files (selftests/fixtures/portable.c
# as a/dup.c and b/dup.c): with DWARF, the compile unit's path tells two static
# functions of one name and basename apart, whatever the link order; a function
# global in one build and static in the next still matched, with DWARF or without.
# On Debian's 6.1 cloud kernel (its proc profile,
# scripts/cached-profile): written twice the same, matched back exactly, laid out
# and verified; every function's path (no name and file twice); onto the generic
# flavour of the same source (scripts/fetch-kernels 6.1-generic), if fetched: most
# functions exact, few records disagreeing (counted), laid out and
# verified, while the address profile of the cloud kernel is still refused.  The
# translation table: the cloud kernel laid out, its output profiled in the boot lab
# (cached by build-id), the profile translated to the input's addresses, compared
# with the input's own profile, made portable and matched onto the generic kernel.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac

build() {	# build OUT CPPFLAGS...: the hash fixture, linked like a vmlinux
	local out=$1
	shift
	gcc "$@" -c "$top/selftests/fixtures/hash.S" -o "$out.o" &&
		ld -q -e _text -T "$top/selftests/fixtures/vmlinux.lds" --no-warn-rwx-segments \
			-o "$out" "$out.o"
}
addr() {	# addr IMAGE SYMBOL OFFSET: hex address of SYMBOL+OFFSET
	local a
	a=$(nm "$1" | awk -v s="$2" '$3 == s {print $1}')
	printf '%x' $((0x$a + $3))
}
if ! build "$tmp/h1" || ! build "$tmp/h2" -DSHIFT -DCHANGE -DCLONE; then
	fail "the hash fixture assembled and linked twice"
	done_testing
	exit
fi
# records of the first build: hash_a's jz both ways, its call; callee_b.isra.0's
# return; hash_reg's jz, and its changed block (bb2) run through
a() { addr "$tmp/h1" "$@"; }
{ printf '# kbolt profile\nkbolt-profile 1\nbuild-id -\nrelease -\nrecorder test\n'
  echo "B $(a hash_a 0x27) $(a hash_a 0x30) 5 jcc"
  echo "F $(a hash_a 0x27) $(a hash_a 0x29) 3"
  echo "B $(a hash_a 0x2e) $(a hash_a 0x37) 3 jmp"
  echo "B $(a hash_a 0) $(a callee_a 0) 8 call"
  echo "B $(a callee_b.isra.0 0x39) $(a hash_b 5) 2 ret"
  echo "B $(a hash_reg 0x27) $(a hash_reg 0x30) 4 jcc"
  echo "F $(a hash_reg 0x30) $(a hash_reg 0x34) 4"
  echo "B $(a hash_off 0x27) $(a hash_off 0x30) 2 jcc"
  echo "B $(a hash_reg 0x34) ffffffffc0000000 1 jmp"; } >"$tmp/h1.prof"

out=$("$KBOLT" profile portable "$tmp/h1" "$tmp/h1.prof" -o "$tmp/h1.port" 2>&1)
check_eq "profile portable: written, quietly" "" "$out"
check_match "... 9 records, the one with an end outside any function left out" \
	'^# 9 records, 1 left out' "$(cat "$tmp/h1.port")"
check_match "... functions by name, file ('-': global), hash, size and blocks" \
	'function hash_a - [0-9a-f]{16} 58 4
block 0 7 [0-9a-f]{16} [0-9a-f]{16}
block 41 2 ' "$(cat "$tmp/h1.port")"
check_eq "... records by function, block and instruction" \
	"F 0.0.6 0.1.0 3|B 0.0.6 0.2.0 5 jcc" \
	"$(grep -E '^(B 0\.0\.6 |F 0\.0\.6 )' "$tmp/h1.port" | paste -sd'|')"
"$KBOLT" profile portable "$tmp/h1" "$tmp/h1.prof" -o "$tmp/h1b.port"
check "... the same bytes when written again" cmp "$tmp/h1.port" "$tmp/h1b.port"

figures() {	# figures JSON KEY...: the values of the portable report's keys
	local keys=$1
	shift
	json_get "$keys" "' '.join(str(r['portable'][k]) for k in '$*'.split())"
}
"$KBOLT" check-profile -j "$tmp/h2" "$tmp/h1.port" >"$tmp/h2.json" 2>&1
check_eq "matched onto the next build: 3 exact, 1 by block hash, 2 clones (an .isra renumbered, a .part made), none dropped" \
	"3 1 2 0 8 8 0" "$(figures "$tmp/h2.json" exact by_hash clones dropped records \
			   records_matched records_disagree)"
check_eq "... hash_reg's changed block matched by its loose hash, the others the same" \
	"3 1 0" "$(figures "$tmp/h2.json" blocks_exact blocks_loose blocks_dropped)"
# the records, found again at the new addresses: the portable form of the match is
# the portable form of the first build's profile, every function moved by 0x40
b() { addr "$tmp/h2" "$@"; }
{ printf '# kbolt profile\nkbolt-profile 1\nbuild-id -\nrelease -\nrecorder test\n'
  echo "B $(b hash_a 0x27) $(b hash_a 0x30) 5 jcc"
  echo "F $(b hash_a 0x27) $(b hash_a 0x29) 3"
  echo "B $(b hash_a 0x2e) $(b hash_a 0x37) 3 jmp"
  echo "B $(b hash_a 0) $(b callee_a 0) 8 call"
  echo "B $(b callee_b.isra.1 0x39) $(b hash_b 5) 2 ret"
  echo "B $(b hash_reg 0x27) $(b hash_reg 0x30) 4 jcc"
  echo "F $(b hash_reg 0x30) $(b hash_reg 0x34) 4"
  echo "B $(b hash_off.part.0 0x27) $(b hash_off.part.0 0x30) 2 jcc"; } >"$tmp/h2.prof"
"$KBOLT" profile portable "$tmp/h2" "$tmp/h1.port" -o "$tmp/h2m.port" &&
	"$KBOLT" profile portable "$tmp/h2" "$tmp/h2.prof" -o "$tmp/h2.port"
check_eq "... its 8 records at the new addresses: as a profile recorded there" \
	"$(grep '^[BF] ' "$tmp/h2.port" | wc -l) $(grep '^[BF] ' "$tmp/h2.port" | sha256sum)" \
	"8 $(grep '^[BF] ' "$tmp/h2m.port" | sha256sum)"

# a build by ThinLTO, whose promoted locals carry ".llvm.<hash>" (Clang): the same two
# functions found under their new names
if build "$tmp/h3" -DSHIFT -DTHINLTO; then
	"$KBOLT" check-profile -j "$tmp/h3" "$tmp/h1.port" >"$tmp/h3.json" 2>&1
	check_eq "onto a ThinLTO build (.llvm.N suffixes): 4 exact, the 2 renamed as clones, none dropped" \
		"4 0 2 0 8" "$(figures "$tmp/h3.json" exact by_hash clones dropped records_matched)"
else
	fail "the hash fixture assembled and linked with THINLTO"
fi

refused() {	# refused DESCRIPTION REGEX FILE: check-profile refuses FILE saying so
	local out rc
	out=$("$KBOLT" check-profile "$tmp/h2" "$3" 2>&1); rc=$?
	check_eq "$1: exit 1" 1 "$rc"
	check_match "... saying so" "$2" "$out"
}
sed 's/^B 0\.0\.6 0\.2\.0/B 0.0.6 0.9.0/' "$tmp/h1.port" >"$tmp/bad.port"
refused "a record's place is not in its function" \
	"^$tmp/bad.port: error: kbolt: line [0-9]+: a place not in the functions above: B 0.0.6 0.9.0" \
	"$tmp/bad.port"
sed "s/^kbolt-portable 2/kbolt-portable 3/" "$tmp/h1.port" >"$tmp/bad.port"
refused "another version" "line 2: unsupported format version" "$tmp/bad.port"
sed '0,/^block/{/^block/d}' "$tmp/h1.port" >"$tmp/bad.port"
refused "a function with a block missing" 'line [0-9]+: malformed: block 41 2 ' "$tmp/bad.port"
sed 's/^B 0\.0\.6 0\.2\.0 5 jcc/B 0.0.6+x 0.2.0 5 jcc/' "$tmp/h1.port" >"$tmp/bad.port"
refused "a malformed place" 'line [0-9]+: malformed: B 0.0.6\+x' "$tmp/bad.port"
sed 's/^\(function hash_a - \)[0-9a-f]*/\1nothex/' "$tmp/h1.port" >"$tmp/bad.port"
refused "a malformed hash" 'line [0-9]+: malformed: function hash_a - nothex' "$tmp/bad.port"
sed 's/ hash_reg / hash_gone /; s/ hash_a / hash_gone2 /; s/ hash_b / hash_gone3 /; s/ callee_a / callee_gone /; s/ callee_b.isra.0 / gone.isra.0 /; s/ hash_off / gone4 /' \
	"$tmp/h1.port" >"$tmp/none.port"
refused "no function of the profile in the build" \
	"error: kbolt: none of its 8 records matched $tmp/h2's functions" "$tmp/none.port"
out=$("$KBOLT" profile merge "$tmp/h1.port" -o "$tmp/m.prof" 2>&1); rc=$?
check_eq "profile merge refuses a portable profile: exit 1" "1 no output" \
	"$rc $([ -e "$tmp/m.prof" ] && echo output || echo no output)"
check_match "... saying what to do" 'a portable profile has no addresses until matched' "$out"

out=$("$KBOLT" profile translate "$tmp/h1" "$tmp/h1.prof" -o "$tmp/t.prof" 2>&1); rc=$?
check_eq "profile translate refuses a vmlinux kbolt did not write: exit 1, nothing written" \
	"1 no output" "$rc $([ -e "$tmp/t.prof" ] && echo output || echo no output)"
check_match "... saying so" "^$tmp/h1: error: kbolt: no .kbolt.bat section: not an output of kbolt optimize" "$out"

# --- block matching, one for one; disagreeing records counted ---
# hash_twin (selftests/fixtures/hash.S): bb0 +0, its jz +3; bb1 +5, its jmp +7; bb2 +9,
# the same code as bb1, its jmp +0xb; bb3 +0xd
twin_prof() {	# twin_prof IMAGE: records of hash_twin in IMAGE, every block run through
	local t
	t() { addr "$1" hash_twin "$2"; }
	printf '# kbolt profile\nkbolt-profile 1\nbuild-id -\nrelease -\nrecorder test\n'
	echo "B $(t "$1" 3) $(t "$1" 9) 5 jcc"
	echo "F $(t "$1" 3) $(t "$1" 5) 3"
	echo "B $(t "$1" 7) $(t "$1" 0xd) 3 jmp"
	echo "B $(t "$1" 0xb) $(t "$1" 0xd) 5 jmp"
}
if build "$tmp/h3" -DTWIN && build "$tmp/h4" -DRETARGET; then
	twin_prof "$tmp/h1" >"$tmp/twin.prof"
	"$KBOLT" profile portable "$tmp/h1" "$tmp/twin.prof" -o "$tmp/twin.port"
	"$KBOLT" check-profile -j "$tmp/h3" "$tmp/twin.port" >"$tmp/h3.json" 2>&1
	check_eq "blocks one for one: of two old blocks of the same code, the one new block that has it goes to one (3 same, 1 dropped)" \
		"1 3 0 1" "$(figures "$tmp/h3.json" by_hash blocks_exact blocks_loose blocks_dropped)"
	check_eq "... the dropped block's records dropped, not given to the other's: 2 of 4 matched, none disagreeing" \
		"4 2 0" "$(figures "$tmp/h3.json" records records_matched records_disagree)"
	"$KBOLT" check-profile -j "$tmp/h4" "$tmp/twin.port" >"$tmp/h4.json" 2>&1
	check_eq "a jz that goes elsewhere in the next build: its taken record counted as disagreeing, then dropped (3 of 4 matched, 1 disagrees)" \
		"4 3 1" "$(figures "$tmp/h4.json" records records_matched records_disagree)"
	check_eq "... and check-profile finds none of the records kept disagreeing" 0 \
		"$(json_get "$tmp/h4.json" 'r["disagree"]')"
else
	fail "the hash fixture assembled with -DTWIN and -DRETARGET"
fi

# --- source files: the compile unit's path, and a function made static ---
# portable.c as a/dup.c (with flip) and b/dup.c, linked after hash.S: BUILD 1 in that
# order, BUILD 2 in the other with flip static; with DWARF (-g) or without
build_dup() {	# build_dup OUT FIRST SECOND CFLAGS...: hash.S, FIRST.o, SECOND.o linked
	local out=$1 first=$2 second=$3 c=(-O2 -fno-asynchronous-unwind-tables -fno-pic
		-mcmodel=kernel -fno-stack-protector)
	shift 3
	mkdir -p "$tmp/src/a" "$tmp/src/b" &&
		cp "$top/selftests/fixtures/portable.c" "$tmp/src/a/dup.c" &&
		cp "$top/selftests/fixtures/portable.c" "$tmp/src/b/dup.c" &&
		(cd "$tmp/src" && gcc "${c[@]}" "$@" -DFLIP -c a/dup.c -o "$out.a.o" &&
		 gcc "${c[@]}" "$@" -c b/dup.c -o "$out.b.o") &&
		gcc -c "$top/selftests/fixtures/hash.S" -o "$out.h.o" &&
		ld -q -e _text -T "$top/selftests/fixtures/vmlinux.lds" --no-warn-rwx-segments \
			-z noexecstack -o "$out" "$out.h.o" "$out.$first.o" "$out.$second.o"
}
nth() {	# nth IMAGE SYMBOL N: hex address of the Nth SYMBOL, by address
	nm -n "$1" | awk -v s="$2" -v n="$3" '$3 == s && ++k == n {print $1}'
}
dup_prof() {	# dup_prof IMAGE: samples in the first dup (5), the second (7), flip (9)
	printf '# kbolt profile\nkbolt-profile 1\nbuild-id -\nrelease -\nrecorder test\n'
	echo "S $(nth "$1" dup 1) 5"
	echo "S $(nth "$1" dup 2) 7"
	echo "S $(nth "$1" flip 1) 9"
}
dup_portable() {	# dup_portable NAME: dup_prof of $tmp/NAME made portable, NAME.port
	dup_prof "$tmp/$1" >"$tmp/$1.prof" &&
		"$KBOLT" profile portable "$tmp/$1" "$tmp/$1.prof" -o "$tmp/$1.port"
}
placed() {	# placed PORTABLE: each record's count by its function's name and file
	awk '$1 == "function" {f[n++] = $2 " " $3} $1 == "B" {split($2, p, "."); print f[p[1]], $4}' "$1" |
		sort | paste -sd'|'
}
if build_dup "$tmp/d1" a b -g && build_dup "$tmp/d2" b a -g -DFLIP_STATIC &&
   build_dup "$tmp/n1" a b && build_dup "$tmp/n2" b a -DFLIP_STATIC; then
	dup_portable d1
	check_eq "with DWARF, FILE is the compile unit's path: two static dup() of dup.c told apart" \
		"dup a/dup.c 5|dup b/dup.c 7|flip a/dup.c 9" "$(placed "$tmp/d1.port")"
	"$KBOLT" profile portable "$tmp/d2" "$tmp/d1.port" -o "$tmp/d2.port"
	check_eq "... matched onto a build that links them in the other order: each record in its own directory's dup" \
		"dup a/dup.c 5|dup b/dup.c 7|flip a/dup.c 9" "$(placed "$tmp/d2.port")"
	"$KBOLT" check-profile -j "$tmp/d2" "$tmp/d1.port" >"$tmp/d2.json" 2>&1
	check_eq "... flip, static there, matched exactly too (3 exact, none dropped)" \
		"3 0 0" "$(figures "$tmp/d2.json" exact by_hash dropped)"
	dup_portable n1
	check_eq "without DWARF, FILE is the STT_FILE symbol's, '-' for the global flip" \
		"dup dup.c 5|dup dup.c 7|flip - 9" "$(placed "$tmp/n1.port")"
	"$KBOLT" check-profile -j "$tmp/n2" "$tmp/n1.port" >"$tmp/n2.json" 2>&1
	check_eq "... flip, static in the next build (file dup.c), still matched: 3 exact, none dropped" \
		"3 0 0" "$(figures "$tmp/n2.json" exact by_hash dropped)"
	"$KBOLT" check-profile -j "$tmp/d2" "$tmp/n1.port" >"$tmp/dn.json" 2>&1
	check_eq "... a profile without paths matched onto a build with DWARF: 3 exact, none dropped" \
		"3 0 0" "$(figures "$tmp/dn.json" exact by_hash dropped)"
	sed 's/^kbolt-portable 2$/kbolt-portable 1/' "$tmp/n1.port" >"$tmp/v1.port"
	"$KBOLT" check-profile -j "$tmp/d2" "$tmp/v1.port" >"$tmp/v1.json" 2>&1
	check_eq "... and so is one of format version 1 (FILE a basename): 3 exact, none dropped" \
		"3 0 0" "$(figures "$tmp/v1.json" exact by_hash dropped)"
else
	fail "the source-file fixture compiled and linked (gcc)"
fi

# --- Debian's kernels ---
cloud=$VMLINUX_61
generic=$KBOLT_CACHE/$KERNEL_61_GENERIC_RELEASE/vmlinux
[ -n "$VMLINUX_61" ] || generic=
if [ ! -s "$cloud" ]; then
	skip "Debian 6.1: portable profile" "$no_kernels"
	done_testing
	exit
fi
prof=$("$top/scripts/cached-profile" "$cloud" proc 2>/dev/null) ||
	{ fail "6.1: the proc profile recorded (scripts/cached-profile)"; done_testing; exit; }
progress "6.1: the proc profile made portable"
check "6.1: profile portable" "$KBOLT" profile portable "$cloud" "$prof" -o "$tmp/c.port"
"$KBOLT" profile portable "$cloud" "$prof" -o "$tmp/c2.port"
check "... the same bytes when written again" cmp "$tmp/c.port" "$tmp/c2.port"
"$KBOLT" profile portable "$cloud" "$tmp/c.port" -o "$tmp/c3.port"
check_eq "... matched back onto its own build and written again: the same records" \
	"$(grep -v '^#' "$tmp/c.port" | sha256sum)" "$(grep -v '^#' "$tmp/c3.port" | sha256sum)"
"$KBOLT" check-profile -j "$cloud" "$tmp/c.port" >"$tmp/c.json"
check_eq "... onto its own build: every function exact, every record kept, none disagrees" \
	"0 0 0 0 0" "$(figures "$tmp/c.json" by_hash clones dropped records_disagree) $(json_get "$tmp/c.json" 'r["disagree"] + r["portable"]["records"] - r["portable"]["records_matched"]')"
# every function of the kernel sampled once: its name and file in the portable form
{ printf '# kbolt profile\nkbolt-profile 1\nbuild-id -\nrelease -\nrecorder test\n'
  nm "$cloud" | awk '$2 ~ /^[tT]$/ {print "S " $1 " 1"}' | sort -u; } >"$tmp/all.prof"
"$KBOLT" profile portable "$cloud" "$tmp/all.prof" -o "$tmp/all.port"
check_eq "6.1: every function's FILE the path of its compile unit: no two functions of one name and file (50 of basenames)" \
	"0" "$(awk '$1 == "function" {print $2, $3}' "$tmp/all.port" | sort | uniq -d | wc -l)"
check_eq "... compute_score of net/ipv4/udp.c and of net/ipv6/udp.c, both udp.c, told apart" \
	"compute_score net/ipv4/udp.c|compute_score net/ipv6/udp.c" \
	"$(awk '$1 == "function" && $2 == "compute_score" {print $2, $3}' "$tmp/all.port" | sort | paste -sd'|')"
check_eq "... head_64.S, an absolute name (GNU as) against the build directory, from the tree's root too" \
	"verify_cpu arch/x86/kernel/head_64.S" \
	"$(awk '$1 == "function" && $2 == "verify_cpu" {print $2, $3}' "$tmp/all.port")"
# --- the translation table: a profile recorded on the output, for the input ---
progress "6.1: laid out by its proc profile, the output profiled in the boot lab"
"$KBOLT" optimize "$cloud" --profile "$prof" -o "$tmp/c.opt" ||
	fail "6.1: laid out by the proc profile"
check_match "the output has a translation table, not loaded" \
	'^ *\[ *[0-9]+\] \.kbolt\.bat +PROGBITS +0+ [0-9a-f]+ [0-9a-f]+ 00 +0 +0 +1$' \
	"$(readelf -SW "$tmp/c.opt" | sed 's/^ *//')"
check_eq "... the output's program headers (what is loaded) are the input's" \
	"$(readelf -lW "$tmp/c.opt" | grep LOAD | sha256sum)" "$(readelf -lW "$cloud" | grep LOAD | sha256sum)"
oprof=$("$top/scripts/cached-profile" "$tmp/c.opt" proc 2>/dev/null) ||
	fail "the output's proc profile recorded (scripts/cached-profile)"
if [ -n "$oprof" ]; then
	"$KBOLT" profile translate "$tmp/c.opt" "$oprof" -o "$tmp/t.prof"
	check_match "profile translate: the input's build-id" \
		"^build-id $(readelf -n "$cloud" | sed -n 's/.*Build ID: *//p')\$" "$(cat "$tmp/t.prof")"
	"$KBOLT" check-profile -j "$cloud" "$tmp/t.prof" >"$tmp/t.json"
	d=$(json_get "$tmp/t.json" '"%d of %d" % (r["disagree"], r["records"])')
	check_match "... it agrees with the input's code: $d records disagree (at most 0.1%)" \
		'^[0-9]+ of [0-9]+$' "$d"
	check "... ($d)" test $((1000 * ${d% of *})) -le "${d#* of }"
	w=$(python3 - "$prof" "$tmp/t.prof" <<'EOF2'
import sys
def load(f):
    d = {}
    for l in open(f):
        p = l.split()
        if p and p[0] in 'BF' and len(p) >= 4:
            k = (p[1], p[2], p[4] if p[0] == 'B' else 'ft')
            d[k] = d.get(k, 0) + int(p[3])
    return d
a, b = load(sys.argv[1]), load(sys.argv[2])
print('%.1f' % (100.0 * sum(v for k, v in a.items() if k in b) / sum(a.values())))
EOF2
)
	check_match "... 95% of the weight of the input's own profile in records it has too: $w%" \
		'^(9[5-9]|100)\.' "$w"
	check "... made portable on the input" \
		"$KBOLT" profile portable "$cloud" "$tmp/t.prof" -o "$tmp/t.port"
fi
rm -f "$tmp/c.opt"
if [ -z "$generic" ] || [ ! -s "$generic" ]; then
	skip "6.1 generic: the cloud profile matched" "no $generic (scripts/fetch-kernels 6.1-generic)"
	done_testing
	exit
fi
progress "6.1 generic: the cloud kernel's portable profile matched and laid out"
"$KBOLT" check-profile -j "$generic" "$tmp/c.port" >"$tmp/g.json"
f="$(figures "$tmp/g.json" exact by_hash clones dropped) $(json_get "$tmp/g.json" '"%.2f" % (100.0 * r["portable"]["weight_matched"] / r["portable"]["weight"])')"
echo "# 6.1 cloud proc profile onto 6.1 generic: exact, by hash, clones, dropped, weight%: $f"
check_match "6.1 generic: 85% of the functions exact, 95% of the weight matched" \
	'^[0-9]+ [0-9]+ [0-9]+ [0-9]+ (9[5-9]|100)\.' "$f"
read -r ex bh cl dr _ <<< "$f"
check "... ($ex exact of $((ex + bh + cl + dr)))" test $((ex * 100)) -ge $(((ex + bh + cl + dr) * 85))
d=$(json_get "$tmp/g.json" '"%d %d %d" % (r["portable"]["records_disagree"], r["portable"]["records"], r["disagree"])')
echo "# records disagreeing with the generic kernel's code (counted, then dropped), records, disagreeing after: $d"
read -r dis recs after <<< "$d"
check "... records disagreeing with the generic kernel's code counted before they are dropped: $dis of $recs (at most 1%)" \
	test $((100 * dis)) -le "$recs"
check_eq "... none of those kept disagrees" 0 "$after"
out=$("$KBOLT" check-profile "$generic" "$prof" 2>&1); rc=$?
check_eq "... while the cloud kernel's address profile is refused: exit 1" 1 "$rc"
check_match "... as a profile of another kernel" 'a profile of another kernel' "$out"
"$KBOLT" optimize "$generic" --profile "$tmp/c.port" -o "$tmp/g.out" --stats -j >"$tmp/gs.json"
check_eq "6.1 generic laid out by the cloud kernel's portable profile: verified" 0 "$?"
check_eq "... --stats -j reports the match as check-profile does" \
	"$(figures "$tmp/g.json" exact by_hash clones dropped records_matched)" \
	"$(figures "$tmp/gs.json" exact by_hash clones dropped records_matched)"
if [ -s "$tmp/t.port" ]; then
	"$KBOLT" check-profile -j "$generic" "$tmp/t.port" >"$tmp/gt.json"
	w2=$(json_get "$tmp/gt.json" '"%.2f" % (100.0 * r["portable"]["weight_matched"] / r["portable"]["weight"])')
	echo "# the chain (output's profile, translated, portable) onto 6.1 generic: $w2% of the weight matched"
	check_match "... the chain, profile of the output translated and made portable: 95% matched too" \
		'^(9[5-9]|100)\.' "$w2"
fi
rm -f "$tmp/g.out"
done_testing
