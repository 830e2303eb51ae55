#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kbolt fix-sites on Debian's 6.1: a kbolt output (random layout, seed 1) given back the
# input's .return_sites and .retpoline_sites, which then point at the old offsets of the
# moved code, as llvm-bolt-19 leaves them.  fix-sites must make kmeta check pass again
# and name the same sites as kbolt's own tables; where a function has fewer qualifying
# instructions than entries, it must name the function and write nothing.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
KMETA=${KMETA:-$top/kmeta/kmeta}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
case "$KMETA" in /*) ;; *) KMETA=$top/$KMETA ;; esac

out=$("$KBOLT" fix-sites /dev/null 2>&1); rc=$?
check_eq "fix-sites without -o is a usage error" 2 "$rc"
check_match "... saying what is missing" 'fix-sites.*-o' "$out"

need_kernels
if [ "$have_kernels" = 0 ]; then
	done_testing
	exit
fi

# copy_lists SRC DST: DST with SRC's bytes of both site lists (found by their symbols)
copy_lists() {
	/usr/bin/python3 - "$@" <<'EOF'
import sys
from elftools.elf.elffile import ELFFile

def spans(path):
    with open(path, 'rb') as f:
        e = ELFFile(f)
        syms = {s.name: s['st_value'] for s in e.get_section_by_name('.symtab').iter_symbols()}
        for lo, hi in (('__return_sites', '__return_sites_end'),
                       ('__retpoline_sites', '__retpoline_sites_end')):
            a, b = syms[lo], syms[hi]
            sec = next(s for s in e.iter_sections() if s['sh_type'] != 'SHT_NOBITS' and
                       s['sh_addr'] <= a < s['sh_addr'] + s['sh_size'])
            yield sec['sh_offset'] + a - sec['sh_addr'], b - a

src, dst = sys.argv[1:]
with open(src, 'rb') as s, open(dst, 'r+b') as d:
    for (so, n), (do, m) in zip(spans(src), spans(dst)):
        assert n == m
        s.seek(so)
        d.seek(do)
        d.write(s.read(n))
EOF
}

"$KBOLT" optimize "$VMLINUX_61" --layout random --seed 1 --strip-debug -o "$tmp/r" >/dev/null 2>&1
check_eq "6.1, random layout seed 1: written" 0 $?
cp "$tmp/r" "$tmp/stale"
copy_lists "$VMLINUX_61" "$tmp/stale"
"$KMETA" check -v "$tmp/stale" > "$tmp/stale.check" 2>&1
n=$(grep -c ': return_sites: ' "$tmp/stale.check")
check_match "with the input's site lists, kmeta check finds stale return sites: $n" \
	'^[1-9][0-9]{2,}$' "$n"

out=$("$KBOLT" fix-sites "$tmp/stale" -o "$tmp/fixed" 2>&1); rc=$?
check_eq "fix-sites: exit 0" 0 "$rc"
check_match "... counting the return sites fixed" \
	'info: kbolt: return_sites: [1-9][0-9]* entries in [1-9][0-9]* functions pointed again' "$out"
check_match "... and the retpoline sites" \
	'info: kbolt: retpoline_sites: [1-9][0-9]* entries in [1-9][0-9]* functions' "$out"
check "... its output passes kmeta check" "$KMETA" check "$tmp/fixed"
for t in return_sites retpoline_sites; do
	check "... its $t name the sites kbolt's own output names" \
		cmp -s <("$KMETA" dump "$t" "$tmp/fixed" | sort) <("$KMETA" dump "$t" "$tmp/r" | sort)
done
check "... and nothing else differs from kbolt's output but the build-id and the note" \
	cmp -s <("$KMETA" diff "$tmp/r" "$tmp/fixed" 2>&1 | grep -v 'return_sites\|retpoline_sites') \
	<(true)

# A function whose entries outnumber its qualifying jmps: reported, nothing written
site=$(diff <("$KMETA" dump -j return_sites "$tmp/stale" | grep -o '"site_addr":"0x[0-9a-f]*"') \
	<("$KMETA" dump -j return_sites "$tmp/r" | grep -o '"site_addr":"0x[0-9a-f]*"') |
	sed -n 's/^> .*"\(0x[0-9a-f]*\)"/\1/p' | head -n 1)
func=$("$KMETA" dump return_sites "$tmp/r" --addr "$site" | sed 's/+0x.*//')
bump_byte "$tmp/stale" $((site + 1))	# its rel32: off the thunk
out=$("$KBOLT" fix-sites "$tmp/stale" -o "$tmp/fixed2" 2>&1); rc=$?
check_eq "a moved return jmp that no longer reaches the thunk: exit 1" 1 "$rc"
check_match "... naming its function, $func" \
	"error: kbolt: return_sites: $func: [0-9]+ entries, but [0-9]+ instructions qualify" "$out"
check "... and writing nothing" test ! -e "$tmp/fixed2"
check "... nor a temporary file" bash -c "! ls -A '$tmp' | grep -q '^\.kbolt-'"
done_testing
