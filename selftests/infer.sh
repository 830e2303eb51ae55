#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Flow inference end to end (kbolt/pass/infer.c; Documentation/design.rst, "Flow
# inference"): a sampled profile of Debian's 6.1, synthesized from the exact proc
# profile (selftests/samples-from-profile: one sample per 1000 executed instructions,
# Poisson), agrees with the kernel's code, lays it out (optimize --stats), verified, the
# same bytes twice; and the layout it gives packs the code the *exact* profile runs
# into fewer 64-byte lines (heatmap --optimized), at least 40% of the lines the exact
# profile's own layout saves.  The unit tests of the algorithm are selftests/unit/infer.c.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac

need_proc_profile_61 "6.1: samples synthesized from the proc profile"
samples=$tmp/proc.samples
out=$("$top/selftests/samples-from-profile" "$VMLINUX_61" "$prof" "$samples" 1000 1)
check "6.1: samples synthesized from the proc profile" test -s "$samples"
echo "# $out"
check_match "... agree with the kernel's code" ' 0 of them disagree$' \
	"$("$KBOLT" check-profile "$VMLINUX_61" "$samples" 2>&1)"

opt() {	# opt PROFILE OUT: optimize by PROFILE, --stats on stdout
	"$KBOLT" optimize --stats --strip-debug "$VMLINUX_61" --profile "$1" -o "$2" 2>&1
}
stats=$(opt "$samples" "$tmp/v.samples"); rc=$?
check_eq "a samples-only profile lays the kernel out (optimize, verified)" 0 "$rc"
printf '%s\n' "$stats" | grep -E 'rewritten with|taken branches|ext-TSP' | sed 's/^/# samples: /'
check_match "... rewriting functions by inferred counts" 'rewritten with a new layout: [1-9]' "$stats"
opt "$samples" "$tmp/v.samples2" >/dev/null
check "... deterministic: the same bytes again" cmp "$tmp/v.samples" "$tmp/v.samples2"
check "... kbolt verify agrees" "$KBOLT" verify "$VMLINUX_61" "$tmp/v.samples"
stats=$(opt "$prof" "$tmp/v.exact")
printf '%s\n' "$stats" | grep -E 'rewritten with|taken branches|ext-TSP' | sed 's/^/# exact:   /'

lines() {	# lines OPTIMIZED: 64-byte lines of the exact profile's code, before and after
	"$KBOLT" heatmap -j "$VMLINUX_61" "$prof" --optimized "$1" -o "$tmp/h.svg" |
		python3 -c 'import json, sys; h = json.load(sys.stdin)
print(h["before"]["lines"], h["after"]["lines"])'
}
read -r before by_samples < <(lines "$tmp/v.samples")
read -r _ by_exact < <(lines "$tmp/v.exact")
echo "# lines the exact profile runs: $before; laid out by samples $by_samples, by the exact profile $by_exact"
check "the inferred layout saves at least 40% of the lines the exact one saves" \
	[ $(( (before - by_samples) * 100 )) -ge $(( (before - by_exact) * 40 )) ]
done_testing
