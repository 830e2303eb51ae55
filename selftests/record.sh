#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kbolt record: on the host, the refusals that need no kernel image (not root, only
# CAP_BPF, hidden kallsyms, bad options), each one line and its exit status; the
# sampler's object without CO-RE relocations, loaded without the kernel's BTF; and if
# the host's kernel can record, the online mask's CPUs, the running _text in the
# header, a map too small (counts lost, said) and SIGINT; in the
# boot lab, the recorder running inside the guest (scripts/vmtest --record-bpf) on
# Debian's 6.1 and 6.12 (the latter on two vCPUs, locked down) and on 6.1's bzImage
# booted with KASLR: both programs pass the verifier, the branch-stack path says there
# are no branch stacks under QEMU, the profile names the kernel and where its _text
# ran, its records are the format's, at run-time addresses, and check-profile finds
# them on the kernel's instructions (the KASLR slide taken out against the vmlinux);
# the 6.1 profile feeds kbolt optimize, whose output boots.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
out=${OUT:-.build/default}
case "$out" in /*) ;; *) out=$top/$out ;; esac

# refused: one line, exit 1 (a usage error: exit 2), no output file
refused() {	# refused DESCRIPTION STATUS REGEX COMMAND...
	local d=$1 want=$2 re=$3 out rc
	shift 3
	rm -f "$tmp/r.prof"
	out=$("$@" 2>&1); rc=$?
	if [ "$rc" = "$want" ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
	   printf '%s\n' "$out" | grep -Eq -- "$re" && [ ! -e "$tmp/r.prof" ]; then
		ok "$d"
	else
		fail "$d" "exit $rc (want $want), output:" "$out"
	fi
}

refused "record: -o and --check together are a usage error" 2 "leave out -o" \
	"$KBOLT" record --check -o "$tmp/r.prof"
refused "record: neither -o nor --check is a usage error" 2 "usage: kbolt record" "$KBOLT" record
refused "record: --duration 0 is a usage error" 2 "--duration takes a whole number" \
	"$KBOLT" record --duration 0 -o "$tmp/r.prof"
refused "record: an unknown --event is a usage error" 2 "--event takes cpu-clock or cycles" \
	"$KBOLT" record --event instructions -o "$tmp/r.prof"
refused "record: its options do not apply to other commands" 2 "does not apply to check-profile" \
	"$KBOLT" check-profile --branches a b
refused "record: an output directory that does not exist: refused before recording" 1 \
	"cannot create a file in $tmp/no/such" "$KBOLT" record --duration 60 -o "$tmp/no/such/r.prof"
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null; then
	refused "record: not root: refused" 1 "needs root, or the capabilities CAP_BPF and CAP_PERFMON \(this process has neither\)" \
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
		"$KBOLT" record --duration 1 -o "$tmp/r.prof"
	refused "record: CAP_BPF without CAP_PERFMON: refused" 1 "has CAP_BPF only" \
		setpriv --inh-caps=-all --bounding-set=-all,+bpf \
		"$KBOLT" record --duration 1 -o "$tmp/r.prof"
	if [ "$(cat /proc/sys/kernel/kptr_restrict)" != 0 ] ||
	   [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 1 ]; then
		refused "record: kallsyms hidden (no CAP_SYSLOG): refused" 1 \
			"no address for _text and _etext \(hidden: kernel.kptr_restrict is" \
			setpriv --inh-caps=-all --bounding-set=-all,+bpf,+perfmon \
			"$KBOLT" record --duration 1 -o "$tmp/r.prof"
	else
		skip "record: kallsyms hidden" "this host shows kernel addresses to all"
	fi
else
	skip "record: refusals of the unprivileged" "needs root and setpriv"
fi

# LeakSanitizer does not work under ptrace, and the tests below run kbolt under strace:
# in the sanitized pass, leaks are left out from here on (AddressSanitizer stays)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

# What a kernel refuses, each one line naming the cause and exit 1, made to happen by
# strace's fault injection: no bpf() (no CONFIG_BPF_SYSCALL), bpf() refused to the
# process, no perf_event_open(), and perf_event_paranoid 3 without CAP_SYS_ADMIN (the
# value bind-mounted in a mount namespace; Debian's kernels refuse even CAP_PERFMON then)
if [ "$(id -u)" = 0 ] && command -v strace > /dev/null && command -v setpriv > /dev/null &&
   command -v unshare > /dev/null && "$KBOLT" record --check > /dev/null 2>&1; then
	refused "record: a kernel without BPF (bpf() says ENOSYS): refused" 1 \
		'^kbolt: error: record: this kernel has no BPF \(bpf\(\): Function not implemented; it needs CONFIG_BPF_SYSCALL\)$' \
		strace -o /dev/null -f -e trace=bpf -e inject=bpf:error=ENOSYS \
		"$KBOLT" record --event cpu-clock --duration 1 -o "$tmp/r.prof"
	refused "record: BPF refused to this process (bpf() says EPERM): refused" 1 \
		'^kbolt: error: record: bpf\(\): Operation not permitted: the kernel refuses BPF to this process \(it needs CAP_BPF and CAP_PERFMON, or root' \
		strace -o /dev/null -f -e trace=bpf -e inject=bpf:error=EPERM \
		"$KBOLT" record --event cpu-clock --duration 1 -o "$tmp/r.prof"
	refused "record: a kernel without perf events (perf_event_open() says ENOSYS): refused" 1 \
		'^kbolt: error: record: this kernel has no perf events \(it needs CONFIG_PERF_EVENTS\)$' \
		strace -o /dev/null -f -e trace=perf_event_open -e inject=perf_event_open:error=ENOSYS \
		"$KBOLT" record --event cpu-clock --duration 1 -o "$tmp/r.prof"
	echo 3 > "$tmp/paranoid"
	refused "record: perf_event_paranoid 3, no CAP_SYS_ADMIN: refused, saying what to set" 1 \
		'^kbolt: error: record: perf_event_open: Permission denied: kernel.perf_event_paranoid is 3, above 2, .*: run as root, or set it to 2 or less$' \
		unshare -m sh -c 'mount --bind "$1" /proc/sys/kernel/perf_event_paranoid &&
			exec strace -o /dev/null -f -e trace=perf_event_open \
			-e inject=perf_event_open:error=EACCES \
			setpriv --inh-caps=-all --bounding-set=-all,+bpf,+perfmon,+syslog \
			"$0" record --event cpu-clock --duration 1 -o "$2"' \
		"$KBOLT" "$tmp/paranoid" "$tmp/r.prof"
else
	skip "record: what a kernel refuses" "needs root, strace, setpriv, unshare and a kernel that records"
fi

# The sampler reads UAPI layouts only, so it needs no kernel BTF: its object has no CO-RE
# relocation (the core_relo_len of .BTF.ext's header, struct btf_ext_header of libbpf's
# libbpf_internal.h, at byte 28), and it loads with /sys/kernel/btf hidden
obj=$out/kbolt/record/sampler.bpf.o
if [ -s "$obj" ] && command -v llvm-objcopy > /dev/null; then
	llvm-objcopy --dump-section .BTF.ext="$tmp/btf.ext" "$obj" "$tmp/obj.copy"
	check_eq "record: the sampler's object has no CO-RE relocation (needs no kernel BTF)" \
		"0" "$(python3 -c '
import struct, sys
b = open(sys.argv[1], "rb").read()
magic, version, flags, hdr_len = struct.unpack_from("<HBBI", b)
print(struct.unpack_from("<I", b, 28)[0] if magic == 0xeb9f and hdr_len >= 32 else "no header")' \
		"$tmp/btf.ext")"
else
	skip "record: the sampler's object has no CO-RE relocation" "no $obj or no llvm-objcopy"
fi
if [ "$(id -u)" = 0 ] && command -v unshare > /dev/null && [ -d /sys/kernel/btf ] &&
   "$KBOLT" record --check > /dev/null 2>&1; then
	check "record --check: the program loads with the kernel's BTF hidden" \
		unshare -m sh -c 'mount -t tmpfs none /sys/kernel/btf && "$0" record --check' "$KBOLT"
else
	skip "record: loads without the kernel's BTF" "needs root, unshare, and a kernel that records"
fi

# The events go on the CPUs the online mask lists, not on as many ids as there are
# CPUs: with the mask made "1" (CPU 0 absent, as when it is offline), one CPU, id 1
if [ "$(id -u)" = 0 ] && command -v unshare > /dev/null && [ -e /sys/devices/system/cpu/cpu1 ] &&
   "$KBOLT" record --check > /dev/null 2>&1; then
	echo 1 > "$tmp/online"
	out=$(unshare -m sh -c 'mount --bind "$1" /sys/devices/system/cpu/online &&
		"$0" record -j --duration 1 -o "$2"' "$KBOLT" "$tmp/online" "$tmp/cpu1.prof" 2>&1)
	check_match "record: the events go on the online mask's CPUs (mask \"1\": one CPU)" \
		'"cpus":1,' "$out"
else
	skip "record: the online mask's CPUs" "needs root, unshare, a CPU 1 and a kernel that records"
fi

# On this machine's own kernel, if it can record: the running _text in the header, the
# samples at the addresses the kernel runs at; a map too small loses counts, counted
# and said (a warning, a comment in the profile, the summary); SIGINT ends a recording
# without --duration, and the profile is written
if "$KBOLT" record --check > /dev/null 2>&1; then
	"$KBOLT" record --duration 1 -o "$tmp/host.prof" 2> /dev/null
	text=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms)
	etext=$(awk '$3 == "_etext" { print $1; exit }' /proc/kallsyms)
	check_eq "record on the host: the header says where _text runs (/proc/kallsyms)" \
		"text $text" "$(grep '^text ' "$tmp/host.prof")"
	check_eq "... every sample between the running _text and _etext" "" \
		"$(awk -v t="$text" -v e="$etext" '/^S / && ($2 < t || $2 >= e) { print; exit }' \
			"$tmp/host.prof")"
	# the default event: cycles, else cpu-clock, said on stderr and in the header
	out=$("$KBOLT" record --duration 1 -o "$tmp/default.prof" 2>&1 >/dev/null)
	if grep -q '^event cpu-clock$' "$tmp/default.prof"; then
		check_match "record by default on a host without cycles: a note on stderr" \
			'^kbolt: info: record: cycles cannot be sampled here \(perf_event_open: .*\): cpu-clock sampled instead' \
			"$out"
		check_match "... and in the profile's header, before its records" \
			'^# note: cycles cannot be sampled here \(perf_event_open: .*\): cpu-clock sampled instead' \
			"$(sed '/^S /q' "$tmp/default.prof")"
	else
		check_match "record by default on a host with cycles: cycles sampled" \
			'^event cycles(:p{1,3})?$' "$(cat "$tmp/default.prof")"
	fi
	# precise_ip stepped down from 3 where the PMU refuses a level (EOPNOTSUPP, as
	# Intel's does; strace injects the refusals), as perf does, cycles before cpu-clock
	if command -v strace > /dev/null; then
		out=$(strace -f -qq -e trace=perf_event_open \
			-e inject=perf_event_open:error=EOPNOTSUPP:when=1..3 \
			"$KBOLT" record --duration 1 -o "$tmp/p.prof" 2>&1 >/dev/null |
			sed -n 's/^perf_event_open({type=PERF_TYPE_\([A-Z]*\),.*precise_ip=\([0-3]\).*/\1:\2/p' |
			head -n 4 | tr '\n' ' ')
		check_eq "record: cycles tried at precise_ip 3, 2, 1, 0 in turn" \
			"HARDWARE:3 HARDWARE:2 HARDWARE:1 HARDWARE:0 " "$out"
	else
		skip "record: cycles' precise_ip stepped down" "no strace"
	fi

	# an idle host samples a handful of addresses (the idle loop): keep the kernel busy
	# on many paths (fork, exec, directory walks, /proc) so that 8 entries are too few
	( while :; do find /usr -xdev > /dev/null 2>&1; cat /proc/self/status > /dev/null; done ) &
	busy=$!
	out=$("$KBOLT" record --map-entries 8 --duration 2 -o "$tmp/small.prof" 2>&1); rc=$?
	kill $busy; wait $busy 2> /dev/null
	check_eq "record on the host with an 8-entry map: exit 0" 0 "$rc"
	check_match "... a warning says how many counts were lost" \
		"warning: kbolt: record: [1-9][0-9]* counts lost: the map of 8 entries was full" "$out"
	check_match "... and the profile says so" "^# lost [1-9][0-9]* counts: the map of 8 entries was full" \
		"$(cat "$tmp/small.prof")"
	check_eq "... which has the 8 records the map held" 8 "$(grep -c '^S ' "$tmp/small.prof")"
	"$KBOLT" record -j -o "$tmp/int.prof" > "$tmp/int.json" 2>&1 &
	pid=$!
	sleep 2
	kill -INT $pid
	wait $pid; rc=$?
	check_eq "record until SIGINT: exit 0" 0 "$rc"
	check_match "... the profile written, of samples" "^S ffffffff" "$(cat "$tmp/int.prof")"
	check_match "... its JSON summary: samples, none lost" '"samples":[1-9][0-9]*,.*"lost":0,' \
		"$(cat "$tmp/int.json")"
	# BPF run-time statistics time every program of the host: on request only
	check_match "record: BPF run-time statistics off by default (the program not timed)" \
		'"bpf_run_ns":0,"bpf_run_cnt":0[,}]' "$(cat "$tmp/int.json")"
	out=$("$KBOLT" record -j --bpf-stats --duration 1 -o "$tmp/stats.prof" 2> /dev/null)
	check_match "record --bpf-stats: the program's runs timed" \
		'"samples":([1-9][0-9]*),.*"bpf_run_ns":[1-9][0-9]*,"bpf_run_cnt":[1-9]' "$out"
	if command -v setpriv > /dev/null; then
		refused "record --bpf-stats without CAP_SYS_ADMIN: refused" 1 \
			"record: --bpf-stats: cannot switch on the kernel's BPF run-time statistics: Operation not permitted" \
			setpriv --inh-caps=-all --bounding-set=-all,+bpf,+perfmon,+syslog \
			"$KBOLT" record --bpf-stats --event cpu-clock --duration 1 -o "$tmp/r.prof"
	fi
