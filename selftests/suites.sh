#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# CI's sample of scripts/kernel-matrix: one random layout of each kernel of Debian's other
# suites that scripts/fetch-kernels fetched (5.10 by GCC 10; scripts/test fetches it), in
# the default mode (DWARF kept and proven), verified on its own, kmeta check clean, and
# booted through every workload.  The whole matrix (20 seeds, 3 boots, every kernel) is
# scripts/kernel-matrix's, its figures in Documentation/benchmarks.rst.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac

# one_seed NAME SEED: a random layout of the fetched kernel NAME, checked and booted
one_seed() {
	local v rel in out=$tmp/$1
	v=$(kernel_var "$1")
	rel=${v}_RELEASE
	in=$KBOLT_CACHE/${!rel}/vmlinux
	if [ -n "${KBOLT_QUICK:-}" ] || [ ! -s "$in" ]; then
		skip "$1: a random layout verified and booted" "not fetched: run scripts/fetch-kernels $1"
		return
	fi
	case "${OUT:-.build/default}" in
	*san*)	# the sanitized build: the pipeline on part of the kernel
		check "$1 (${!rel}): random layout of tcp_* verified (sanitized)" "$KBOLT" optimize \
			--layout random --seed "$2" --funcs 'tcp_*' --strip-debug -o "$out" "$in"
		return ;;
	esac
	if ! "$KBOLT" optimize --layout random --seed "$2" --stats -o "$out" "$in" \
		>"$out.stats" 2>"$out.err"; then
		fail "$1 (${!rel}): random layout, seed $2, DWARF kept, written and verified" \
			"$(tail -n 5 "$out.err")"
		return
	fi
	ok "$1 (${!rel}): random layout, seed $2, DWARF kept, written and verified"
	echo "# $(grep 'rewritten with a new layout' "$out.stats")"
	check "... kbolt verify accepts it on its own" "$KBOLT" verify "$in" "$out"
	check "... kmeta check passes" "$KMETA" check "$out"
	vm_boot "... boots (PVH), every workload passes" --kernel "$out" --workload all
	rm -f "$out"
}

one_seed 5.10 7
done_testing
