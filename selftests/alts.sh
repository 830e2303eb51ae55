#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Nested alternatives (6.10+: several consecutive entries at one site, the longest
# instrlen patched) and a .call_sites entry inside .altinstr_replacement (7.x's
# call-depth tracking), on the alternatives fixture (fixtures/alts.S): kmeta check is
# clean, and says so when one entry is apart from the others of its site; over random
# layouts every output verifies and passes kmeta check, alt_nested moves, both of its
# entries name one new site whose 10 bytes (the old instruction and the outer
# replacement's padding) are the old ones, and the replacement's call-site entry and
# call stay where they were.  On Debian's 6.1, 6.12 and 7.3 (when fetched): the sites
# with several entries, their entries consecutive.  (Sites and bytes read by objdump and
# kmeta dump, not by kbolt.)
. "$(dirname "$0")/lib.sh"

SEEDS=8
case "${OUT:-.build/default}" in *san*) SEEDS=4 ;; esac

need_fixture alts
fx=$tmp/alts
out=$("$KMETA" check "$fx" 2>&1)
check_eq "kmeta check: the fixture is clean" "$fx: info: kmeta: 0 violations" "$out"
if fixture_variant alts "$tmp/apart" -DAPART; then
	out=$("$KMETA" check "$tmp/apart" 2>&1)
	check_match "... with an entry apart from its site's others, it names it" \
		"alt_nested\\+0x10: entry 2 is apart from the earlier entries of its site" "$out"
else
	fail "the APART fixture assembled and linked"
fi

# sites FILE: the sites of the alternatives and call-site entries, as kmeta dumps them
sites() {
	"$KMETA" dump alternatives "$1" | cut -d' ' -f1
	"$KMETA" dump call_sites "$1"
}
# site_bytes FILE ADDR: the 10 bytes at ADDR
site_bytes() {
	objdump -s -j .text --start-address=$((0x$2)) --stop-address=$((0x$2 + 10)) "$1" |
		awk 'NR > 4 { print $2 $3 $4 }' | cut -c1-20
}
old_site=$(nm "$fx" | awk '$3 == "alt_nested" { print $1 }')
old_site=$(printf '%x' $((0x$old_site + 0x10)))
old_bytes=$(site_bytes "$fx" "$old_site")
check_eq "the site's 10 bytes: the old nop5 and the padding" 0f1f4400009090909090 "$old_bytes"

moved=0 same_site=0 same_bytes=0 calls=0
random_layouts "$fx"
for s in $written; do
	o=$tmp/r.$s
	mapfile -t st < <(sites "$o")
	[ "${st[0]}" != alt_nested+0x10 ] && moved=$((moved + 1))
	[ "${st[0]}" = "${st[1]}" ] && same_site=$((same_site + 1))
	addr=$("$KMETA" dump -j alternatives "$o" | json_get /dev/stdin \
		'r["entries"][0]["site_addr"][2:]')
	[ "$(site_bytes "$o" "$addr")" = "$old_bytes" ] && same_bytes=$((same_bytes + 1))
	[ "${st[3]}" = .altinstr_replacement+0x5 ] &&
		objdump -d -j .altinstr_replacement "$o" | grep -q 'call.*<alt_callee>' &&
		calls=$((calls + 1))
done
check "... alt_nested's site moved in some ($moved of $SEEDS)" [ "$moved" -gt 0 ]
check_eq "... both of its entries name one site in each" "$SEEDS" "$same_site"
check_eq "... whose 10 bytes are the old ones" "$SEEDS" "$same_bytes"
check_eq "... the call-site entry in .altinstr_replacement and its call to alt_callee kept" \
	"$SEEDS" "$calls"

for name in 6.1 6.12 7.3; do
	v=$(kernel_var "$name")_RELEASE
	f=$KBOLT_CACHE/${!v}/vmlinux
	if [ -n "${KBOLT_QUICK:-}" ] || [ ! -s "$f" ]; then
		skip "$name: sites with several alternatives" "not fetched: run scripts/fetch-kernels $name"
		continue
	fi
	read -r multi apart < <("$KMETA" dump -j alternatives "$f" | python3 -c '
import json, sys
last, multi, apart = {}, set(), 0
for i, e in enumerate(json.load(sys.stdin)["entries"]):
    s = e["site_addr"]
    if s in last:
        multi.add(s)
        apart += last[s] != i - 1
    last[s] = i
print(len(multi), apart)')
	check "$name: $multi sites with several entries, each run consecutive ($apart apart)" \
		[ "$multi" -gt 100 ] && [ "$apart" = 0 ]
done
done_testing
