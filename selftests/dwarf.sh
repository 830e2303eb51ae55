#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The debug information of moved code (optimize --update-debug, verify --debug-info).
# On the flow fixture assembled with DWARF 4 and with DWARF 5 (fixtures/flow.S, one
# instruction a source line so that every instruction has its own line row, and call
# frame information that changes from block to block): random layouts with
# --update-debug are written and pass verify --debug-info (the default writes the same
# bytes); an output with --no-update-debug fails that proof, for the line rows and for
# the CFI (it can fail); addr2line and gdb's info line give every moved instruction's
# old line at its new address, and readelf's CFI table (fixtures/cfi_rows.py) its old
# rules; llvm-dwarfdump --verify finds nothing new; the
# relocations of .debug_line, .debug_info and .debug_frame hold what they say.  On the
# scopes fixture (C: GCC's -gdwarf-4 and -gdwarf-5, and clang-19's -gdwarf-5, whose
# code addresses and lists are indices into .debug_addr and offsets tables), the same
# for scopes and call sites, and for location lists: readelf's lists
# (fixtures/loc_rows.py) say at each new place what they said, views included, and an
# output with --no-update-debug fails verify --debug-info=locations; the relocations of
# the lists (Clang's: of .debug_addr) hold; Clang's rewritten DIEs, lists and
# .debug_addr read without a warning, and a slot of .debug_addr that a call's return
# address and a label share is parted (the table grows).  On
# Debian's 6.1: a random layout (seed 1) and a profile layout with --update-debug are
# written and proven; addr2line agrees on 500 moved instructions sampled from the
# proof's map (KBOLT_DEBUG_MAP), where the old DWARF disagrees on most, and readelf's
# CFI on 2000, where the old disagrees on some; the relocations of .debug_line and
# .debug_frame hold what they say; on the profile layout, addr2line agrees on every
# address of the profile that lies in a rewritten function, as perf annotate would ask.
# On Debian's 6.12 (no relocations): a random layout with --update-debug is written and
# proven, and readelf's CFI agrees on 2000.  On the lab's 6.1 build (an alias after the
# function it repeats): a random layout is written and proven, and the failures of the
# proof of one with --no-update-debug read the same on one thread as on two.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
sanitized=0
case "${OUT:-.build/default}" in *san*) sanitized=1 ;; esac
fx=$top/selftests/fixtures
relocs=$fx/debug_relocs.py
cfi_rows=$fx/cfi_rows.py
loc_rows=$fx/loc_rows.py
dwarfdump=$(command -v llvm-dwarfdump-19 || command -v llvm-dwarfdump || true)

# gdb_lines VMLINUX FIELD MAP: gdb's "info line *ADDR" for the addresses in FIELD (1 old,
# 2 new) of MAP, one line each: 'Line N of "FILE"', or none
gdb_lines() {
	cut -d' ' -f"$2" "$3" | sed 's/^/-ex=info line *0x/' |
		xargs -d '\n' gdb -q -batch -nx "$1" 2>&1 |
		sed -n 's/^\(Line [0-9]* of "[^"]*"\).*/\1/p; s/^No line number information.*/none/p'
}

# lines_agree PAIRS OLD NEW: sets same, how many "OLDADDR NEWADDR" pairs of PAIRS have
# a known line from addr2line at OLDADDR in OLD, and the same at NEWADDR in NEW
lines_agree() {
	cut -d' ' -f1 "$1" | sed 's/^/0x/' | addr2line -e "$2" > "$tmp/a.old"
	cut -d' ' -f2 "$1" | sed 's/^/0x/' | addr2line -e "$3" > "$tmp/a.new"
	same=$(paste -d'|' "$tmp/a.old" "$tmp/a.new" | awk -F'|' '$1 == $2 && $1 !~ /^\?/' | wc -l)
}

