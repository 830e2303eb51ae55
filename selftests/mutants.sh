#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Mutation test of kbolt verify: it accepts what kbolt optimize writes and refuses the
# same output made wrong in one way.  Miniature kernels with random control flow
# (fixtures/mutants.py gen: jcc and jmp of both widths, jump tables in .rodata,
# alternatives, exception fixups, jump labels, return sites, lock prefixes, a BUG, WARNs
# and other instructions that resume, noreturn calls, ORC state changes), a fixed set of
# seeds, linked like fixtures/flow.S; each laid out at random by kbolt optimize with a
# fixed set of seeds, each output verified by kbolt verify and checked by kmeta check;
# then mutants of each output (fixtures/mutants.py mutate: a branch re-targeted or
# inverted, a block dropped, two blocks swapped, the fall-through after a resuming
# instruction broken, a jump-label site changed, a stale entry of each table, of a jump
# table in .rodata and of an alternative's jmp, an ORC entry shifted, a relocation at
# its old place or with its old addend), each of which kbolt verify must refuse with
# exit 1.  Prints the mutants made and refused per class; every class must have some,
# all refused.  An accepted mutant is a verifier bug: its mutation is printed, and with
# KEEP_TMP=1 the mutant stays in the test's directory (MUTANT_FIXTURES and MUTANT_LAYOUTS
# choose the seeds).
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
fx=$top/selftests/fixtures
FIXTURES=${MUTANT_FIXTURES:-"1 2 3 4 5"}
LAYOUTS=${MUTANT_LAYOUTS:-"1 2 3 4"}
case "${OUT:-.build/default}" in *san*) FIXTURES=${MUTANT_FIXTURES:-"1 2"} ;; esac
CLASSES="retarget jcc-invert drop swap resume jl-site ex_table jump_table bug_table
	 alternatives return_sites smp_locks switch-table alt-branch orc reloc reloc-addend"

declare -A made caught
for c in $CLASSES; do made[$c]=0 caught[$c]=0; done
accepted=()	# "fixture G layout L: FILE CLASS DESCRIPTION (exit N)"
outputs=0

for g in $FIXTURES; do
	fix=$tmp/fix$g
	if ! /usr/bin/python3 "$fx/mutants.py" gen "$g" >"$fix.S" ||
	   ! gcc -c -I "$fx" -o "$fix.o" "$fix.S" 2>"$fix.err" ||
	   ! ld -q -e _text -T "$fx/vmlinux.lds" --no-warn-rwx-segments -o "$fix" "$fix.o" \
		2>>"$fix.err"; then
		fail "fixture $g: generated, assembled and linked" "$(tail -n 5 "$fix.err")"
		continue
	fi
	check "fixture $g: kmeta check passes" "$KMETA" check "$fix"
	for l in $LAYOUTS; do
		out=$tmp/out$g.$l
		if ! "$KBOLT" optimize "$fix" -o "$out" --layout random --seed "$l" \
			>"$out.log" 2>&1; then
			fail "fixture $g, layout $l: optimize writes it, verified" \
				"$(tail -n 5 "$out.log")"
			continue
		fi
		outputs=$((outputs + 1))
		bad=
		"$KBOLT" verify "$fix" "$out" >"$out.verify" 2>&1 || bad="kbolt verify: $(tail -n 3 "$out.verify")"
		"$KMETA" check "$out" >"$out.check" 2>&1 || bad+="kmeta check: $(tail -n 3 "$out.check")"
		check_eq "fixture $g, layout $l: kbolt verify accepts the output, kmeta check passes" \
			"" "$bad"
		m=$tmp/m$g.$l
		mkdir -p "$m"
		if ! /usr/bin/python3 "$fx/mutants.py" mutate "$fix" "$out" "$m" \
			$((g * 100 + l)) 2>"$m.err"; then
			fail "fixture $g, layout $l: mutants made" "$(tail -n 5 "$m.err")"
			continue
		fi
		while read -r file class what; do
			made[$class]=$((made[$class] + 1))
			"$KBOLT" verify "$fix" "$m/$file" >"$m/$file.out" 2>&1
			rc=$?
			if [ "$rc" = 1 ]; then
				caught[$class]=$((caught[$class] + 1))
				rm -f "$m/$file"	# 20 KB each; an accepted one stays
			else
				accepted+=("fixture $g layout $l: $file: $what (exit $rc)")
			fi
		done <"$m/list"
	done
done

echo "# $outputs outputs; mutants per class:"
printf '# %-14s %9s %7s\n' class generated caught
for c in $CLASSES; do
	printf '# %-14s %9d %7d\n' "$c" "${made[$c]}" "${caught[$c]}"
done
for c in $CLASSES; do
	if [ "${made[$c]}" -eq 0 ]; then
		fail "$c: mutants made" "no output had a place for one"
	elif [ "${caught[$c]}" -eq "${made[$c]}" ]; then
		ok "$c: all ${made[$c]} mutants refused by kbolt verify (exit 1)"
	else
		fail "$c: all ${made[$c]} mutants refused by kbolt verify (exit 1)" \
			"$((made[$c] - caught[$c])) accepted, a verifier bug:" \
			"$(printf '%s\n' "${accepted[@]}" | grep -F ": $c." | head -n 5)"
	fi
done
check_eq "no mutant is accepted" 0 "${#accepted[@]}"
done_testing
