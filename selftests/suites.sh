#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# CI's sample of scripts/kernel-matrix: one random layout of each kernel of Debian's other
# suites that scripts/fetch-kernels fetched (scripts/test fetches them: 5.10 by GCC 10,
# Debian 13's 6.12 by GCC 14, 7.3 by GCC 14), in the default mode (DWARF kept and
# proven), verified on its own, kmeta check clean, and booted through every workload;
# GCC 14's alignment nops inside functions (fixtures/padding.S) counted as dropped, and
# 7.3 booted again with Indirect Target Selection forced.  The whole matrix (20 seeds, 3
# boots, every kernel) is scripts/kernel-matrix's, its figures in
# Documentation/benchmarks.rst.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac

# one_seed NAME SEED: a random layout of the fetched kernel NAME, checked and booted; the
# output stays in $tmp/NAME for the caller, 1 if there is none
one_seed() {
	local v rel in out=$tmp/$1
	v=$(kernel_var "$1")
	rel=${v}_RELEASE
	in=$KBOLT_CACHE/${!rel}/vmlinux
	if [ -n "${KBOLT_QUICK:-}" ] || [ ! -s "$in" ]; then
		skip "$1: a random layout verified and booted" "not fetched: run scripts/fetch-kernels $1"
		return 1
	fi
	case "${OUT:-.build/default}" in
	*san*)	# the sanitized build: the pipeline on part of the kernel
		check "$1 (${!rel}): random layout of tcp_* verified (sanitized)" "$KBOLT" optimize \
			--layout random --seed "$2" --funcs 'tcp_*' --strip-debug -o "$out" "$in"
		return 1 ;;
	esac
	if ! "$KBOLT" optimize --layout random --seed "$2" --stats -j -o "$out" "$in" \
		>"$out.stats" 2>"$out.err"; then
		fail "$1 (${!rel}): random layout, seed $2, DWARF kept, written and verified" \
			"$(tail -n 5 "$out.err")"
		return 1
	fi
	ok "$1 (${!rel}): random layout, seed $2, DWARF kept, written and verified"
	echo "# $1: $(json_get "$out.stats" '"%d of %d multi-block functions rewritten" % (r["rewritten_multi_block"], r["multi_block"])')"
	check "... kbolt verify accepts it on its own" "$KBOLT" verify "$in" "$out"
	check "... kmeta check passes" "$KMETA" check "$out"
	vm_boot "... boots (PVH), every workload passes" --kernel "$out" --workload all
}

# inner_padding NAME: GCC 14's padding inside functions was found and dropped
inner_padding() {
	local runs
	runs=$(json_get "$tmp/$1.stats" 'r["inner_padding_runs"]')
	check "... $runs runs of alignment nops inside its functions dropped (GCC 14)" \
		test "$runs" -gt 100
}

one_seed 5.10 3	# seed 3 kept a moved label's low byte: the verifier once refused it
one_seed 6.12-gcc14 7 && inner_padding 6.12-gcc14
if one_seed 7.3 7; then
	inner_padding 7.3
	# a return site in the lower half of a 64-byte line becomes jmp its_return_thunk at
	# boot, the others ret (cpu_wants_rethunk_at()): the moved sites are chosen anew
	vm_boot "... boots with ITS forced (indirect_target_selection=force)" --kernel "$tmp/7.3" \
		--workload proc --append "indirect_target_selection=force loglevel=7"
	check_match "... the kernel mitigates ITS with its thunks" \
		'ITS: Mitigation: Aligned branch/return thunks' "$(cat "$tmp/console")"
	check_match "... its return thunk is the active one" \
		'active return thunk: its_return_thunk' "$(cat "$tmp/console")"
fi
rm -f "$tmp"/5.10 "$tmp"/6.12-gcc14 "$tmp"/7.3
done_testing