# sample_addr2line MAP OLD NEW N: N pairs of MAP; sets same (N or fewer) and stale
# (how many of the old image's lines at the new addresses differ)
sample_addr2line() {
	local map=$1 old=$2 new=$3 n=$4
	shuf -n "$n" --random-source=<(yes) "$map" > "$tmp/sample"
	lines_agree "$tmp/sample" "$old" "$new"
	cut -d' ' -f2 "$tmp/sample" | sed 's/^/0x/' | addr2line -e "$old" > "$tmp/a.stale"
	stale=$(paste -d'|' "$tmp/a.old" "$tmp/a.stale" | awk -F'|' '$1 != $2' | wc -l)
}

for v in 4 5; do
	f=$tmp/flow$v
	# one instruction a line: the macros of flow.S expand to ';'-separated lines
	if ! gcc -E -P -x assembler-with-cpp "$fx/flow.S" | tr ';' '\n' > "$f.s" ||
	   ! as --gdwarf-$v -o "$f.o" "$f.s" ||
	   ! ld -q -e _text -T "$fx/vmlinux.lds" --no-warn-rwx-segments -o "$f" "$f.o"; then
		fail "DWARF $v: assemble the flow fixture"
		continue
	fi
	bad=
	for s in 1 2 3 4 5; do
		"$KBOLT" optimize "$f" -o "$f.$s" --layout random --seed "$s" --update-debug \
			2>"$f.$s.err" >/dev/null || bad="$bad $s"
	done
	check_eq "DWARF $v: random layouts 1-5 with --update-debug written (line rows proven)" \
		"" "$bad"
	check_match "DWARF $v: verify --debug-info proves rows and scopes of every moved instruction" \
		'[1-9][0-9]* instructions in [1-9][0-9]* functions compared: verified$' \
		"$("$KBOLT" verify --debug-info "$f" "$f.1" 2>&1)"
	"$KBOLT" optimize "$f" -o "$f.default" --layout random --seed 1 >/dev/null 2>&1
	check "DWARF $v: the default is --update-debug: the same output, byte for byte" \
		cmp "$f.1" "$f.default"
	"$KBOLT" optimize "$f" -o "$f.plain" --layout random --seed 1 --no-update-debug \
		>/dev/null 2>&1
	out=$("$KBOLT" verify --debug-info "$f" "$f.plain" 2>&1); rc=$?
	check_eq "DWARF $v: with --no-update-debug, verify --debug-info fails (exit 1)" 1 "$rc"
	check_match "... naming an instruction whose line row moved" \
		'verify: flow_[a-z0-9_]+\+0x[0-9a-f]+: debug info: line rows at new \+0x' "$out"
	out=$("$KBOLT" verify --debug-info=frame "$f" "$f.plain" 2>&1); rc=$?
	check_eq "DWARF $v: ... and so does verify --debug-info=frame (exit 1)" 1 "$rc"
	check_match "... naming an instruction whose CFI moved" \
		'verify: flow_[a-z0-9_]+\+0x[0-9a-f]+: debug info: the (CFA rule|rule of DWARF register [0-9]+) at new \+0x[0-9a-f]+ is not the old one' \
		"$out"
	check_match "DWARF $v: verify --debug-info=frame proves the CFI of every moved instruction" \
		'[1-9][0-9]* instructions in [1-9][0-9]* functions compared: verified$' \
		"$("$KBOLT" verify --debug-info=frame "$f" "$f.2" 2>&1)"
	KBOLT_DEBUG_MAP=$tmp/map$v "$KBOLT" verify --debug-info=lines "$f" "$f.1" >/dev/null 2>&1
	sample_addr2line "$tmp/map$v" "$f" "$f.1" 100000
	n=$(wc -l < "$tmp/map$v")
	check_eq "DWARF $v: addr2line: the old line at the new address, all $n moved instructions" \
		"$n" "$same"
	if command -v gdb >/dev/null; then
		gdb_lines "$f" 1 "$tmp/map$v" > "$tmp/gdb.old"
		gdb_lines "$f.1" 2 "$tmp/map$v" > "$tmp/gdb.new"
		gdb_lines "$f" 2 "$tmp/map$v" > "$tmp/gdb.stale"
		check_eq "DWARF $v: gdb's info line: the old line at the new address, all $n moved instructions" \
			"$n $n" "$(grep -c '^Line' "$tmp/gdb.old") $(paste -d'|' "$tmp/gdb.old" \
			"$tmp/gdb.new" | awk -F'|' '$1 == $2 && $1 ~ /^Line/' | wc -l)"
		check "... where the input's DWARF gives another line for some" \
			bash -c "! cmp -s '$tmp/gdb.old' '$tmp/gdb.stale'"
	else
		skip "DWARF $v: gdb's info line: the old line at the new address" "no gdb"
	fi
	check_match "DWARF $v: readelf's CFI table: the old rules at the new address, all moved instructions" \
		"^$n addresses, [1-9][0-9]* with rules, 0 differ$" \
		"$(python3 "$cfi_rows" "$f" "$f.1" "$tmp/map$v" 2>&1 | head -n 1)"
	check_match "... where the output with --no-update-debug has other rules for some" \
		"^$n addresses, [1-9][0-9]* with rules, [1-9][0-9]* differ$" \
		"$(python3 "$cfi_rows" "$f" "$f.plain" "$tmp/map$v" 2>&1 | head -n 1)"
	check "DWARF $v: relocations of .debug_line, .debug_info and .debug_frame hold what they say" \
		/usr/bin/python3 "$relocs" "$f.1" .debug_line .debug_info .debug_frame
	if [ -z "$dwarfdump" ]; then
		skip "DWARF $v: llvm-dwarfdump --verify finds nothing new" "no llvm-dwarfdump"
	else
		check_eq "DWARF $v: llvm-dwarfdump --verify finds nothing new" \
			"$("$dwarfdump" --verify "$f" 2>&1 | grep -ci error)" \
			"$("$dwarfdump" --verify "$f.1" 2>&1 | grep -ci error)"
	fi
