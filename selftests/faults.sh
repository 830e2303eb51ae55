#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Faults while writing, for every command that writes (optimize, fix-sites, heatmap,
# profile-to-bolt), on the flow fixture: killed (SIGKILL) at the rename and in the
# middle of the output, a full disk (a small tmpfs); then on Debian's 6.1, whose
# optimize runs for seconds: SIGTERM, SIGKILL at three moments, the output directory
# remounted read-only at two, two runs writing the same output.  In each case no
# partial or unverified file is under the output's name, a previous output is intact,
# the process that lives says one clear line and exits non-zero, and what a killed
# run left is removed by the next run in that directory.  Faults are injected by strace
# (a signal or an error at a chosen system call) and by real mounts: the tests run as
# root, so a chmod would prove nothing.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
sanitized=0
case "${OUT:-.build/default}" in *san*) sanitized=1 ;; esac

fx=$top/selftests/fixtures
need_fixture flow
addr() { nm "$tmp/flow" | awk -v s="$1" '$3 == s {print $1}'; }
printf '# kbolt profile\nkbolt-profile 1\nbuild-id -\nrelease 6.1.0-test\nrecorder test\nB %s %s 10 call\n' \
	"$(addr flow_syscall)" "$(addr __fentry__)" >"$tmp/flow.prof"

# writer NAME OUT: the command line of writer NAME writing OUT
writer() {
	case $1 in
	optimize) echo optimize "$tmp/flow" -o "$2" --layout random --seed 1 ;;
	fix-sites) echo fix-sites "$tmp/flow" -o "$2" ;;
	heatmap) echo heatmap "$tmp/flow" "$tmp/flow.prof" -o "$2" ;;
	profile-to-bolt) echo profile-to-bolt -o "$2" "$tmp/flow.prof" ;;
	esac
}
out_name() { [ "$1" = heatmap ] && echo "$2.svg" || echo "$2"; }
leftovers() { ls -A "$1" | grep -c '^\.kbolt-' || true; }

# killed WRITER DIR STRACE-INJECT: the writer killed by strace's injection, exit 137,
# its previous output intact, a temporary file left; the next run removes it
killed() {
	local w=$1 d=$2 inject=$3 out prev rc
	out=$(out_name "$w" "$d/out")
	prev=$(sha256sum <"$out")
	# shellcheck disable=SC2046
	rc=$( { ( strace -f -o /dev/null -e "inject=$inject" "$KBOLT" $(writer "$w" "$out") \
		>/dev/null 2>&1 ); echo $?; } 2>/dev/null )
	check_eq "$w killed ($inject): exit 137" 137 "$rc"
	check_eq "... the previous output intact" "$prev" "$(sha256sum <"$out")"
	check_eq "... its temporary file left" 1 "$(leftovers "$d")"
	# shellcheck disable=SC2046
	msg=$("$KBOLT" $(writer "$w" "$(out_name "$w" "$d/other")") 2>&1 >/dev/null)
	check_match "... the next run in the directory removes it, saying so" \
		"^kbolt: info: removed $d/\\.kbolt-[A-Za-z0-9]{6}, left by a kbolt run that did not finish$" "$msg"
	check_eq "... and nothing is left" 0 "$(leftovers "$d")"
}

if ! command -v strace >/dev/null; then
	skip "faults injected by strace" "no strace: apt-get install strace"
elif ! strace -f -o /dev/null true 2>/dev/null; then
	skip "faults injected by strace" "strace cannot trace here (ptrace not permitted)"
else
	for w in optimize fix-sites heatmap profile-to-bolt; do
		d=$tmp/$w
		mkdir -p "$d"
		# shellcheck disable=SC2046
		"$KBOLT" $(writer "$w" "$(out_name "$w" "$d/out")") >/dev/null 2>&1 ||
			fail "$w: the first output written"
		killed "$w" "$d" rename:signal=KILL
		[ "$w" = optimize ] || [ "$w" = fix-sites ] &&
			killed "$w" "$d" pwrite64:signal=KILL:when=2
		[ "$w" = heatmap ] || [ "$w" = profile-to-bolt ] &&
			killed "$w" "$d" write:signal=KILL:when=1
	done
fi

# A full disk: a tmpfs with the previous output in it, then filled
mnt=$tmp/full
mkdir -p "$mnt"
if ! mount -t tmpfs -o size=256k tmpfs "$mnt" 2>/dev/null; then
	skip "a full disk" "cannot mount a tmpfs here (not root?)"
