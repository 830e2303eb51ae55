#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The C unit tests (selftests/unit/*.c), built against libkbolt and libkmeta by make as
# $OUT/selftests/unit/NAME; each prints its own TAP and "N passed, N failed" line,
# which this script re-counts.  The tests of kbolt's stages (cfg, layout, emit,
# orc_gen, remap) assemble and link their fixtures (selftests/fixtures/stages.S,
# tables.S) when they run, with gcc and ld, through selftests/unit/fixture.h.
. "$(dirname "$0")/lib.sh"
out=${OUT:-.build/default}
case "$out" in /*) ;; *) out=$top/$out ;; esac
export VMLINUX_61 VMLINUX_612
[ -s "$VMLINUX_61" ] || VMLINUX_61=
[ -s "$VMLINUX_612" ] || VMLINUX_612=
for src in "$top"/selftests/unit/*.c; do
	bin=$out/selftests/unit/$(basename "$src" .c)
	if [ ! -x "$bin" ]; then
		fail "$(basename "$src" .c): built" "missing $bin: run make check"
		continue
	fi
	while IFS= read -r line; do
		case "$line" in
		"ok "*"# SKIP"*) skip "${line#ok * - }" "unit" ;;
		"ok "*) ok "${line#ok * - }" ;;
		"not ok "*) fail "${line#not ok * - }" ;;
		"# "*) echo "$line" ;;
		esac
	done < <("$bin" 2>&1)
done
done_testing