done

# inline_chains MAP FIELD VMLINUX: addr2line -i -f for the addresses in FIELD of MAP:
# per address, its function and line, then those of each inlined caller
inline_chains() {
	cut -d' ' -f"$2" "$1" | sed 's/^/0x/' | addr2line -a -i -f -e "$3" | grep -v '^0x'
}

# The scopes fixture: C built like a kernel object, for the DIEs of scopes, call sites
# and labels (fixtures/scopes.c); its ORC table and banner in fixtures/scopes_orc.S
cflags="-O2 -g -fno-pic -mcmodel=kernel -mno-red-zone -fno-asynchronous-unwind-tables
	-fcf-protection=none -fno-stack-protector -fno-jump-tables"
gcc -c -I"$fx" -o "$tmp/scopes_orc.o" "$fx/scopes_orc.S" || fail "assemble fixtures/scopes_orc.S"
# v: GCC's DWARF 4 and 5, and Clang's DWARF 5 (its indexed forms: .debug_addr, rnglistx,
# loclistx); dv: the version, cc: the compiler, name: the tests' prefix
for v in 4 5 clang; do
	f=$tmp/scopes$v cc=gcc dv=$v name="DWARF $v"
	if [ $v = clang ]; then
		cc=clang-19 dv=5 name="Clang's DWARF 5"
		if ! command -v $cc >/dev/null; then
			skip "$name: the scopes fixture" "no $cc (scripts/install-deps)"
			continue
		fi
	fi
	# shellcheck disable=SC2086 # cflags: words
	if ! $cc $cflags -gdwarf-$dv -c -o "$f.o" "$fx/scopes.c" ||
	   ! ld -q -e func_a -T "$fx/vmlinux.lds" --no-warn-rwx-segments -o "$f" "$f.o" \
		"$tmp/scopes_orc.o"; then
		fail "$name: build the scopes fixture"
		continue
	fi
	check_match "$name: the scopes fixture has inlined subroutines, blocks, call sites, labels" \
		'^[1-9][0-9]* [1-9][0-9]* [1-9][0-9]* [1-9][0-9]* [1-9][0-9]*$' \
		"$(readelf --debug-dump=info "$f" | awk '/DW_TAG_inlined_subroutine/ { i++ }
			/DW_TAG_lexical_block/ { b++ } /DW_TAG_(GNU_)?call_site\)/ { c++ }
			/DW_TAG_label/ { l++ } /DW_AT_ranges/ { r++ }
			END { print i + 0, b + 0, c + 0, l + 0, r + 0 }')"
	bad=
	for s in 1 2 3 4 5 6 7 8; do
		"$KBOLT" optimize "$f" -o "$f.$s" --layout random --seed "$s" --update-debug \
			2>"$f.$s.err" >/dev/null || bad="$bad $s"
	done
	check_eq "$name: scopes fixture, random layouts 1-8 with --update-debug written (rows, CFI, scopes, call sites, locations proven)" \
		"" "$bad"
	KBOLT_DEBUG_MAP=$tmp/smap$v "$KBOLT" verify --debug-info "$f" "$f.1" >/dev/null 2>&1
	awk '$1 != $2' "$tmp/smap$v" > "$tmp/smoved$v"
	n=$(wc -l < "$tmp/smoved$v")
	inline_chains "$tmp/smoved$v" 1 "$f" > "$tmp/chain.old"
	inline_chains "$tmp/smoved$v" 2 "$f.1" > "$tmp/chain.new"
	inline_chains "$tmp/smoved$v" 2 "$f" > "$tmp/chain.stale"
	check "$name: addr2line -i -f: the old function, line and inline chain at the new address, all $n moved instructions" \
		cmp "$tmp/chain.old" "$tmp/chain.new"
	check "... where the input's DWARF gives another for some" \
		bash -c "! cmp -s '$tmp/chain.old' '$tmp/chain.stale'"
	check_match "... inline chains of two or more levels among them" '^[1-9][0-9]*$' \
		"$(($(wc -l < "$tmp/chain.old") - 2 * n))"
	check_match "$name: readelf's location lists (fixtures/loc_rows.py): every list says at the new place of each walked instruction what it said, views included" \
		'^[0-9]+ addresses, [1-9][0-9]* lists, [1-9][0-9]* locations compared, 0 differ$' \
		"$(python3 "$loc_rows" "$f" "$f.1" "$tmp/smap$v" 2>/dev/null | head -n 1)"
	if [ $v = clang ]; then		# Clang writes no location views
		check_match "... its code addresses, ranges and location lists indexed (addrx, rnglistx, loclistx)" \
			'^[1-9][0-9]* [1-9][0-9]* [1-9][0-9]*$' "$(readelf --wide --debug-dump=info "$f" |
			awk '/\(addrx\)/ { a++ } /\(rnglistx\)/ { r++ } /\(loclistx\)/ { l++ }
			END { print a + 0, r + 0, l + 0 }')"
		check_eq "... readelf reads the rewritten DIEs, lists and .debug_addr without a warning" "" \
			"$(readelf --debug-dump=info,loc,Ranges,addr "$f.1" 2>&1 >/dev/null)"
		check_match "... and a call site and a label of one slot of .debug_addr got one each, in seeds 1-8 (the table grew)" \
			'^[1-8]$' "$(for s in 1 2 3 4 5 6 7 8; do readelf -SW "$f.$s"; done |
			awk -v old="$(readelf -SW "$f" | awk '$2 == ".debug_addr" { print $6 }')" \
			'$2 == ".debug_addr" && $6 != old { n++ } END { print n + 0 }')"
	else
		check_match "... with location views other than 0 among the entries" '^[1-9][0-9]*$' \
			"$(readelf --debug-dump=loc "$f" 2>/dev/null | grep 'views at' | grep -c ' v0*[1-9]')"
	fi
	"$KBOLT" optimize "$f" -o "$f.plain" --layout random --seed 1 --no-update-debug \
		>/dev/null 2>&1
	out=$("$KBOLT" verify --debug-info=locations "$f" "$f.plain" 2>&1); rc=$?
	check_eq "$name: with --no-update-debug, verify --debug-info=locations fails (exit 1)" 1 "$rc"
	check_match "... naming a variable whose location list says another thing at the new place" \
		'verify: [a-z_]+\+0x[0-9a-f]+: debug info: DW_AT_location of the DIE at 0x[0-9a-f]+ at new \+0x[0-9a-f]+ is not the old one \([0-9]+ entries hold it, [0-9]+ at the old address\)' \
		"$out"
	check_match "... as readelf's lists say too" \
		'^[0-9]+ addresses, [0-9]+ lists, [0-9]+ locations compared, [1-9][0-9]* differ$' \
		"$(python3 "$loc_rows" "$f" "$f.plain" "$tmp/smap$v" 2>/dev/null | head -n 1)"
	out=$("$KBOLT" verify --debug-info=scopes "$f" "$f.plain" 2>&1); rc=$?
	check_eq "$name: with --no-update-debug, verify --debug-info=scopes fails (exit 1)" 1 "$rc"
	check_match "... naming an instruction whose scopes moved" \
		'verify: [a-z_]+\+0x[0-9a-f]+: debug info: scopes at new \+0x[0-9a-f]+ \(.*\) are not the old ones' \
		"$out"
	"$KBOLT" optimize "$f" -o "$f.checked" --layout random --seed 1 --funcs checked \
		--no-update-debug >/dev/null 2>&1
	out=$("$KBOLT" verify --debug-info=scopes "$f" "$f.checked" 2>&1)
	check_match "... and a call site whose return address moved" \
		"verify: checked\+0x[0-9a-f]+: debug info: $([ $v = 4 ] && echo DW_AT_low_pc ||
		echo DW_AT_call_return_pc) of the DIE at 0x[0-9a-f]+ is 0x[0-9a-f]+ in the new image, where the old code is not" \
		"$out"
	lists=$([ $v = 4 ] && echo .debug_ranges || echo .debug_rnglists)
	locs=$([ $v = 4 ] && echo .debug_loc || echo .debug_loclists)
	# Clang's lists name their addresses through .debug_addr: no relocations of their own
	[ $v = clang ] && lists=.debug_addr locs=
	check "$name: relocations of .debug_info, $lists${locs:+ and $locs} hold what they say" \
		/usr/bin/python3 "$relocs" "$f.1" .debug_info "$lists" $locs
	if [ -z "$dwarfdump" ]; then
		skip "$name: llvm-dwarfdump --verify finds nothing new on the scopes fixture" \
			"no llvm-dwarfdump"
	else
		# llvm-dwarfdump 14 and 19 do not finish verifying GCC 12's location lists
		# of this file: built without them (-fno-var-tracking, no call sites) for it
		# shellcheck disable=SC2086
		$cc $cflags $([ $v != clang ] && echo -fno-var-tracking) -gdwarf-$dv -c \
			-o "$f.nv.o" "$fx/scopes.c" &&
			ld -q -e func_a -T "$fx/vmlinux.lds" --no-warn-rwx-segments -o "$f.nv" \
			"$f.nv.o" "$tmp/scopes_orc.o" &&
			"$KBOLT" optimize "$f.nv" -o "$f.nv.1" --layout random --seed 1 \
			--update-debug >/dev/null 2>&1
		if [ $v = clang ]; then
			# ld's .debug_str ends some strings inside others, which llvm-dwarfdump
			# calls invalid offsets of .debug_str_offsets: those, and nothing else
			check_eq "$name: llvm-dwarfdump --verify finds nothing new on the scopes fixture" \
				"$(timeout 120 "$dwarfdump" --verify "$f.nv" 2>&1 | grep '^error')" \
				"$(timeout 120 "$dwarfdump" --verify "$f.nv.1" 2>&1 | grep '^error')"
			continue
		fi
		check_eq "$name: llvm-dwarfdump --verify finds nothing new on the scopes fixture (without location lists)" \
			"0 0 No errors." "$(timeout 120 "$dwarfdump" --verify "$f.nv" 2>&1 |
			grep -c '^error') $(timeout 120 "$dwarfdump" --verify "$f.nv.1" 2>&1 |
			grep -c '^error') $(timeout 120 "$dwarfdump" --verify "$f.nv.1" 2>&1 | tail -n 1)"
	fi
