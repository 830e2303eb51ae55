#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kbolt optimize on 6.12 kernels: Debian's cloud debug vmlinux, which has no .rela
# sections (kbolt's no-relocations mode), and the lab's own 6.12 build, which keeps
# them (scripts/build-kernel builds it if it is not cached).  A random layout of each
# (and a profile layout of Debian's) verifies on its own, passes kmeta check and boots
# through every workload, Debian's random layout also with Indirect Target Selection
# forced; the coverage of each is printed, and the no-relocations mode says its output
# cannot feed a KASLR bzImage (Debian 13's 6.12, by GCC 14: suites.sh).  The sanitized
# build runs the no-relocations pipeline on part of Debian's kernel.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac

# coverage FILE: the figures of one run, for the log
coverage() {
	json_get "$1" '"%d functions, %d rewritten (%.1f%% of %d with two or more blocks), %d left alone for a value in the image, relocations: %s" % (r["functions"], r["rewritten"], 100 * r["rewritten_multi_block"] / r["multi_block"], r["multi_block"], r["skipped"]["data_value"]["functions"], r["relocations"])'
}

# optimize_checked NAME VMLINUX OUT ARGS...: optimize, verify alone, kmeta check, boot
optimize_checked() {
	local name=$1 in=$2 out=$3
	shift 3
	# the DWARF is dwarf.sh's: here it is copied as it is
	if ! "$KBOLT" optimize "$@" -o "$out" --stats -j --no-update-debug "$in" >"$out.stats" \
		2>"$out.err"; then
		fail "$name: written and verified" "$(tail -n 5 "$out.err")"
		return 1
	fi
	ok "$name: written and verified"
	echo "# $name: $(coverage "$out.stats")"
	check "... kbolt verify accepts it on its own" "$KBOLT" verify "$in" "$out"
	check "... kmeta check passes" "$KMETA" check "$out"
	vm_boot "... boots (PVH), every workload passes" --kernel "$out" --workload all
}

case "${OUT:-.build/default}" in
*san*)
	# the whole pipeline of the no-relocations mode, scan and proof included, on
	# part of the kernel: everything is decoded and analysed, a few are rewritten
	if [ -s "$VMLINUX_612" ]; then
		out=$tmp/san
		if "$KBOLT" optimize --layout random --seed 1 --funcs 'tcp_*' --funcs '*d_lookup*' \
			-o "$out" --stats -j "$VMLINUX_612" >"$out.stats" 2>"$out.err"; then
			ok "sanitized: random layout of tcp_* and *d_lookup* on Debian 6.12, verified"
		else
			fail "sanitized: random layout of tcp_* and *d_lookup* on Debian 6.12, verified" \
				"$(tail -n 5 "$out.err")"
		fi
		check_match "... rewrote some" '^[1-9]' "$(json_get "$out.stats" 'r["rewritten"]')"
	else
		skip "sanitized 6.12 optimize" "not fetched: run scripts/fetch-kernels"
	fi
	done_testing
	exit 0 ;;
esac

if [ -s "$VMLINUX_612" ]; then
	out=$tmp/deb-r1
	optimize_checked "Debian 6.12 (no relocations), random layout, seed 1" \
		"$VMLINUX_612" "$out" --layout random --seed 1
	check_eq "... --stats says there are no relocations" False \
		"$(json_get "$out.stats" 'r["relocations"]')"
	check "... kbolt says the output cannot feed a KASLR bzImage" \
		grep -q "no relocations: the output cannot be made into a KASLR bzImage" "$out.err"
	share=$(json_get "$out.stats" 'round(100 * r["rewritten_multi_block"] / r["multi_block"], 1)')
	check_match "... moved blocks in $share% of multi-block functions" '^([6-9][0-9]|100)\.' "$share"
	# Indirect Target Selection (Debian's 6.12 has it): at boot each return site in the
	# lower half of a 64-byte line becomes a jmp to its_return_thunk, the others a ret
	# (cpu_wants_rethunk_at()): the moved sites are chosen anew
	vm_boot "... boots with ITS forced (indirect_target_selection=force)" --kernel "$out" \
		--workload proc --append "indirect_target_selection=force loglevel=7"
	check_match "... the kernel mitigates ITS with its thunks" \
		'ITS: Mitigation: Aligned branch/return thunks' "$(cat "$tmp/console")"
	check_match "... its return thunk is the active one" \
		'active return thunk: its_return_thunk' "$(cat "$tmp/console")"
	prof=$tmp/proc.prof
	vm_boot "Debian 6.12: profile of proc recorded" --kernel "$VMLINUX_612" \
		--deterministic --workload proc --record-profile "$prof"
	optimize_checked "Debian 6.12 (no relocations), profile layout" \
		"$VMLINUX_612" "$tmp/deb-p" --profile "$prof"
else
	skip "Debian 6.12 optimize tests" "not fetched: run scripts/fetch-kernels"
fi

# Built here, not only by selfbuilt.sh, which runs after this test: a fresh machine's
# CI would otherwise never run these (scripts/build-kernel caches the build)
if lab=$(build_lab_kernel 6.12 "$tmp/build.log"); then
	out=$tmp/lab-r1
	optimize_checked "lab 6.12 (relocations), random layout, seed 1" \
		"$lab/vmlinux" "$out" --layout random --seed 1
	check_eq "... --stats says there are relocations" True \
		"$(json_get "$out.stats" 'r["relocations"]')"
else
	fail "lab 6.12 kernel builds" "$(tail -n 20 "$tmp/build.log")"
fi
done_testing
