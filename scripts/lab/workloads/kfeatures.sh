# SPDX-License-Identifier: GPL-2.0
# The machinery kbolt rewrites, exercised: static keys toggled through tracepoints and
# the function tracer, kprobes added and removed, exception-table fixups (bad user
# pointers must give EFAULT), a WARN where the kernel offers a safe trigger, and stack
# unwinding (/proc/PID/stack, sysrq-t) with no unwinder complaint on the console.
tr=/sys/kernel/tracing
if [ ! -d $tr/events ]; then
	tap_skip "tracepoints" "no tracefs"
else
	toggle_events() {
		local e
		for e in sched/sched_switch sched/sched_wakeup syscalls/sys_enter_openat \
			 irq/irq_handler_entry kmem/kmalloc; do
			[ -f $tr/events/$e/enable ] || continue
			echo 1 > $tr/events/$e/enable || return 1
		done
		echo 1 > $tr/tracing_on
		cat /proc/version > /dev/null
		sleep 0.2
		for e in sched/sched_switch sched/sched_wakeup syscalls/sys_enter_openat \
			 irq/irq_handler_entry kmem/kmalloc; do
			[ -f $tr/events/$e/enable ] && echo 0 > $tr/events/$e/enable
		done
		grep -q sched_switch $tr/trace
	}
	tap_check "tracepoints enabled and disabled (static keys), events recorded" toggle_events
	echo > $tr/trace
	ftrace() {
		echo vfs_read > $tr/set_ftrace_filter || return 1
		echo vfs_write >> $tr/set_ftrace_filter || return 1
		echo 1 > $tr/tracing_on
		echo function > $tr/current_tracer || return 1
		cat /proc/version > /dev/null
		# read before switching back: a tracer change empties the buffer
		grep -q vfs_read $tr/trace || { tail -n 5 $tr/trace; return 1; }
		echo nop > $tr/current_tracer
		echo > $tr/set_ftrace_filter
	}
	if grep -qw function $tr/available_tracers 2>/dev/null; then
		tap_check "function tracer on vfs_read/vfs_write, then off" ftrace
	else
		tap_skip "function tracer" "not in this kernel"
	fi
	echo > $tr/trace
	kprobe() {
		echo 'p:kbolt_probe do_sys_openat2' >> $tr/kprobe_events || return 1
		echo 1 > $tr/events/kprobes/kbolt_probe/enable || return 1
		cat /proc/version /proc/cmdline > /dev/null
		echo 0 > $tr/events/kprobes/kbolt_probe/enable
		grep -q kbolt_probe $tr/trace || return 1
		echo '-:kbolt_probe' >> $tr/kprobe_events
	}
	if [ -f $tr/kprobe_events ]; then
		tap_check "kprobe on do_sys_openat2 added, hit, removed" kprobe
	else
		tap_skip "kprobes" "not in this kernel"
	fi
	echo 0 > $tr/tracing_on
fi
tap_check "system calls given bad user pointers return EFAULT" /lab/bin/labtool efault
if [ -w /sys/kernel/debug/provoke-crash/DIRECT ]; then
	echo "kbolt-lab: expect WARNING"
	echo WARNING > /sys/kernel/debug/provoke-crash/DIRECT
	echo "kbolt-lab: end expect"
	tap_ok "WARN triggered through lkdtm and survived"
else
	tap_skip "a WARN path" "no lkdtm (provoke-crash) in this kernel"
fi
stacks() {
	local n=0 f
	for f in /proc/[0-9]*/stack; do
		cat $f > /dev/null 2>&1 && n=$((n + 1))
	done
	[ $n -gt 10 ]
}
tap_check "/proc/*/stack of every task" stacks
sysrq_t() {
	echo 1 > /proc/sys/kernel/sysrq || return 1
	echo t > /proc/sysrq-trigger
	dmesg | grep -q 'task:'
}
tap_check "sysrq-t dumps every task's stack" sysrq_t
dmesg -n 5 2>/dev/null
