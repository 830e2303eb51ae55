#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# BOLT's fdata profile (Documentation/profile-format.rst, "BOLT's fdata"): function names
# and offsets resolved against the vmlinux when a command reads it; a record to the
# next instruction of one that falls through read as a fall-through, any other as a
# branch; the no_lbr form as samples; [unknown] locations dropped; refused, with the
# line: a malformed line, a name the kernel does not have (left out with --force), a
# profile of a bolted binary, and use by the commands that have no vmlinux (profile
# merge, profile-to-bolt).  profile-to-bolt --format fdata writes it: read back to the
# same edges, converted again to the same file; samples as no_lbr; its usage errors.  On the profile fuzzer's image; and on Debian's 6.1, the
# fdata perf2bolt writes of the proc profile (kbolt profile-to-bolt, perf2bolt -pa)
# agrees with the kernel's code, lays it out, and counts as many executed taken
# branches (optimize --stats) as the proc profile itself.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
sanitized=0
case "${OUT:-.build/default}" in *san*) sanitized=1 ;; esac

if ! "$top/selftests/fuzz/make-profile-seeds" "$tmp/fx" >"$tmp/fx.log" 2>&1; then
	fail "make-profile-seeds builds the image" "$(tail -n 5 "$tmp/fx.log")"
	done_testing
	exit 1
fi
image=$tmp/fx/image

# cfg_branches: +0x7 je +0x10 (falls into +0x9), +0xe jmp +0x15, +0x17 tail jmp out
cat >"$tmp/lbr.fdata" <<'EOF'
1 cfg_branches 7 1 cfg_branches 10 0 5
1 cfg_branches 7 1 cfg_branches 9 0 3
1 cfg_branches e 1 cfg_branches 15 1 3
1 cfg_branches 17 1 __x86_return_thunk 0 0 8
1 cfg_branches 0 1 __fentry__ 0 0 8
0 [unknown] 7f0000001000 1 cfg_branches 0 0 8
EOF
out=$("$KBOLT" check-profile -j "$image" "$tmp/lbr.fdata"); rc=$?
check_eq "fdata: check-profile passes" 0 "$rc"
check_eq "... 1 fall-through (the je to the next instruction), 4 branches, [unknown] left out" \
	"5 1 4 0" "$(python3 -c 'import json, sys; r = json.load(sys.stdin)
print(r["records"], r["by_kind"]["ft"], r["by_kind"]["branch"], r["disagree"])' <<<"$out")"
json=$("$KBOLT" heatmap -j "$image" "$tmp/lbr.fdata" -o "$tmp/h.svg")
check_match "heatmap reads it too" '"lines":[1-9]' "$json"
if "$KBOLT" optimize "$image" --profile "$tmp/lbr.fdata" -o "$tmp/opt" 2>"$tmp/opt.err"; then
	ok "optimize lays the image out by it, verified"
else
	fail "optimize lays the image out by it, verified" "$(cat "$tmp/opt.err")"
fi
printf 'no_lbr cycles:u:\n1 cfg_branches 5 10\n1 cfg_branches 10 4\n1 emit_wide 0 2\n0 [unknown] 7f00 9\n' \
	>"$tmp/nolbr.fdata"
out=$("$KBOLT" check-profile -j "$image" "$tmp/nolbr.fdata"); rc=$?
check_eq "fdata no_lbr: 3 samples, all agree" "0 3 3" "$rc $(python3 -c 'import json, sys
r = json.load(sys.stdin); print(r["by_kind"]["sample"], r["agree"])' <<<"$out")"

# refusals: one line naming the file and line, exit 1
refused() {	# refused DESCRIPTION REGEX ARGS...
	local d=$1 re=$2 out rc
	shift 2
	out=$("$KBOLT" "$@" 2>&1); rc=$?
	check_eq "$d: exit 1" 1 "$rc"
	check_match "... saying so" "$re" "$out"
}
{ cat "$tmp/lbr.fdata"; echo "1 no_such_function 4 1 cfg_branches 10 0 2"; } >"$tmp/other.fdata"
refused "a function the kernel does not have" \
	"other.fdata: error: kbolt: line 7: no function no_such_function in $image: a profile of another kernel" \
	check-profile "$image" "$tmp/other.fdata"
