#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The lab's own kernels: Debian's linux-source-6.1 and 6.12 built with kconfig/ (cached
# by scripts/build-kernel; the first run takes minutes), those of LAB_VERSIONS (lib.sh:
# CI's sample 6.12, scripts/lab-matrix both).  Each must keep its .rela
# sections and pass kmeta check, boot as a vmlinux through PVH and as a KASLR bzImage
# (really relocated), and pass every workload with a clean console.
. "$(dirname "$0")/lib.sh"

case "${OUT:-.build/default}" in
*san*)
	skip "self-built kernels" "they exercise kernels, not the sanitized binaries (run once, in the normal pass)"
	done_testing
	exit 0 ;;
esac


for ver in $LAB_VERSIONS; do
	if ! out=$(build_lab_kernel "$ver" "$tmp/build.log"); then
		fail "$ver: kernel builds" "$(tail -n 20 "$tmp/build.log")"
		continue
	fi
	ok "$ver: kernel builds (or is cached) in $out"
	nr=$(readelf -SW "$out/vmlinux" | grep -c ' \.rela\.')
	check_match "$ver: vmlinux keeps its .rela sections ($nr)" '^[1-9][0-9]*$' "$nr"
	check "$ver: kmeta check passes" "$KMETA" check "$out/vmlinux"
	check "$ver: vmlinux.relocs is not empty" test -s "$out/vmlinux.relocs"
	vm_boot "$ver: vmlinux (PVH) passes all workloads" --kernel "$out/vmlinux" --workload all
	vm_boot "$ver: KASLR bzImage passes all workloads" --kernel "$out/bzImage" --kaslr --workload all
	check_relocated "$ver: KASLR moved the kernel" "$out/vmlinux"
done
done_testing