else
	skip "record on the host's own kernel" "kbolt record --check fails here"
fi

need_kernels
if [ $have_kernels = 0 ]; then
	skip "record in the boot lab" "test kernels not fetched: run scripts/fetch-kernels"
	done_testing
	exit 0
fi

# The guest's recording: vmtest passed (the guest's own TAP: both programs through the
# verifier, the recorder's exit status), then what the console and the profile say
guest_record() {	# guest_record NAME VMLINUX VMTEST-ARGS...
	local name=$1 vmlinux=$2 prof=$tmp/$1.prof id
	shift 2
	vm_boot "$name: kbolt record in the guest while proc runs" "$@" --workload proc \
		--record-bpf "$prof"
	cp "$tmp/console" "$tmp/$name.console"
	check_match "$name: --branches refused in the guest: no branch stacks under QEMU" \
		"^kbolt-lab: record --branches exit 1: kbolt: error: record: --branches: this machine's PMU gives no branch stacks" \
		"$(cat "$tmp/console")"
	[ -s "$prof" ] || { fail "$name: the profile came out of the guest"; return; }
	id=$(readelf -n "$vmlinux" | sed -n 's/.*Build ID: *//p')
	check_eq "$name: the header names the kernel, the recorder and the event" \
		"kbolt-profile 1|build-id $id|release $(basename "$(dirname "$vmlinux")")|recorder kbolt-record|event cpu-clock" \
		"$(grep -E '^(kbolt-profile|build-id|release|recorder|event) ' "$prof" | tr '\n' '|' | sed 's/|$//')"
	check_match "$name: dropped is counted" '^dropped [0-9]+$' "$(cat "$prof")"
	check_match "$name: no cycles under QEMU's TCG: cpu-clock, the note in the header" \
		'^# note: cycles cannot be sampled here \(perf_event_open: .*\): cpu-clock sampled instead' \
		"$(cat "$prof")"
	text=$(sed -n 's/^kbolt-lab: record _text //p' "$tmp/console")
	check_eq "$name: the header's text is where the guest's _text ran" "text $text" \
		"$(grep '^text ' "$prof")"
	# S records only, at the addresses the kernel ran at (from _text on), sorted, unique
	check_eq "$name: S records of the kernel's run-time addresses, sorted, each once" "" \
		"$(grep -v '^#\|^[a-z]' "$prof" | awk -v text="$text" '
			!/^S ffffffff[89ab][0-9a-f]+ [1-9][0-9]*$/ || length($2) != 16 ||
			$2 < text { print "bad: " $0; exit }
			prev != "" && $2 <= prev { print "order: " $0; exit }
			{ prev = $2 }')"
	check_profile "$name" "$vmlinux" "$prof"
}

