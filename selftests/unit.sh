#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The C unit tests (selftests/unit/*.c), built against libkbolt and libkmeta by make as
# $OUT/selftests/unit/NAME; each prints its own TAP and "N passed, N failed" line,
# which this script re-counts.  The tests of kbolt's stages (cfg, layout, emit,
# orc_gen, remap) assemble and link their fixtures (selftests/fixtures/stages.S,
# tables.S) when they run, with gcc and ld, through selftests/unit/fixture.h.  The model's
# tests read Debian's 6.1 and 6.12, and the lab's 6.12 when it is built.
. "$(dirname "$0")/lib.sh"
out=${OUT:-.build/default}
case "$out" in /*) ;; *) out=$top/$out ;; esac
export VMLINUX_61 VMLINUX_612 VMLINUX_LAB612
[ -s "$VMLINUX_61" ] || VMLINUX_61=
[ -s "$VMLINUX_612" ] || VMLINUX_612=
# the lab's 6.12 when a test built it (it keeps its relocations); never built here
VMLINUX_LAB612=
[ -n "${KBOLT_QUICK:-}" ] || VMLINUX_LAB612=$("$top/scripts/build-kernel" --cached 6.12 2>/dev/null)/vmlinux
[ -s "$VMLINUX_LAB612" ] || VMLINUX_LAB612=
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