out=$("$KBOLT" check-profile -f "$image" "$tmp/other.fdata" 2>&1); rc=$?
check_eq "... with --force its records are left out, the rest checked" 0 "$rc"
check_match "... with a warning" 'warning: kbolt: 1 records name functions .* such as no_such_function \(line 7\): left out \(--force\)' "$out"
printf '1 cfg_branches 7 1 cfg_branches 10 0 5\n1 cfg_branches 7 1 cfg_branches 0x10 0 5\n' >"$tmp/bad.fdata"
refused "an offset with 0x" \
	'bad.fdata: error: kbolt: line 2: malformed: want TYPE NAME OFF TYPE NAME OFF MISPREDS COUNT: 1 cfg_branches 7 1 cfg_branches 0x10 0 5$' \
	check-profile "$image" "$tmp/bad.fdata"
printf 'no_lbr\n1 cfg_branches 5 10 0\n' >"$tmp/bad2.fdata"
refused "no_lbr with a field too many" \
	'bad2.fdata: error: kbolt: line 2: malformed: want TYPE NAME OFF COUNT: 1 cfg_branches 5 10 0$' \
	check-profile "$image" "$tmp/bad2.fdata"
{ head -n 1 "$tmp/lbr.fdata"; echo boltedcollection; } >"$tmp/bolted.fdata"
refused "a profile of a bolted binary" \
	'bolted.fdata: error: kbolt: line 2: a profile of a binary llvm-bolt rewrote' \
	check-profile "$image" "$tmp/bolted.fdata"
refused "profile merge, which has no vmlinux to resolve the names" \
	"lbr.fdata: error: kbolt: its records name functions \\(BOLT's fdata\\), not addresses" \
	profile merge "$tmp/lbr.fdata" -o "$tmp/m.prof"
refused "profile-to-bolt" "lbr.fdata: error: kbolt: its records name functions" \
	profile-to-bolt -o "$tmp/m.bolt" "$tmp/lbr.fdata"

# profile-to-bolt --format fdata: edges, then samples (no_lbr)
seeds=$tmp/fx/seeds
"$KBOLT" profile-to-bolt --format fdata -o "$tmp/k.fdata" "$image" "$seeds/kbolt.prof"
out=$("$KBOLT" check-profile -j "$image" "$tmp/k.fdata"); rc=$?
check_eq "profile-to-bolt --format fdata: reads back, agrees, its $(grep -c '^F ' "$seeds/kbolt.prof") fall-throughs as such" \
	"0 $(grep -c '^F ' "$seeds/kbolt.prof") 0" "$rc $(python3 -c 'import json, sys
r = json.load(sys.stdin); print(r["by_kind"]["ft"], r["disagree"])' <<<"$out")"
check_match "... the records named as functions and offsets" '^1 cfg_branches 7 1 cfg_branches 10 0 [0-9]+$' \
	"$(cat "$tmp/k.fdata")"
"$KBOLT" profile-to-bolt --format fdata -o "$tmp/k2.fdata" "$image" "$tmp/k.fdata"
check "... converted again, the same file" cmp "$tmp/k.fdata" "$tmp/k2.fdata"
"$KBOLT" profile-to-bolt --format fdata -o "$tmp/s.fdata" "$image" "$seeds/kbolt-samples.prof"
check_eq "samples only: no_lbr with the event, one line per sample" \
	"no_lbr cpu-clock $(grep -c '^S ' "$seeds/kbolt-samples.prof")" \
	"$(head -n 1 "$tmp/s.fdata") $(($(wc -l <"$tmp/s.fdata") - 1))"
check_match "... which reads back as the same samples" \
	": of these, $(grep -c '^S ' "$seeds/kbolt-samples.prof") samples \\(weight $(awk '$1 == "S" { w += $3 } END { print w }' "$seeds/kbolt-samples.prof")\\), 0 of them disagree" \
	"$("$KBOLT" check-profile "$image" "$tmp/s.fdata")"
usage() {	# usage DESCRIPTION REGEX ARGS...: exit 2, one line
	local d=$1 re=$2 out rc
	shift 2
	out=$("$KBOLT" "$@" 2>&1); rc=$?
	check_eq "$d: exit 2" 2 "$rc"
	check_match "... saying so" "$re" "$out"
}
usage "--format fdata without VMLINUX" \
	'^kbolt: error: profile-to-bolt: --format fdata names functions: give VMLINUX PROFILE$' \
	profile-to-bolt --format fdata -o "$tmp/x" "$seeds/kbolt.prof"