# check-profile: every sample on an instruction; the code kbolt knows as no function
# (the asm SYM_CODE_START_LOCAL of copy_user_short_string in 6.1) may hold 1 in 100
check_profile() {	# check_profile NAME VMLINUX PROFILE
	local out j verdict
	out=$("$KBOLT" check-profile "$2" "$3" 2>&1)
	j=$("$KBOLT" check-profile -j "$2" "$3" 2>/dev/null | tail -n 1)
	verdict=$(printf '%s' "$j" | python3 -c '
import json, sys
r = json.load(sys.stdin)
ok = r["records"] > 300 and r["by_kind"]["sample"] == r["records"] and r["outside"] == 0 and r["disagree"] * 100 <= r["records"]
print("ok" if ok else "bad", r["records"], "samples,", r["agree"], "agree,", r["patched"],
      "patched,", r["outside"], "outside,", r["disagree"], "disagree")')
	check_match "$1: check-profile finds the samples on the kernel's instructions ($verdict)" \
		'^ok ' "$verdict"
	check_eq "$1: ... and any disagreement is a sample in code of no function" "" \
		"$(printf '%s\n' "$out" | grep -- ' -> ' | grep -v 'the sample is in no function$')"
}

guest_record 6.1 "$VMLINUX_61" --kernel "$VMLINUX_61"
out=$(grep '^kbolt-lab: record summary' "$tmp/6.1.console" | sed 's/^kbolt-lab: record summary //')
check_match "6.1: the recorder's summary: samples counted, none lost" \
	'"samples":[1-9][0-9]*,.*"lost":0,' "$out"

# two vCPUs: two CPUs insert into the one map
guest_record 6.12 "$VMLINUX_612" --kernel "$VMLINUX_612" --smp 2 --append lockdown=confidentiality
check_match "6.12: ... with the kernel locked down (confidentiality)" "due to lockdown" \
	"$(cat "$tmp/6.12.console")"

# The guest ran at the link address (a vmlinux boots through PVH): the same profile as
# a boot that KASLR put 0x2e00000 higher would have written it (_text and every address
# moved) still lands on the vmlinux: the reader takes the header's slide out
if [ -s "$tmp/6.1.prof" ]; then
	python3 -c '
import sys
slide = 0x2e00000
for line in open(sys.argv[1]):
    f = line.split()
    if f and f[0] == "text":
        line = "text %x\n" % (int(f[1], 16) + slide)
    elif f and f[0] == "S":
        line = "S %x %s\n" % (int(f[1], 16) + slide, f[2])
    sys.stdout.write(line)' "$tmp/6.1.prof" > "$tmp/6.1-slid.prof"
	check_profile "6.1 moved as by KASLR" "$VMLINUX_61" "$tmp/6.1-slid.prof"
fi

vmlinuz=$KBOLT_CACHE/$KERNEL_61_RELEASE/vmlinuz
if [ -s "$vmlinuz" ]; then
	guest_record kaslr "$VMLINUX_61" --kernel "$vmlinuz" --kaslr
	text=$(sed -n 's/^kbolt-lab: record _text //p' "$tmp/kaslr.console")
	if [ "$text" = "$(nm "$VMLINUX_61" | sed -n 's/ T _text$//p')" ]; then
		skip "kaslr: the slide was taken out" "KASLR chose no slide this boot"
	else
		# check-profile above found the samples on the vmlinux: the slide taken out
		check_eq "kaslr: the kernel ran at $text, the profile says so" "text $text" \
			"$(grep '^text ' "$tmp/kaslr.prof")"
	fi
else
	skip "kaslr: kbolt record on a KASLR boot" "no $vmlinuz: run scripts/fetch-kernels 6.1-vmlinuz"
fi

# the profile feeds the optimizer (which verifies its output), and the output boots
if [ -s "$tmp/6.1.prof" ]; then
	check "6.1: kbolt optimize --profile with the recorded profile" \
		"$KBOLT" optimize "$VMLINUX_61" --profile "$tmp/6.1.prof" -o "$tmp/opt.vmlinux"
	vm_boot "6.1: the optimized kernel boots and runs proc" --kernel "$tmp/opt.vmlinux" \
		--workload proc
	rm -f "$tmp/opt.vmlinux"
fi
done_testing
