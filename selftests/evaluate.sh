#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The evaluation plugin and scripts/evaluate: Debian's 6.1 kernel boots once with
# "scripts/vmtest --evaluate" on the net workload, and the figures it writes are sane
# (Documentation/evaluate.rst): the format header, millions of kernel instructions,
# misses neither zero nor more than the fetches (the iTLB's, of the kernel's text in
# 2 MiB pages, no more than the 4 KiB pages fetched), MPKI as written agreeing with the
# counts, distinct lines and pages consistent with each other; the line misses of the
# same run (--misses) well formed and adding up to its misses; scripts/split-misses
# putting each miss in code a profile ran or not, checked with a profile that ran
# nothing and one that ran only the most missed function; scripts/profile-blocks
# checked against its definition.  The whole evaluation with its bounds, one boot per
# kernel: every row has figures, the layouts rank as the knowledge behind them does
# (both bounds below kbolt's ext-TSP layout, which is below its greedy one and
# llvm-bolt-19's; greedy below the original), the targets are judged.  And the usage
# errors of the scripts.
. "$(dirname "$0")/lib.sh"

EVALUATE=$top/scripts/evaluate
check_eq "evaluate: the same workload to train and measure is a usage error" 2 \
	"$("$EVALUATE" --train net --measure net >/dev/null 2>&1; echo $?)"
check_eq "evaluate: an unknown workload is a usage error" 2 \
	"$("$EVALUATE" --measure nosuch >/dev/null 2>&1; echo $?)"
check_eq "evaluate: --runs 0 is a usage error" 2 \
	"$("$EVALUATE" --runs 0 >/dev/null 2>&1; echo $?)"
check_eq "evaluate: --record 0 is a usage error" 2 \
	"$("$EVALUATE" --record 0 >/dev/null 2>&1; echo $?)"
check_match "evaluate: --record-frequency 0 is a usage error, saying so" \
	'^evaluate: --record-frequency takes samples a second >= 1$' \
	"$("$EVALUATE" --record 10 --record-frequency 0 2>&1 >/dev/null)"
check_eq "evaluate: measuring a workload of the training mix is a usage error" 2 \
	"$("$EVALUATE" --train proc+net+files --measure net >/dev/null 2>&1; echo $?)"
check_eq "evaluate: an unknown workload in the mix is a usage error" 2 \
	"$("$EVALUATE" --train proc+nosuch >/dev/null 2>&1; echo $?)"
check_match "evaluate: --stale-from a missing kernel fails, naming it" \
	"^evaluate: $tmp/none: missing\$" "$("$EVALUATE" --stale-from "$tmp/none" 2>&1 >/dev/null)"
# any readable file: the check comes before the kernel is looked at
check_match "vmtest: --evaluate with --kaslr is a usage error, saying why" \
	'^vmtest: --evaluate models the kernel at its link address: drop --kaslr$' \
	"$("$VMTEST" --kernel "$EVALUATE" --kaslr --workload net --evaluate "$tmp/x" 2>&1)"

case "${OUT:-.build/default}" in
*san*)
	skip "evaluation boot" "it exercises the plugin, not the sanitized binaries"
	done_testing
	exit 0 ;;
esac
if [ ! -s "$VMLINUX_61" ]; then
	skip "evaluation boot" "test kernel not fetched: run scripts/fetch-kernels"
	done_testing
	exit 0
fi
check_eq "vmtest: --evaluate without a workload is a usage error" 2 \
	"$("$VMTEST" --kernel "$VMLINUX_61" --evaluate "$tmp/x" >/dev/null 2>&1; echo $?)"
check_eq "vmtest: --misses without --evaluate is a usage error" 2 \
	"$("$VMTEST" --kernel "$VMLINUX_61" --workload net --misses "$tmp/x" >/dev/null 2>&1
	   echo $?)"

fig=$tmp/net.eval misses=$tmp/net.misses
vm_boot "Debian 6.1 with the evaluation plugin (net, deterministic)" --kernel "$VMLINUX_61" \
	--workload net --deterministic --evaluate "$fig" --misses "$misses"