else
	for w in optimize fix-sites heatmap profile-to-bolt; do
		out=$(out_name "$w" "$mnt/$w")
		# shellcheck disable=SC2046
		"$KBOLT" $(writer "$w" "$out") >/dev/null 2>&1 || fail "$w: written to the tmpfs"
	done
	dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
	for w in optimize fix-sites heatmap profile-to-bolt; do
		out=$(out_name "$w" "$mnt/$w")
		prev=$(sha256sum <"$out")
		# shellcheck disable=SC2046
		msg=$("$KBOLT" $(writer "$w" "$out") 2>&1 >/dev/null); rc=$?
		check_eq "$w on a full disk: exit 1" 1 "$rc"
		check_match "... one line saying so" "^$out: error: kbolt: .*No space left on device$" "$msg"
		check_eq "... the previous output intact" "$prev" "$(sha256sum <"$out")"
		check_eq "... no temporary file left" 0 "$(leftovers "$mnt")"
	done
	umount "$mnt"
fi

if [ -s "$VMLINUX_61" ] && [ $sanitized = 0 ]; then
	V=$VMLINUX_61
	d=$tmp/k
	mkdir -p "$d"
	run61() { "$KBOLT" optimize "$V" -o "$1" --layout random --seed "$2" --strip-debug; }
	run61 "$d/out" 1 >/dev/null 2>&1 || fail "6.1: the first output written"
	run61 "$d/seed2" 2 >/dev/null 2>&1 || fail "6.1: seed 2 written"
	new=$(sha256sum <"$d/seed2")
	prev=$(sha256sum <"$d/out")
	"$KBOLT" optimize "$V" -o "$d/out" --layout random --seed 2 --strip-debug 2>/dev/null & pid=$!
	sleep 1
	kill -TERM $pid; wait $pid; rc=$?
	check_eq "6.1: SIGTERM mid-run: exit 143" 143 "$rc"
	check_eq "... the temporary file removed, the previous output intact" "0 $prev" \
		"$(leftovers "$d") $(sha256sum <"$d/out")"
	for t in 0.5 2 3.5; do
		{ ( run61 "$d/out" 2 >/dev/null 2>&1 & pid=$!; sleep $t; kill -KILL $pid; wait $pid ); } 2>/dev/null
		now=$(sha256sum <"$d/out")
		check "6.1: killed after ${t} s: the output is the previous one or the verified new one" \
			[ "$now" = "$prev" -o "$now" = "$new" ]
		run61 "$d/other" 1 >/dev/null 2>&1
		check_eq "... the next run leaves no temporary file" 0 "$(leftovers "$d")"
		cp "$d/other" "$d/out"
		prev=$(sha256sum <"$d/out")
	done

	# the output directory remounted read-only while optimize runs
	ro=$tmp/ro
	mkdir -p "$ro"
	if ! mount --bind "$d" "$ro" 2>/dev/null; then
		skip "a read-only remount mid-run" "cannot bind-mount here (not root?)"
	else
		for t in 1 3.5; do
			prev=$(sha256sum <"$ro/out")
			run61 "$ro/out" 3 >/dev/null 2>"$tmp/ro.err" & pid=$!
			sleep $t
			# refused (busy) while a file is open for writing there: kbolt's
			# temporary file is, from its creation to its rename
			mount -o remount,ro,bind "$ro" 2>/dev/null && how=remounted || how="remount refused"
			wait $pid; rc=$?
			mount -o remount,rw,bind "$ro"
			if [ $rc = 0 ]; then
				check "read-only after ${t} s ($how): finished, verified" \
					"$KBOLT" verify "$V" "$ro/out"
				continue
			fi
			check_eq "read-only after ${t} s: exit 1" 1 "$rc"
			check_match "... one line naming the output" \
				"^$ro/out: error: kbolt: .*Read-only file system$" "$(cat "$tmp/ro.err")"
			check_eq "... the previous output intact" "$prev" "$(sha256sum <"$ro/out")"
			run61 "$ro/other" 1 >/dev/null 2>&1
			check_eq "... writable again, the next run leaves no temporary file" 0 \
				"$(leftovers "$ro")"
		done
		umount "$ro"
	fi

	# two runs writing the same output at once: one complete output, nothing else
	run61 "$d/seed4" 4 >/dev/null 2>&1
	run61 "$d/seed5" 5 >/dev/null 2>&1
	run61 "$d/both" 4 >/dev/null 2>&1 & p1=$!
	run61 "$d/both" 5 >/dev/null 2>&1 & p2=$!
	wait $p1; r1=$?; wait $p2; r2=$?
	check_eq "6.1: two runs writing the same output: both exit 0" "0 0" "$r1 $r2"
	both=$(sha256sum <"$d/both")
	check "... the output is one of the two, whole" \
		bash -c "[ '$both' = '$(sha256sum <"$d/seed4")' ] || [ '$both' = '$(sha256sum <"$d/seed5")' ]"
	check_eq "... no temporary file left" 0 "$(leftovers "$d")"
else
	skip "faults on Debian's 6.1" "no 6.1 vmlinux, or the sanitized pass"
fi
done_testing
