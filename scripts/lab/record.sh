# SPDX-License-Identifier: GPL-2.0
# kbolt record in the guest (scripts/vmtest --record-bpf; sourced by /init): the BPF
# programs checked by the kernel's verifier, the branch-stack path tried, the
# recorder run in the background while the workloads run, and its profile sent to
# the host over the second serial port (/dev/ttyS1, raw), announced on the console
# with its size and SHA-256 so that the host can tell a complete copy.
record_pid=
record_start() {	# record_start SECONDS [HZ]: 0 records until record_finish
	local secs=$1 freq=${2:+--frequency $2}
	echo "kbolt-lab: record _text $(grep -m 1 ' _text$' /proc/kallsyms | cut -d' ' -f1)"
	tap_check "kbolt record --check: the sampling program passes the verifier" \
		kbolt record --check
	tap_check "kbolt record --check --branches: the branch-stack program passes the verifier" \
		kbolt record --check --branches
	# no branch stacks under QEMU: the host test reads what it said
	kbolt record --branches --duration 1 -o /tmp/branches.prof > /tmp/branches.out 2>&1
	echo "kbolt-lab: record --branches exit $?: $(head -n 1 /tmp/branches.out)"
	if [ "$secs" = 0 ]; then
		kbolt record -j --bpf-stats $freq -o /tmp/record.prof > /tmp/record.json \
			2> /tmp/record.err &
	else
		kbolt record -j --bpf-stats $freq --duration "$secs" -o /tmp/record.prof \
			> /tmp/record.json 2> /tmp/record.err &
	fi
	record_pid=$!
}

record_finish() {
	local rc
	kill -INT "$record_pid" 2>/dev/null
	wait "$record_pid"
	rc=$?
	sed 's/^/# record: /' /tmp/record.err
	echo "kbolt-lab: record summary $(cat /tmp/record.json)"
	tap_check "kbolt record: exit status 0 (was $rc)" [ "$rc" = 0 ]
	tap_check "kbolt record: wrote a profile" [ -s /tmp/record.prof ]
	[ -s /tmp/record.prof ] || return
	stty -F /dev/ttyS1 raw -echo 2>/dev/null
	cat /tmp/record.prof > /dev/ttyS1
	echo "kbolt-lab: record $(wc -c < /tmp/record.prof) $(sha256sum < /tmp/record.prof | cut -c1-64)"
}