check_match "the figures start with the format line" '^kbolt-eval 2$' "$(cat "$fig" 2>/dev/null)"
check_match "... and name the simulated caches" '^l1i 32768 8 64$' "$(cat "$fig" 2>/dev/null)"
check_match "... the iTLB's pages 2 MiB for the kernel's text, 4 KiB for modules" \
	'^itlb 64 2097152 4096$' "$(cat "$fig" 2>/dev/null)"
# every verdict is "ok" or "bad" and what the figures were
figure() { awk -v k="$1" '$1 == k { print $2 }' "$fig" 2>/dev/null; }
verdict=$(awk '
	{ v[$1] = $2 }
	function say(cond, what) { print (cond ? "ok " : "bad ") what }
	END {
		i = v["insns"]; l = v["l1i-misses"]; t = v["itlb-misses"]
		say(i > 1000000, "kernel instructions: " i)
		say(l > 0 && l <= i, "L1i misses: " l)
		# kernel text in 2 MiB pages: each missed about once (4 KiB pages: millions)
		say(t > 0 && t <= v["pages"], "iTLB misses: " t ", at most one a 4 KiB page fetched")
		say(v["l1i-mpki"] > 0.5 && v["l1i-mpki"] < 200, "L1i MPKI: " v["l1i-mpki"])
		say(v["itlb-mpki"] < 0.01, "iTLB MPKI: " v["itlb-mpki"] ", near zero")
		say(i && (v["l1i-mpki"] - 1000 * l / i)^2 < 1e-6, "L1i MPKI agrees with the counts")
		say(v["pages"] > 0 && v["pages"] <= v["lines"] && v["lines"] <= 64 * v["pages"],
		    "lines " v["lines"] " in pages " v["pages"] " (one to 64 lines a page)")
		say(v["lines"] * 64 < 64 * 1024 * 1024, "lines span less than 64 MB")
		say(v["lines"] <= l, "each distinct line missed at least once")
	}' "$fig" 2>/dev/null)
[ -n "$verdict" ] || verdict="bad no figures in $fig"
while IFS= read -r line; do
	check_match "figures: ${line#* }" '^ok ' "$line"
done <<< "$verdict"

# The line misses: the header, then lines in kernel text by address, adding up to the figures
total=$(figure l1i-misses)
check_eq "misses: the format line" "kbolt-eval-misses 1" "$(sed -n 2p "$misses" 2>/dev/null)"
verdict=$(awk -v total="$total" '
	NR <= 2 { next }
	# mawk knows no {n}: the length separately
	length($1) != 16 || $1 !~ /^ffffffff[89a-f][0-9a-f]*[048c]0$/ { if (nb++ < 5) bad = bad " " $1 }
	prev != "" && $1 <= prev { if (no++ < 5) order = order " " $1 }
	{ prev = $1; sum += $2; n++ }
	END {
		print (n > 1000 ? "ok " : "bad ") n " lines missed"
		print (bad == "" ? "ok" : "bad") " each a 64-byte line of the upper 2 GiB" bad
		print (order == "" ? "ok" : "bad") " by rising address" order
		print (sum == total ? "ok " : "bad ") sum " misses, as the figures count (" total ")"
	}' "$misses" 2>/dev/null)
[ -n "$verdict" ] || verdict="bad no misses in $misses"
while IFS= read -r line; do
	check_match "misses: ${line#* }" '^ok ' "$line"
done <<< "$verdict"

# split-misses: a profile that ran nothing, then one that ran only the most missed function
SPLIT=$top/scripts/split-misses
printf '# kbolt profile\nkbolt-profile 1\n' > "$tmp/none.prof"
split=$("$SPLIT" "$VMLINUX_61" "$tmp/none.prof" "$misses" 2>&1)
check_match "split-misses: nothing ran, every miss is in code never run or other" \
	"^0 [0-9]+ [0-9]+ $misses\$" "$split"
check_eq "... and they add up to the run's misses" "$total" \
	"$(awk '{ print $2 + $3 }' <<< "$split")"
top_fn=$("$SPLIT" --functions "$VMLINUX_61" "$tmp/none.prof" "$misses" 2>&1 | head -n 1)
check_match "split-misses --functions: the most missed function first, not run" \
	'^[1-9][0-9]* never [A-Za-z_]' "$top_fn"
read -r n _ fn <<< "$top_fn"
addr=$(nm "$VMLINUX_61" | awk -v f="$fn" '$3 == f { print $1; exit }')
cp "$tmp/none.prof" "$tmp/one.prof"
echo "B $addr $addr 1 jmp" >> "$tmp/one.prof"
check_eq "split-misses: a record in $fn makes its misses, and only those, code that ran" \
	"$n $((total - n))" \
	"$("$SPLIT" "$VMLINUX_61" "$tmp/one.prof" "$misses" 2>&1 | awk '{ print $1, $2 + $3 }')"
check_eq "split-misses: a figures file for line misses is an error" 1 \
	"$("$SPLIT" "$VMLINUX_61" "$tmp/none.prof" "$fig" >/dev/null 2>&1; echo $?)"
check_eq "split-misses: line misses for a profile is an error" 1 \
	"$("$SPLIT" "$VMLINUX_61" "$misses" "$misses" >/dev/null 2>&1; echo $?)"
check_match "split-misses: a kernel without symbols is an error that names it" \
	"^split-misses: $misses: no function symbols" \
	"$("$SPLIT" "$misses" "$tmp/none.prof" "$misses" 2>&1 >/dev/null)"

# profile-blocks: proc's profile completed with the blocks net runs where proc ran nothing
BLOCKS=$top/scripts/profile-blocks
proc=$("$top/scripts/cached-profile" "$VMLINUX_61" proc 2>/dev/null) || proc=/nonexistent
net=$("$top/scripts/cached-profile" "$VMLINUX_61" net 2>/dev/null) || net=/nonexistent
check "profile-blocks: proc's and net's profiles recorded" test -s "$proc" -a -s "$net"
mix=$("$top/scripts/cached-profile" "$VMLINUX_61" proc+net 2>/dev/null) || mix=/nonexistent
"$top/kbolt/kbolt" profile merge "$proc" "$net" -o "$tmp/merged.prof" >/dev/null 2>&1
check "cached-profile: the mix proc+net is kbolt profile merge of proc's and net's, cached" \
	cmp -s "$mix" "$tmp/merged.prof"
"$BLOCKS" "$VMLINUX_61" "$proc" "$net" > "$tmp/blocks.prof" 2> "$tmp/blocks.err"
check_eq "profile-blocks: done" "0" "$?"
check_eq "... the output starts with proc's profile as it is" "$(md5sum < "$proc")" \
	"$(head -n "$(wc -l < "$proc")" "$tmp/blocks.prof" | md5sum)"
tail -n +"$(($(wc -l < "$proc") + 1))" "$tmp/blocks.prof" > "$tmp/added"
# the functions as the script's comment defines them, found here by bisection
verdict=$(/usr/bin/python3 - "$VMLINUX_61" "$proc" "$net" "$tmp/added" <<'EOF'
import bisect, subprocess, sys
syms = []
for l in subprocess.run(['nm', '-n', '--defined-only', sys.argv[1]], capture_output=True,
                        text=True).stdout.splitlines():
    p = l.split()
    if len(p) == 3:
        syms.append((int(p[0], 16), p[1] in 'tTwW'))
addrs = [a for a, _ in syms]
def owner(a):	# the symbol a starts in, if a function's: at one address, the last one
    i = bisect.bisect_right(addrs, a) - 1
    return i if i >= 0 and syms[i][1] else None
def records(path):
    return [l.split() for l in open(path) if l[:2] in ('B ', 'F ')]
ran = {owner(int(r[1], 16)) for r in records(sys.argv[2])}
want = sorted(' '.join(r[:3] + ['1'] + r[4:]) for r in records(sys.argv[3])
              if owner(int(r[1], 16)) not in ran | {None})
added = records(sys.argv[4])
got = sorted(' '.join(r) for r in added)
print('ok' if len(added) > 1000 else 'bad', '%d records added' % len(added))
print('ok' if all(r[3] == '1' for r in added) else 'bad', 'each with the count 1')
print('ok' if got == want else 'bad',
      "they are net's records in the functions proc never ran (%d wanted)" % len(want))
EOF
)
while IFS= read -r line; do
	check_match "profile-blocks: ${line#* }" '^ok ' "$line"
done <<< "$verdict"
check_match "... and they agree with the kernel's code" ' 0 disagree' \
	"$("$top/kbolt/kbolt" check-profile "$VMLINUX_61" "$tmp/blocks.prof" 2>&1)"
sed 's/^build-id .*/build-id 0123/' "$net" > "$tmp/other.prof"
check_match "profile-blocks: profiles of two kernels are an error that names them" \
	"^profile-blocks: $proc and $tmp/other.prof: profiles of different kernels" \
	"$("$BLOCKS" "$VMLINUX_61" "$proc" "$tmp/other.prof" 2>&1 >/dev/null)"
check_match "profile-blocks: a kernel without symbols is an error that names it" \
	"^profile-blocks: $misses: no function symbols" \
	"$("$BLOCKS" "$misses" "$proc" "$net" 2>&1 >/dev/null)"
check_eq "profile-blocks: two arguments are a usage error" 2 \
	"$("$BLOCKS" "$VMLINUX_61" "$proc" >/dev/null 2>&1; echo $?)"

# The whole evaluation, once per kernel, with the bounds, a recording by kbolt record in
# the guest, and a "stale" profile that is this kernel's own (so matched exactly): every
# row measured, the layouts in the order the knowledge behind them says, the targets
# judged
out=$("$EVALUATE" --runs 1 --bound --record 10 --stale-from "$VMLINUX_61" --out "$tmp/ev" 2>&1)
rc=$?
check_eq "evaluate --runs 1 --bound --record 10 --stale-from VMLINUX: done" 0 "$rc"
rows=$(sed -n '/^kernel  *instructions/,/^$/p' <<< "$out")
for k in original kbolt "kbolt greedy" llvm-bolt-19 "kbolt on net" "kbolt +blocks" \
	 "kbolt record" "kbolt stale"; do
	re=${k//+/\\+}
	check_match "... the row of $k has its five figures" \
		"^$re +([0-9.]+ \\([0-9.]+-[0-9.]+\\) +){4}[0-9]+ \\([0-9]+-[0-9]+\\)\$" \
		"$(grep -E "^$re  " <<< "$rows")"
done
ratio() { sed -n "s|^$1 L1i MPKI / original: \\([0-9.]*\\)\$|\\1|p" <<< "$out"; }
kb=$(ratio kbolt) gr=$(ratio "kbolt greedy") lb=$(ratio llvm-bolt-19)
own=$(ratio "kbolt on net") blk=$(ratio "kbolt +blocks")
check "... ext-TSP $kb < greedy $gr < 1, and below llvm-bolt-19's $lb" \
	awk "BEGIN { exit !($kb < $gr && $gr < 1 && $kb < $lb) }"
check "... the bounds below kbolt: net's own profile $own, +blocks $blk < $kb" \
	awk "BEGIN { exit !($own < $kb && $blk < $kb && $own > 0.5) }"
check_match "... kbolt's reduction at least 1.5 times llvm-bolt-19's" \
	"target: kbolt's L1i reduction >= 1.5 x llvm-bolt's: met" "$out"
# The instruction target depends on the training profile, recorded afresh on each
# machine: where the held-out workload runs blocks the training never ran, kbolt (and
# llvm-bolt) may add a jmp.  One recording here gave kbolt 338.22 M against 338.14 M
# (+0.02%), another (stop 14's) fewer, and one of 2026-12-07 338.00 M against 337.66 M
# (+0.10%), a layout the binary of before made byte for byte from that profile: the
# original's own count moved by 0.14% between those runs (338.14 M, 337.66 M).  The
# run must judge it, and stay within 0.2%, above that noise: a layout that adds jmps
# on hot paths would run far more.
insns() { sed -nE "s/^$1 +([0-9.]+) \(.*/\1/p" <<< "$rows"; }
ki=$(insns kbolt) oi=$(insns original)
check_match "... the instruction target judged" \
	"target: kbolt's kernel instructions <= the original's: (met|missed)" "$out"
check "... kbolt's kernel runs at most 0.2% more instructions ($ki M, original $oi M)" \
	awk "BEGIN { exit !($ki > 0 && $ki <= 1.002 * $oi) }"
check_match "... the L1i target judged" "target: kbolt L1i MPKI <= 0.85 of the original's: (met|missed)" \
	"$out"
split=$(sed -n '/^kernel  *functions proc ran/,$p' <<< "$out")
check_match "... the misses split for the original kernel" \
	'^original +[0-9]+ \([0-9.]+% of all\) +[0-9]+ \([0-9.]+% of all\)$' "$(grep '^original' <<< "$split")"
check_eq "... and for the seven others" 7 \
	"$(grep -cE '^[a-z].* [0-9]+ \([+-][0-9.]+%\) +[0-9]+ \([+-][0-9.]+%\)$' <<< "$split")"
# kbolt record: samples of the proc workload, their layout better than none
check_match "... kbolt record's profile: sampled addresses" \
	'^kbolt record: .*\.proc\.[0-9a-f]{8}\.record10\.50000hz\.prof \([1-9][0-9]* sampled addresses\)$' "$out"
recprof=$(sed -n 's/^kbolt record: \(.*\) ([0-9]* sampled addresses)$/\1/p' <<< "$out")
nsamples=$(awk '/^S / { n += $3 } END { print n + 0 }' "$recprof" 2>/dev/null || echo 0)
check "... at evaluate's 50000 Hz: more samples than 1000 Hz gives in 10 s, twice over ($nsamples)" \
	[ "$nsamples" -gt 20000 ]
rec=$(ratio "kbolt record")
check "... kbolt record's layout of them below the original's misses ($rec)" \
	awk "BEGIN { exit !($rec > 0.5 && $rec < 1) }"
check_match "... its target judged, with the share of kbolt's reduction" \
	"target: kbolt record's L1i reduction >= 0.70 x kbolt's \(sampled IPs vs the exact profile\): [0-9.]+ x, (met|missed)" \
	"$out"
# kbolt stale: the portable form of this kernel's own profile matches every function
# exactly, so its layout is kbolt's, byte for byte; only the notes differ, which name
# the profile file (.note.kbolt's digest, and the build-id derived from it)
check_match "... kbolt stale's profile matched, every function exactly" \
	'^kbolt stale: portable profile of .*: ([0-9]+) functions: \1 matched exactly, 0 by block hash, 0 as clones, 0 dropped' \
	"$out"
for k in stale kbolt; do
	objcopy -O binary -R .notes "$tmp/ev/$k.vmlinux" "$tmp/$k.image"
done
check "... kbolt stale's kernel is kbolt's, the loaded image but its build-id note" \
	cmp "$tmp/stale.image" "$tmp/kbolt.image"
# notes_only A B: A and B are the same size and differ only in A's .notes and .note.kbolt
notes_only() {
	local name type addr off size rest lo=() hi=() at
	while read -r name type addr off size rest; do
		case $name in
		.notes|.note.kbolt) lo+=($((16#$off))) hi+=($((16#$off + 16#$size))) ;;
		esac
	done < <(readelf -S -W "$1" | sed -n 's/^ *\[ *[0-9]*\] //p')
	[ "$(stat -c %s "$1")" = "$(stat -c %s "$2")" ] || return 1
	cmp -l "$1" "$2" | while read -r at rest; do
		for k in "${!lo[@]}"; do
			[ $((at - 1)) -ge "${lo[k]}" ] && [ $((at - 1)) -lt "${hi[k]}" ] && continue 2
		done
		echo "byte $((at - 1)) differs outside the notes"
	done | { ! grep .; }
}
check "... and the two files differ in their notes only" \
	notes_only "$tmp/ev/stale.vmlinux" "$tmp/ev/kbolt.vmlinux"
check_match "... its target met, with all of kbolt's reduction" \
	"target: kbolt stale's L1i reduction >= 0.90 x kbolt's \(another build's profile vs this one's\): 1.00 x, met" \
	"$out"
done_testing
