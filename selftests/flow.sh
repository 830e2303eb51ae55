#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kbolt's model of control flow after the instructions that end a block, on the flow
# fixture (fixtures/flow.S: one probe function per instruction class): over many random
# layouts, every output verifies; after each instruction that may resume, the code
# after it still follows it (checked by objdump, not by kbolt); after those that never
# resume (a ud2 outside the bug table among them), the layout moved another block there
# at least once; the emulation prefixes (ud2, "xen" or "kvm", an instruction) resume
# after the instruction; a ud1 outside the bug table with code after it is skipped; sync_core()'s iret to self verifies whether
# or not its label moves.  A mutant kbolt whose optimizer takes
# syscall for a trap again is refused by kbolt verify, whose rule is its own.  Debian's
# 6.1 with random seed 6, which failed on syscall, is written and verified.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
sanitized=0
case "${OUT:-.build/default}" in *san*) sanitized=1 ;; esac
SEEDS=${FLOW_SEEDS:-40}
[ $sanitized = 1 ] && SEEDS=8

fx=$top/selftests/fixtures
need_fixture flow

# optimize_seeds KBOLT PREFIX [ARGS...]: random layouts 1..$SEEDS of the fixture,
# PREFIX.N written, PREFIX.N.rc, PREFIX.N.err and the standard output PREFIX.N.stats kept
optimize_seeds() {
	local kbolt=$1 prefix=$2
	shift 2
	for s in $(seq 1 "$SEEDS"); do
		"$kbolt" optimize "$tmp/flow" -o "$prefix.$s" --layout random --seed "$s" "$@" \
			>"$prefix.$s.stats" 2>"$prefix.$s.err"
		echo $? >"$prefix.$s.rc"
	done
}

optimize_seeds "$KBOLT" "$tmp/r" --stats -j
bad=$(for s in $(seq 1 "$SEEDS"); do [ "$(cat "$tmp/r.$s.rc")" = 0 ] || echo "$s"; done)
check_eq "$SEEDS random layouts of the fixture written and verified" "" "$(echo $bad)"
outs=$(for s in $(seq 1 "$SEEDS"); do [ -s "$tmp/r.$s" ] && echo "$tmp/r.$s"; done)
/usr/bin/python3 "$top/selftests/fixtures/flow_after.py" $outs >"$tmp/after"
rewritten=$(json_get "$tmp/r.1.stats" 'r["rewritten"]')
check_eq "seed 1: the 20 probes with blocks to move are rewritten (flow_iret_self too)" 20 "$rewritten"

for probe in syscall sysenter int3 int80 int1 hlt vmcall vmlaunch vmresume warn noreturn_call \
	xen_prefix kvm_prefix; do
	n=$(grep -c " flow_$probe next$" "$tmp/after")
	check_eq "flow_$probe: the code after it follows it in all $SEEDS layouts" "$SEEDS" "$n"
done
for probe in sysret sysexit iret bug ret trap; do
	n=$(grep -c " flow_$probe other$" "$tmp/after")
	check "flow_$probe: never resumes: another block follows it in some layouts ($n of $SEEDS)" \
		[ "$n" -gt 0 ]
done
for probe in odd_ud1; do
	check "flow_$probe: left as it is" cmp -s <(objdump -d -j .text "$tmp/flow" |
		sed -n "/<flow_$probe>:/,/^$/p") <(objdump -d -j .text "$tmp/r.1" |
		sed -n "/<flow_$probe>:/,/^$/p")
done
check_eq "... counted as skipped: ud2 outside the bug table with bytes after it" 1 \
	"$(json_get "$tmp/r.1.stats" 'r["skipped"]["odd_trap"]["functions"]')"
same=0
for f in $outs; do
	cmp -s <(objdump -d -j .text "$tmp/flow" | sed -n '/<xen_hypercall_pv>:/,/^$/p' | cut -f2-) \
		<(objdump -d -j .text "$f" | sed -n '/<xen_hypercall_pv>:/,/^$/p' | cut -f2-) &&
		same=$((same + 1))
done
check_eq "xen_hypercall_pv (push; push; syscall; pop; pop; jmp) is one block, unchanged" \
	"$SEEDS" "$same"

# The verifier's rule is not the optimizer's: a mutant optimizer that takes syscall for
# a trap again (kmeta's class, which the verifier no longer reads) is caught
if [ $sanitized = 0 ]; then
	m=$tmp/mutant
	mkdir -p "$m"
	cp -r "$top/common" "$top/kmeta" "$top/kbolt" "$top/Makefile" "$top/Documentation" "$m"
	sed -i '/^\tif (ci->id == X86_INS_SYSCALL || ci->id == X86_INS_SYSENTER)$/{n;s/KI_OTHER/KI_TRAP/}' \
		"$m/kmeta/insn.c"
	if ! grep -A1 'X86_INS_SYSCALL ||' "$m/kmeta/insn.c" | grep -q '^		return KI_TRAP;$'; then
		fail "mutant: the syscall class planted" "kmeta/insn.c no longer has the line to mutate"
	elif ! make -s -C "$m" OUT=.build/m .build/m/kbolt/kbolt >"$tmp/mutant.log" 2>&1; then
		fail "mutant: built" "$(tail -n 5 "$tmp/mutant.log")"
	else
		optimize_seeds "$m/.build/m/kbolt/kbolt" "$tmp/m"
		refused=0 wrong=0
		for s in $(seq 1 "$SEEDS"); do
			rc=$(cat "$tmp/m.$s.rc")
			if [ "$rc" = 1 ] && grep -q 'verify: flow_sys\(call\|enter\)+0x' "$tmp/m.$s.err"; then
				refused=$((refused + 1))
			elif [ "$rc" = 0 ] && /usr/bin/python3 "$top/selftests/fixtures/flow_after.py" "$tmp/m.$s" |
				grep -q ' flow_sys\(call\|enter\) other$'; then
				wrong=$((wrong + 1))
			fi
		done
		check "mutant (syscall a trap): verify refuses the layouts that break it ($refused of $SEEDS)" \
			[ "$refused" -gt 0 ]
		check_eq "... and accepts none that does" 0 "$wrong"
		check_match "... naming the place" 'error: kbolt: verify: flow_sys(call|enter)\+0x[0-9a-f]+: ' \
			"$(cat "$tmp"/m.*.err)"
	fi
fi

need_kernels
if [ $have_kernels = 0 ] || [ $sanitized = 1 ]; then
	skip "6.1, random layout, seed 6" "$no_kernels, or the sanitized pass"
else
	if "$KBOLT" optimize "$VMLINUX_61" -o "$tmp/seed6" --layout random --seed 6 --strip-debug \
		2>"$tmp/seed6.err"; then
		ok "6.1, random layout, seed 6 (syscall in xen_hypercall_pv): written and verified"
	else
		fail "6.1, random layout, seed 6 (syscall in xen_hypercall_pv): written and verified" \
			"$(head -n 5 "$tmp/seed6.err")"
	fi
	x=$(nm "$VMLINUX_61" | awk '$3 == "xen_hypercall_pv" {print $1}')
	check "... xen_hypercall_pv's bytes unchanged" cmp -s \
		<(objdump -d --start-address=0x$x --stop-address=$(printf '0x%x' $((0x$x + 16))) "$VMLINUX_61" | tail -n +7) \
		<(objdump -d --start-address=0x$x --stop-address=$(printf '0x%x' $((0x$x + 16))) "$tmp/seed6" | tail -n +7)
fi
done_testing
