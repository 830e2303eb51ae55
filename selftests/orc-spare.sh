#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The spare ORC slots of a kbolt-enabled tree (CONFIG_KBOLT_ORC_SPARE, Documentation/
# kbuild.rst), without a kernel: the flow fixture linked with the series' expressions
# for .orc_unwind_ip and .orc_unwind has 25% more slots, zero-filled and without
# relocations; kmeta check accepts it, and kbolt rewrites it (random layouts), gives its
# relocations to the first slots, and verifies.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
fx=$top/selftests/fixtures
# The expressions exactly as the 6.1 series writes them, with CONFIG_KBOLT_ORC_SPARE=25
patch=$(grep -l '^+#define ORC_SPARE_IP' "$top"/kbuild/6.1/*.patch)
ip=$(sed -n '/^+#define ORC_SPARE_IP/,/;$/{p; /;$/q}' "$patch" | sed '1d; s/^+//; s/\\$//' | tr -d '\n\t' |
	sed 's/CONFIG_KBOLT_ORC_SPARE/25/')
orc=$(sed -n '/^+#define ORC_SPARE\s*\\/,/;$/{p; /;$/q}' "$patch" | sed '1d; s/^+//; s/\\$//' | tr -d '\n\t')
check_match "the series' ORC_SPARE_IP expression found" '^\. \+= \(ABSOLUTE' "$ip"
check_match "the series' ORC_SPARE expression found" '^\. \+= \(ABSOLUTE' "$orc"
sed -e "s|\.orc_unwind_ip : { \*(.orc_unwind_ip) }|.orc_unwind_ip : { __start_orc_unwind_ip = .; *(.orc_unwind_ip) $ip __stop_orc_unwind_ip = .; }|" \
    -e "s|\.orc_unwind : { \*(.orc_unwind) }|.orc_unwind : { __start_orc_unwind = .; *(.orc_unwind) $orc __stop_orc_unwind = .; }|" \
	"$fx/vmlinux.lds" >"$tmp/spare.lds"
if gcc -c -o "$tmp/flow.o" "$fx/flow.S" &&
   ld -q -e _text -T "$tmp/spare.lds" --no-warn-rwx-segments -o "$tmp/flow" "$tmp/flow.o"; then
	ok "the flow fixture links with spare ORC slots"
else
	fail "the flow fixture links with spare ORC slots"
	done_testing
	exit 1
fi
size() {	# size ELF SECTION: its size in bytes
	echo $(( 16#$(readelf -SW "$1" | sed 's/^ *\[ */[/' | awk -v s="$2" '$2 == s { print $6 }') ))
}
nr_ip=$(( $(size "$tmp/flow" .orc_unwind_ip) / 4 ))
nr_orc=$(( $(size "$tmp/flow" .orc_unwind) / 6 ))
nr_rel=$(( $(size "$tmp/flow" .rela.orc_unwind_ip) / 24 ))
check_eq ".orc_unwind has as many slots as .orc_unwind_ip" "$nr_ip" "$nr_orc"
check_eq "... a quarter more than the relocations ($nr_rel)" "$(( nr_rel + nr_rel * 25 / 100 ))" "$nr_ip"
check "kmeta check accepts it" "$KMETA" check "$tmp/flow"
for seed in 1 2 3 4 5; do
	check "kbolt rewrites it, random layout seed $seed, verified" \
		"$KBOLT" optimize "$tmp/flow" --layout random --seed "$seed" -o "$tmp/out.$seed"
	check_eq "... as many ORC relocations, for the first slots" "$nr_rel" \
		"$(( $(size "$tmp/out.$seed" .rela.orc_unwind_ip) / 24 ))"
	first=$(readelf -rW "$tmp/out.$seed" | awk '/\.rela\.orc_unwind_ip/ { on = 1; next } on && /^[0-9a-f]+ / { print $1; exit }')
	check_eq "... the first at the table's first slot" \
		"$(readelf -SW "$tmp/out.$seed" | sed 's/^ *\[ */[/' | awk '$2 == ".orc_unwind_ip" { print $4 }')" "$first"
	check "... kmeta check accepts the output" "$KMETA" check "$tmp/out.$seed"
done
done_testing
