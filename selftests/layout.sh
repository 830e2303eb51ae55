#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The profile layouts on Debian's 6.1 with the proc profile scripts/bench-optimize
# caches (recorded first if missing): ext-TSP (--layout profile) raises its objective,
# takes fewer branches and executes fewer jmps than the old layout, and beats the
# greedy layout (--layout greedy) on all three; both outputs verify (optimize verifies
# before it writes); the same inputs give the same output.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac

V=$VMLINUX_61
need_proc_profile_61 "layout tests"

# dyno FILE KIND KEY: a dyno_stats figure of the JSON stats on FILE's last line
dyno() { json_get "$1" "r['dyno_stats']['$2']['$3']"; }

for layout in greedy profile; do
	if "$KBOLT" optimize "$V" --profile "$prof" --layout $layout --strip-debug \
		-o "$tmp/$layout" --stats -j >"$tmp/$layout.stats" 2>"$tmp/$layout.err"; then
		ok "6.1: --layout $layout written and verified"
	else
		fail "6.1: --layout $layout written and verified" "$(tail -n 5 "$tmp/$layout.err")"
	fi
done

gb=$(dyno "$tmp/greedy.stats" before ext_tsp_score)
ga=$(dyno "$tmp/greedy.stats" after ext_tsp_score)
pa=$(dyno "$tmp/profile.stats" after ext_tsp_score)
check "ext-TSP raises its score ($gb before, $pa after)" [ "${pa:-0}" -gt "${gb:-0}" ]
check "ext-TSP scores above greedy ($ga)" [ "${pa:-0}" -gt "${ga:-0}" ]
for key in taken unconditional_jmps; do
	b=$(dyno "$tmp/profile.stats" before $key)
	a=$(dyno "$tmp/profile.stats" after $key)
	g=$(dyno "$tmp/greedy.stats" after $key)
	check "ext-TSP: fewer $key ($b before, $a after)" [ "${a:-1}" -lt "${b:-0}" ]
	check "ext-TSP: fewer $key than greedy ($g)" [ "${a:-1}" -lt "${g:-0}" ]
done

"$KBOLT" optimize "$V" --profile "$prof" --strip-debug -o "$tmp/again" 2>"$tmp/again.err"
check "ext-TSP: the same inputs give the same output" cmp "$tmp/profile" "$tmp/again"
done_testing