done

out=$("$KBOLT" optimize "$tmp/flow5" -o "$tmp/x" --update-debug --strip-debug 2>&1); rc=$?
check_eq "--update-debug with --strip-debug: a usage error (exit 2)" 2 "$rc"

# An FDE kbolt cannot execute (DW_CFA_GNU_args_size) keeps its function where it is, and
# only that one; a compressed .debug_frame keeps every function, with a warning
sed 's/^\( *flow_hlt: \.cfi_startproc\)$/\1\n .cfi_escape 0x2e, 0x08/' "$tmp/flow5.s" \
	> "$tmp/args.s"
as --gdwarf-5 -o "$tmp/args.o" "$tmp/args.s" &&
	ld -q -e _text -T "$fx/vmlinux.lds" --no-warn-rwx-segments -o "$tmp/args" "$tmp/args.o"
out=$("$KBOLT" optimize "$tmp/args" -o "$tmp/args.1" --layout random --seed 1 --update-debug \
	--stats 2>&1)
check_match "an FDE with DW_CFA_GNU_args_size: its function alone is skipped as debug_info" \
	'^  skipped, DWARF kbolt cannot update \(--update-debug\): 1$' "$out"
check_match "... the others are rewritten" '^  rewritten with a new layout: 1[0-9] ' "$out"
check_eq "... flow_hlt's bytes are the input's" \
	"$(objdump -d --no-show-raw-insn "$tmp/args" | sed -n '/<flow_hlt>:/,/^$/p')" \
	"$(objdump -d --no-show-raw-insn "$tmp/args.1" | sed -n '/<flow_hlt>:/,/^$/p')"
