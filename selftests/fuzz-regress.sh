#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Replay what the fuzzers found (selftests/fuzz/run) and the seeds they start from.
# The image fuzzer's (selftests/fuzz/regressions/: inputs that once crashed, leaked or
# hung libkmeta; known-bugs/: inputs that still do, each a bug to fix; the seed images
# of selftests/fuzz/make-seeds) go through kmeta summary, check and dump.  The profile
# fuzzer's (profile-regressions/ and profile-known-bugs/, the same for kbolt's profile
# readers; the seed profiles of make-profile-seeds) go through kbolt check-profile, with
# and without --force, and profile-to-bolt.  A command may fail on such input, with exit 1
# (or 2), but never die of a signal (exit >= 128) or draw a sanitizer report: run it
# with KMETA=.build/san/kmeta/kmeta KBOLT=.build/san/kbolt/kbolt to make that mean most.
# The seeds are well formed: they must pass the checks.  What profile-to-bolt writes of
# a profile must read back to the same file.  The fuzz targets, as make fuzz last built
# them, replay the regressions (each must pass) and the known bugs (each must still fail:
# once one passes, its fix is in and it moves to the regressions).
. "$(dirname "$0")/lib.sh"

# ASan, LeakSanitizer and UBSan reports; ASan exits 1 after its report, so the status
# alone does not tell.  A hang (such input once looped) is cut at 60 s: exit 124.
sanitizer_re='ERROR: (Address|Leak|Memory|Thread)Sanitizer|runtime error:'
sanitizer_re+='|SUMMARY: [A-Za-z]*Sanitizer'

# the tables as kmeta --help lists them
tables=$("$KMETA" --help | sed -n '/^Tables:/,/^$/p' | sed 's/^Tables://')

why() {		# why STATUS: what an exit status beyond 2 means
	case "$1" in
	124) echo ": timed out after 60 s" ;;
	1[3-9][0-9]|2[0-9][0-9]) echo ": signal $(($1 - 128))" ;;
	esac
}

replay() {	# replay NAME FILE: summary, check and dump of every table survive FILE
	local name=$1 file=$2 cmd out rc t bad=
	for t in $tables; do
		out=$(timeout -k 5 60 "$KMETA" dump "$t" "$file" 2>&1)
		rc=$?
		if [ "$rc" -gt 2 ] || printf '%s\n' "$out" | grep -Eq "$sanitizer_re"; then
			bad="dump $t: exit $rc$(why "$rc")
$(printf '%s\n' "$out" | grep -E "$sanitizer_re" | head -n 3)"
			break
		fi
	done
	check_eq "$name: dump of each table exits 0, 1 or 2, no sanitizer report" "" "$bad"
	for cmd in summary check; do
		out=$(timeout -k 5 60 "$KMETA" "$cmd" "$file" 2>&1)
		rc=$?
		if [ "$rc" -le 2 ]; then
			ok "$name: $cmd exits $rc"
		else
			fail "$name: $cmd exits 0, 1 or 2" "exit $rc$(why "$rc")" \
				"$(printf '%s\n' "$out" | tail -n 5)"
		fi
		check_eq "$name: $cmd: no sanitizer report" "" \
			"$(printf '%s\n' "$out" | grep -E "$sanitizer_re" | head -n 3)"
	done
}

