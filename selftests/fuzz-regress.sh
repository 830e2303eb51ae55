#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Replay what the fuzzer found (selftests/fuzz/regressions/: inputs that once crashed,
# leaked or hung libkmeta, kept by selftests/fuzz/run) and the seed images it starts from
# (selftests/fuzz/make-seeds) through kmeta summary and kmeta check.  Either may fail on
# such input, with exit 1 (or 2), but never die of a signal (exit >= 128) or draw a
# sanitizer report: run it with KMETA=.build/san/kmeta/kmeta to make that mean most.
# The seeds are well formed: they must pass both commands.
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

nr=0
for f in "$top"/selftests/fuzz/regressions/*; do
	[ -f "$f" ] || continue
	replay "regressions/$(basename "$f" | cut -c1-18)" "$f"
	nr=$((nr + 1))
done
[ "$nr" -eq 0 ] && skip "regressions" "selftests/fuzz/regressions/ is empty"

# The fuzz target itself, as make fuzz last built it: it walks every table even after
# one fails, where the commands stop at the first error
fuzzer=$top/selftests/fuzz/corpus-work/fuzz_image
if [ "$nr" -eq 0 ]; then
	:
elif [ ! -x "$fuzzer" ]; then
	skip "fuzz_image replays the regressions" "not built: make fuzz builds it"
elif [ -n "$(find "$top/kmeta" -name '*.[ch]' -newer "$fuzzer" | head -n 1)" ]; then
	skip "fuzz_image replays the regressions" \
		"older than the kmeta sources: make fuzz rebuilds it"
else
	out=$("$fuzzer" -close_fd_mask=2 -timeout=60 "$top"/selftests/fuzz/regressions/* 2>&1)
	rc=$?
	check_eq "fuzz_image replays the regressions" 0 "$rc"
	[ "$rc" -eq 0 ] ||
		printf '%s\n' "$out" | grep -E "$sanitizer_re|^fuzz_image:" | head -n 5 | sed 's/^/# /'
fi

if "$top/selftests/fuzz/make-seeds" "$tmp/seeds" >"$tmp/seeds.log" 2>&1; then
	for f in "$tmp"/seeds/*; do
		replay "seed $(basename "$f")" "$f"
		check "seed $(basename "$f"): check passes" "$KMETA" check "$f"
	done
else
	fail "make-seeds builds the seed images" "$(tail -n 5 "$tmp/seeds.log")"
fi

done_testing
