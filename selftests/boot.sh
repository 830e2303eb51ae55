#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Boot tests: the unmodified Debian 6.1 and 6.12 cloud kernels boot under QEMU (TCG,
# PVH entry) and pass every boot-lab workload with a clean console, once in the
# deterministic mode; and the lab's failure detection works: a failing guest test, a
# kernel panic and a timeout each make scripts/vmtest fail.
. "$(dirname "$0")/lib.sh"

case "${OUT:-.build/default}" in
*san*)
	skip "boot tests" "they exercise kernels, not the sanitized binaries (run once, in the normal pass)"
	done_testing
	exit 0 ;;
esac
need_kernels
if [ $have_kernels = 0 ]; then
	skip "boot tests" "test kernels not fetched: run scripts/fetch-kernels"
	done_testing
	exit 0
fi


vm_boot "Debian 6.1 vmlinux (PVH): all workloads, clean console" \
	--kernel "$VMLINUX_61" --workload all
vm_boot "Debian 6.12 vmlinux (PVH): all workloads, clean console" \
	--kernel "$VMLINUX_612" --workload all
vm_boot "Debian 6.1 in deterministic mode (icount, fixed seed and clock)" \
	--kernel "$VMLINUX_61" --workload proc --workload files --deterministic

# An exact edge profile of the workloads through kbolt's QEMU plugin, checked against
# the static decoding of the kernel: sources are branch instructions of the recorded
# kind, direct targets the encoded ones, except at sites patched at boot.
KBOLT=${KBOLT:-$top/kbolt/kbolt}
for k in 61 612; do
	v=VMLINUX_$k
	prof=$tmp/$k.prof
	smp=$([ $k = 612 ] && echo 2 || echo 1)	# per-vCPU state, merged at exit
	vm_boot "profile recorded on ${k/6/6.} with $smp vCPUs (proc, net)" --kernel "${!v}" \
		--smp $smp --workload proc --workload net --record-profile "$prof"
	check_match "${k/6/6.}: profile header names the kernel's build-id" \
		"^build-id $(readelf -n "${!v}" | sed -n 's/.*Build ID: *//p')\$" "$(head -n 5 "$prof")"
	j=$("$KBOLT" check-profile -j "${!v}" "$prof" 2>/dev/null | tail -n 1)
	# a transfer TCG splits oddly (an instruction across a page) may still disagree:
	# allow one record in 1000, no more
	verdict=$(printf '%s' "$j" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
ok = r["records"] > 5000 and r["agree"] > r["records"] * 0.6 and r["disagree"] * 1000 <= r["records"]
print("ok" if ok else "bad", r["records"], "records,", r["agree"], "agree,", r["patched"],
      "patched,", r["disagree"], "disagree")')
	check_match "${k/6/6.}: recorded edges agree with the decoded kernel ($verdict)" '^ok ' "$verdict"
done
out=$("$KBOLT" check-profile "$VMLINUX_612" "$tmp/61.prof" 2>&1); rc=$?
check_eq "a profile of another kernel is refused" 1 "$rc"
check_match "... naming both build-ids" "recorded on build-id .* but .* has build-id" "$out"

out=$("$VMTEST" --kernel "$VMLINUX_61" --workload selftest-fail --log "$tmp/c" 2>&1); rc=$?
check_eq "a failing guest test fails the run" 1 "$rc"
check_match "... and says so" "FAIL: 1 guest tests failed" "$out"
out=$("$VMTEST" --kernel "$VMLINUX_61" --append rdinit=/nonexistent --timeout 120 \
	--log "$tmp/c" 2>&1); rc=$?
check_eq "a kernel panic fails the run" 1 "$rc"
check_match "... and the panic is shown" "Kernel panic - not syncing" "$out"
out=$("$VMTEST" --kernel "$VMLINUX_61" --workload all --timeout 1 --log "$tmp/c" 2>&1); rc=$?
check_eq "a timeout fails the run" 1 "$rc"
check_match "... and says so" "FAIL: timeout after 1s" "$out"
check_eq "an unknown workload is a usage error" 2 \
	"$("$VMTEST" --kernel "$VMLINUX_61" --workload nosuch >/dev/null 2>&1; echo $?)"
check_eq "--kaslr with a vmlinux is a usage error" 2 \
	"$("$VMTEST" --kernel "$VMLINUX_61" --kaslr >/dev/null 2>&1; echo $?)"
out=$("$VMTEST" --kernel "$VMLINUX_61" --workload proc --record-bpf "$tmp/r" \
	--record-frequency 0 2>&1); rc=$?
check_eq "--record-frequency 0 is a usage error" 2 "$rc"
check_match "... saying so" '^vmtest: --record-frequency takes samples a second, 1 or more$' "$out"
out=$("$VMTEST" --kernel "$VMLINUX_61" --workload proc --record-frequency 5000 2>&1); rc=$?
check_eq "--record-frequency without --record-bpf is a usage error" 2 "$rc"
check_match "... saying so" '^vmtest: --record-frequency is the rate of --record-bpf: add it$' "$out"
done_testing