objcopy --compress-debug-sections=zlib "$tmp/flow5" "$tmp/zflow"
out=$("$KBOLT" optimize "$tmp/zflow" -o "$tmp/zflow.1" --layout random --seed 1 \
	--update-debug --stats 2>&1); rc=$?
check_eq "compressed DWARF: written all the same (exit 0)" 0 "$rc"
check_match "... a warning for .debug_frame, naming it" \
	"^$tmp/zflow: warning: kbolt: \.debug_frame at 0x0: a compressed section: kbolt cannot update the call frame information, no function is moved \(--update-debug\)$" \
	"$out"
check_match "... and no function moved" '^  rewritten with a new layout: 0 ' "$out"
# a CIE whose data alignment factor is 0 (byte 11 of the first CIE: length, id,
# version 1, no augmentation, code factor): the functions of its FDEs stay
off=$(readelf -S -W "$tmp/flow5" | sed 's/^.*\] //' | awk '$1 == ".debug_frame" { print $4 }')
cp "$tmp/flow5" "$tmp/nofactor"
printf '\000' | dd of="$tmp/nofactor" bs=1 seek=$((16#$off + 11)) conv=notrunc 2>/dev/null
out=$("$KBOLT" optimize "$tmp/nofactor" -o "$tmp/nofactor.1" --layout random --seed 1 \
	--update-debug --stats 2>&1); rc=$?
check_eq "a CIE with a data factor of 0: written all the same (exit 0)" 0 "$rc"
check_match "... every function of its FDEs skipped as debug_info" \
	'^  skipped, DWARF kbolt cannot update \(--update-debug\): 1[0-9]$' "$out"

need_kernels
if [ $have_kernels = 0 ] || [ $sanitized = 1 ]; then
	skip "6.1: random and profile layouts with --update-debug" \
		"$no_kernels, or the sanitized pass"
	done_testing
	exit
fi
V=$VMLINUX_61
progress "6.1: random layout, seed 1, --update-debug"
if "$KBOLT" optimize "$V" -o "$tmp/rand" --layout random --seed 1 --update-debug \
	2>"$tmp/rand.err" >/dev/null; then
	ok "6.1: random layout with --update-debug written, its line rows, CFI, scopes and locations proven"
	out=$(KBOLT_DEBUG_MAP=$tmp/map61 "$KBOLT" verify --debug-info "$V" "$tmp/rand" 2>&1)
	check_match "... and by verify --debug-info on its own" \
		'debug info of [0-9]{7} instructions in [0-9]{5} functions compared: verified$' "$out"
	echo "# $out"
	sample_addr2line "$tmp/map61" "$V" "$tmp/rand" 500
	check_eq "... addr2line: the old line at the new address, 500 moved instructions" 500 "$same"
	check_match "... where the old DWARF is wrong for most ($stale of 500)" '^[1-4][0-9]{2}$' "$stale"
	awk '$1 != $2' "$tmp/sample" > "$tmp/smoved61"
	inline_chains "$tmp/smoved61" 1 "$V" > "$tmp/chain.old"
	inline_chains "$tmp/smoved61" 2 "$tmp/rand" > "$tmp/chain.new"
	check "... addr2line -i -f: the old function, line and inline chain at the new address, $(wc -l < "$tmp/smoved61") of them moved" \
		cmp "$tmp/chain.old" "$tmp/chain.new"
	shuf -n 2000 --random-source=<(yes) "$tmp/map61" > "$tmp/cfi61"
	check_match "... readelf's CFI table: the old rules at the new address, 2000 moved instructions" \
		'^2000 addresses, [0-9]+ with rules, 0 differ$' \
		"$(python3 "$cfi_rows" "$V" "$tmp/rand" "$tmp/cfi61" 2>&1 | head -n 1)"
	check_match "... where the old CFI is wrong for some" \
		'^2000 addresses, [0-9]+ with rules, [1-9][0-9]* differ$' \
		"$(python3 "$cfi_rows" "$V" "$V" "$tmp/cfi61" 2>&1 | head -n 1)"
	check "... relocations of .debug_line, .debug_frame, .debug_info, .debug_rnglists and .debug_loclists hold what they say" \
		/usr/bin/python3 "$relocs" "$tmp/rand" .debug_line .debug_frame .debug_info \
		.debug_rnglists .debug_loclists
	rm -f "$tmp/rand"
else
	fail "6.1: random layout with --update-debug written, its line rows, CFI, scopes and locations proven" \
		"$(head -n 5 "$tmp/rand.err")"
fi
progress "6.1: profile layout (proc), --update-debug"
if ! prof=$("$top/scripts/cached-profile" "$V" proc 2>"$tmp/prof.err"); then
	skip "6.1: profile layout with --update-debug" "no proc profile: $(tail -n 1 "$tmp/prof.err")"
elif KBOLT_DEBUG_MAP=$tmp/mapp "$KBOLT" optimize "$V" -o "$tmp/prof" --profile "$prof" \
	--update-debug 2>"$tmp/prof.err" >/dev/null; then
	ok "6.1: profile layout with --update-debug written, its line rows, CFI, scopes and locations proven"
	# as perf annotate looks up sources: every address of the profile in a rewritten
	# function (its branches and their targets), at its new place
	awk '/^[BF] / { print $2; print $3 }' "$prof" | sort -u > "$tmp/paddrs"
	sort "$tmp/mapp" | join - "$tmp/paddrs" > "$tmp/pmap"
	n=$(wc -l < "$tmp/pmap") moved=$(awk '$1 != $2' "$tmp/pmap" | wc -l)
	lines_agree "$tmp/pmap" "$V" "$tmp/prof"
	check_eq "... addr2line: the old line at the new place of every profile address in a rewritten function ($moved of $n moved)" \
		"$n" "$same"
	check "... of which there are thousands, most of them moved" \
		awk "BEGIN { exit !($n > 10000 && $moved > $n / 2) }"
else
	fail "6.1: profile layout with --update-debug written, its line rows, CFI, scopes and locations proven" \
		"$(head -n 5 "$tmp/prof.err")"
fi
rm -f "$tmp/prof"
V=$VMLINUX_612
progress "6.12: random layout, seed 1, --update-debug"
if KBOLT_DEBUG_MAP=$tmp/map612 "$KBOLT" optimize "$V" -o "$tmp/rand" --layout random \
	--seed 1 --update-debug 2>"$tmp/rand.err" >/dev/null; then
	ok "6.12: random layout with --update-debug written, its line rows, CFI, scopes and locations proven"
	shuf -n 2000 --random-source=<(yes) "$tmp/map612" > "$tmp/cfi612"
	check_match "... readelf's CFI table: the old rules at the new address, 2000 moved instructions" \
		'^2000 addresses, [0-9]+ with rules, 0 differ$' \
		"$(python3 "$cfi_rows" "$V" "$tmp/rand" "$tmp/cfi612" 2>&1 | head -n 1)"
else
	fail "6.12: random layout with --update-debug written, its line rows, CFI, scopes and locations proven" \
		"$(grep -v 'info: ' "$tmp/rand.err" | head -n 5)"
fi
rm -f "$tmp/rand"
# The lab's kernels (LAB_VERSIONS: CI's sample 6.12, scripts/lab-matrix 6.1 too).  The
# 6.1 build has a weak alias after the function it repeats (blake2s_compress of
# blake2s_compress_generic), which once hid its unit from the rewrite.
for ver in $LAB_VERSIONS; do
	progress "lab $ver: random layout, seed 1, --update-debug"
	if ! lab=$(build_lab_kernel "$ver" "$tmp/build.log"); then
		fail "lab $ver kernel builds" "$(tail -n 20 "$tmp/build.log")"
		continue
	fi
	if "$KBOLT" optimize "$lab/vmlinux" -o "$tmp/lab" --layout random --seed 1 \
		--update-debug 2>"$tmp/lab.err" >/dev/null; then
		ok "lab $ver: random layout with --update-debug written, its line rows, CFI, scopes and locations proven"
	else
		fail "lab $ver: random layout with --update-debug written, its line rows, CFI, scopes and locations proven" \
			"$(grep -v 'info: ' "$tmp/lab.err" | head -n 5)"
	fi
	rm -f "$tmp/lab"
	# The proof's failures, from parts of 64 functions checked on all threads, are
	# said in function order: the same text with one thread as with two
	"$KBOLT" optimize "$lab/vmlinux" -o "$tmp/lab" --layout random --seed 1 \
		--no-update-debug >/dev/null 2>&1
	KBOLT_THREADS=1 "$KBOLT" verify --debug-info "$lab/vmlinux" "$tmp/lab" \
		> "$tmp/lab.1" 2>&1; rc=$?
	KBOLT_THREADS=2 "$KBOLT" verify --debug-info "$lab/vmlinux" "$tmp/lab" > "$tmp/lab.2" 2>&1
	check_eq "lab $ver: with --no-update-debug, verify --debug-info fails (exit 1)" 1 "$rc"
	check_match "... with more problems than it shows" \
		'verify: [1-9][0-9]* more problems not shown$' "$(cat "$tmp/lab.1")"
	check "... and says the same, in the same order, on two threads as on one" \
		cmp "$tmp/lab.1" "$tmp/lab.2"
	rm -f "$tmp/lab" "$tmp/lab.1" "$tmp/lab.2"
done
done_testing
