# SPDX-License-Identifier: GPL-2.0
# TAP helpers of the guest: a counter in /tmp so that workloads in subshells share it.
# The plan line comes last ("1..N"), as TAP allows.
tap_next() {
	local n
	n=$(cat /tmp/.tap_n 2>/dev/null || echo 0)
	n=$((n + 1))
	echo $n > /tmp/.tap_n
	echo $n
}
tap_ok() { echo "ok $(tap_next) - $*"; }
tap_fail() {
	echo "not ok $(tap_next) - $*"
	echo $(( $(cat /tmp/.tap_failed 2>/dev/null || echo 0) + 1 )) > /tmp/.tap_failed
}
tap_skip() { echo "ok $(tap_next) - $1 # SKIP $2"; }
tap_check() {	# tap_check DESCRIPTION COMMAND...
	# a name no workload uses: sh's locals are visible to the functions called
	local _tap_desc=$1
	shift
	if "$@" > /tmp/.tap_out 2>&1; then
		tap_ok "$_tap_desc"
	else
		tap_fail "$_tap_desc"
		sed 's/^/# /' /tmp/.tap_out | tail -n 5
	fi
}
tap_done() {
	local n f
	n=$(cat /tmp/.tap_n 2>/dev/null || echo 0)
	f=$(cat /tmp/.tap_failed 2>/dev/null || echo 0)
	echo "1..$n"
	echo "kbolt-lab: done $((n - f)) passed, $f failed"
}