# fuzzer NAME SOURCES...: the fuzz target NAME, as make fuzz last built it, replays its
# regressions (REGRESSIONS, each must pass) and its known bugs (KNOWN, each must still
# fail: once one passes, its fix is in and it moves to REGRESSIONS); skipped if it is not
# built or older than one of SOURCES.  Set REGRESSIONS and KNOWN first.
fuzzer() {
	local name=$1 bin=$top/selftests/fuzz/corpus-work/$1 newer out rc what f regs
	shift
	regs=$(ls "$REGRESSIONS"/* 2>/dev/null)
	[ -z "$regs" ] && [ -z "$(ls "$KNOWN" 2>/dev/null)" ] && return
	newer=$(find "$@" -name '*.[chS]' -newer "$bin" 2>/dev/null | head -n 1)
	if [ ! -x "$bin" ]; then
		skip "$name replays the regressions and the known bugs" "not built: make fuzz builds it"
		return
	elif [ -n "$newer" ]; then
		skip "$name replays the regressions and the known bugs" \
			"older than ${newer#"$top"/}: make fuzz rebuilds it"
		return
	fi
	if [ -n "$regs" ]; then
		out=$("$bin" -close_fd_mask=2 -timeout=60 $regs 2>&1)
		rc=$?
		check_eq "$name replays the regressions" 0 "$rc"
		[ "$rc" -eq 0 ] || printf '%s\n' "$out" |
			grep -E "$sanitizer_re|^$name:" | head -n 5 | sed 's/^/# /'
	fi
	for f in "$KNOWN"/*; do
		[ -f "$f" ] || continue
		out=$("$bin" -close_fd_mask=2 -timeout=60 "$f" 2>&1)
		rc=$?
		what=$(printf '%s\n' "$out" | grep -E "^$name: |$sanitizer_re" | head -n 1 |
			sed 's/ (errors.*//')
		if [ "$rc" -ne 0 ] && [ -n "$what" ]; then
			ok "known bug ${KNOWN#"$top"/selftests/fuzz/}/$(basename "$f") still fails: $what"
		else
			fail "known bug ${KNOWN#"$top"/selftests/fuzz/}/$(basename "$f") still fails" \
				"$name exits $rc on it: fixed? Move it to ${REGRESSIONS#"$top"/}/"
		fi
	done
}

nr=0
for f in "$top"/selftests/fuzz/regressions/*; do
	[ -f "$f" ] || continue
	replay "regressions/$(basename "$f" | cut -c1-18)" "$f"
	nr=$((nr + 1))
done
[ "$nr" -eq 0 ] && skip "regressions" "selftests/fuzz/regressions/ is empty"
for f in "$top"/selftests/fuzz/known-bugs/*; do
	[ -f "$f" ] && replay "known-bugs/$(basename "$f")" "$f"
done

# The fuzz target itself: it walks every table even after one fails, where the commands
# stop at the first error
REGRESSIONS=$top/selftests/fuzz/regressions KNOWN=$top/selftests/fuzz/known-bugs
fuzzer fuzz_image "$top/kmeta" "$top/common" "$top/selftests/fuzz/fuzz_image.c"

if "$top/selftests/fuzz/make-seeds" "$tmp/seeds" >"$tmp/seeds.log" 2>&1; then
	for f in "$tmp"/seeds/*; do
		replay "seed $(basename "$f")" "$f"
		check "seed $(basename "$f"): check passes" "$KMETA" check "$f"
	done
else
	fail "make-seeds builds the seed images" "$(tail -n 5 "$tmp/seeds.log")"
fi

# -- kbolt's profile readers
KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
fz=$top/selftests/fuzz

replay_profile() {	# replay_profile NAME FILE: the profile commands survive FILE
	local name=$1 file=$2 out rc cmd bad=
	for cmd in "check-profile $image" "check-profile -f $image" \
		   "profile-to-bolt -o $tmp/replay.bolt"; do
		out=$(timeout -k 5 60 "$KBOLT" $cmd "$file" 2>&1)
		rc=$?
		if [ "$rc" -gt 2 ] || printf '%s\n' "$out" | grep -Eq "$sanitizer_re"; then
			bad="${cmd%% *}: exit $rc$(why "$rc")
$(printf '%s\n' "$out" | grep -E "$sanitizer_re" | head -n 3)"
			break
		fi
	done
	check_eq "$name: check-profile, -f and profile-to-bolt exit 0, 1 or 2, no sanitizer report" \
		"" "$bad"
}

round_trip() {	# round_trip NAME FILE: what profile-to-bolt writes of FILE reads back
	local name=$1 file=$2
	rm -f "$tmp/rt1.bolt" "$tmp/rt2.bolt"
	"$KBOLT" profile-to-bolt -o "$tmp/rt1.bolt" "$file" >/dev/null 2>&1 || return 0
	check "$name: profile-to-bolt's output converts again, to the same file" \
		eval '"$KBOLT" profile-to-bolt -o "$tmp/rt2.bolt" "$tmp/rt1.bolt" &&
		      cmp "$tmp/rt1.bolt" "$tmp/rt2.bolt"'
}

if "$fz/make-profile-seeds" "$tmp/prof" >"$tmp/prof.log" 2>&1; then
	image=$tmp/prof/image
	nr=0
	for f in "$fz"/profile-regressions/*; do
		[ -f "$f" ] || continue
		replay_profile "profile-regressions/$(basename "$f" | cut -c1-18)" "$f"
		round_trip "profile-regressions/$(basename "$f" | cut -c1-18)" "$f"
		nr=$((nr + 1))
	done
	[ "$nr" -eq 0 ] && skip "profile-regressions" "selftests/fuzz/profile-regressions/ is empty"
	for f in "$fz"/profile-known-bugs/*; do
		[ -f "$f" ] && replay_profile "profile-known-bugs/$(basename "$f")" "$f"
	done
	for f in "$tmp"/prof/seeds/*; do
		name="profile seed $(basename "$f")"
		replay_profile "$name" "$f"
		round_trip "$name" "$f"
		case "$f" in
		*-other.*)
			out=$("$KBOLT" check-profile "$image" "$f" 2>&1)
			check_eq "$name: refused, another kernel's" 1 "$?"
			check "$name: with --force, check-profile passes" \
				"$KBOLT" check-profile -f "$image" "$f" ;;
		*)
			check "$name: check-profile passes" "$KBOLT" check-profile "$image" "$f" ;;
		esac
	done
else
	fail "make-profile-seeds builds the image and the seed profiles" \
		"$(tail -n 5 "$tmp/prof.log")"
fi

REGRESSIONS=$fz/profile-regressions KNOWN=$fz/profile-known-bugs
fuzzer fuzz_profile "$top/kmeta" "$top/common" "$top/kbolt/profile" "$fz/fuzz_profile.c" \
	"$top/selftests/fixtures/stages.S"

done_testing
