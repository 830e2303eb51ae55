# SPDX-License-Identifier: GPL-2.0
# Process churn: fork/exec/exit, pipes, signals, exit codes, threads of shells.
churn() {
	local i=0
	while [ $i -lt 300 ]; do
		/bin/true || return 1
		i=$((i + 1))
	done
}
tap_check "300 fork/exec/exit of true" churn
tap_check "pipeline of 4 processes moves 200000 lines" \
	sh -c '[ "$(seq 1 200000 | sort -rn | head -n 1 | cat)" = 200000 ]'
sigterm() {
	sleep 30 &
	local pid=$!
	kill -TERM $pid
	wait $pid
	[ $? -eq 143 ]
}
tap_check "SIGTERM ends a sleeping child (status 143)" sigterm
# in a fresh shell, where $$ is the process that waits (not the init shell)
tap_check "a child delivers SIGUSR1 to its parent" sh -c \
	'trap "exit 0" USR1; (sleep 0.1; kill -USR1 $$) & sleep 5 & wait; exit 1'
tap_check "exit status travels through sh -c" sh -c 'sh -c "exit 7"; [ $? -eq 7 ]'
parallel() {
	local i=0
	while [ $i -lt 20 ]; do
		( seq 1 2000 | md5sum > /tmp/p.$i ) &
		i=$((i + 1))
	done
	wait
	[ "$(cat /tmp/p.* | sort -u | wc -l)" -eq 1 ]
}
tap_check "20 concurrent pipelines agree" parallel
rm -f /tmp/p.*