usage "the pre-aggregated format with a VMLINUX" \
	'^kbolt: error: profile-to-bolt: the pre-aggregated format needs PROFILE only, no VMLINUX$' \
	profile-to-bolt --format pre -o "$tmp/x" "$image" "$seeds/kbolt.prof"
usage "--format xml" "^kbolt: error: --format takes pre, fdata or yaml, not 'xml'\$" \
	profile-to-bolt --format xml -o "$tmp/x" "$image" "$seeds/kbolt.prof"
usage "--format to check-profile" '^kbolt: error: --format does not apply to check-profile$' \
	check-profile --format fdata "$image" "$seeds/kbolt.prof"
check "... nothing written" test ! -e "$tmp/x"

# Debian's 6.1: what perf2bolt writes of the proc profile
perf2bolt=/usr/lib/llvm-19/bin/perf2bolt
prof=$(proc_profile_61)
if [ -z "$prof" ] || [ ! -x "$perf2bolt" ] || [ $sanitized = 1 ]; then
	skip "6.1: perf2bolt's fdata of the proc profile" \
		"no 6.1 kernel or profile, no $perf2bolt, or the sanitized pass"
	done_testing
	exit
fi
"$KBOLT" profile-to-bolt -o "$tmp/proc.bolt" "$prof"
if ! "$perf2bolt" -pa -p "$tmp/proc.bolt" -o "$tmp/proc.fdata" "$VMLINUX_61" >"$tmp/p2b.log" 2>&1; then
	fail "6.1: perf2bolt -pa writes the fdata" "$(tail -n 3 "$tmp/p2b.log")"
	done_testing
	exit 1
fi
nr=$(wc -l <"$tmp/proc.fdata")
locals=$(grep -c '/[0-9]* ' "$tmp/proc.fdata")
out=$("$KBOLT" check-profile "$VMLINUX_61" "$tmp/proc.fdata" 2>&1); rc=$?
check_eq "6.1: perf2bolt's fdata ($nr records, $locals naming local functions NAME/N) agrees with the kernel's code" \
	0 "$rc"
check_match "... every record resolved" "proc.fdata: $nr records .* 0 disagree" "$out"
stats=$("$KBOLT" optimize --stats --strip-debug "$VMLINUX_61" --profile "$tmp/proc.fdata" \
	-o "$tmp/v.fdata" 2>&1); rc=$?
check_eq "... lays the kernel out, verified" 0 "$rc"
printf '%s\n' "$stats" | grep -E 'rewritten with|taken branches' | sed 's/^/# /'
exact=$("$KBOLT" optimize --stats --strip-debug "$VMLINUX_61" --profile "$prof" -o "$tmp/v.exact" 2>&1)
taken() { awk '/taken branches$/ { print $1 }' <<<"$1"; }
check_eq "... the round trip kbolt -> pre-aggregated -> perf2bolt -> fdata -> kbolt keeps the taken branches' count" \
	"$(taken "$exact")" "$(taken "$stats")"
"$KBOLT" profile-to-bolt --format fdata -o "$tmp/k61.fdata" "$VMLINUX_61" "$prof"
stats=$("$KBOLT" optimize --stats --strip-debug "$VMLINUX_61" --profile "$tmp/k61.fdata" \
	-o "$tmp/v.k61" 2>&1)
# fdata carries no fall-through inside a block: the exact profile has some where the
# recorder's translation block ended without a branch (an interrupt: F
# exit_to_user_mode_prepare+0x72 -> +0x78, once, in 6.1's proc profile), and their
# weight can tip a tie of the layout.  The taken branches before the layout (the branch
# records fdata carries) are the same; those after it, within a millionth of them (1 of
# 15 million, in exit_to_user_mode_prepare)
before() { awk '/taken branches$/ { print $1 }' <<<"$1"; }
after() { awk '/taken branches$/ { print $2 }' <<<"$1"; }
check_eq "6.1: kbolt -> fdata (profile-to-bolt --format fdata) -> kbolt: the same taken branches before the layout" \
	"$(before "$exact")" "$(before "$stats")"
a=$(after "$exact") b=$(after "$stats") n=$(before "$exact")
check "... after it, within a millionth of them ($a and $b)" \
	test $(( (a > b ? a - b : b - a) * 1000000 )) -le "$n"
done_testing
