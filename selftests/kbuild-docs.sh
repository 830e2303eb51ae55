#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Kbuild series and its documentation agree (no kernel needed): every message of
# scripts/kbuild-apply and of the series' scripts/Makefile.kbolt and arch/x86/Makefile
# is in Documentation/kbuild.rst, with each shell or make expansion a placeholder; every
# make variable Makefile.kbolt reads is described there; the series files are those
# the page and the series file list; both series add the same Makefile.kbolt and the
# same Documentation/dev-tools/kbolt.rst; and kbuild.rst, packaging.rst and the tree's
# dev-tools page render without warnings.  A doctored copy proves the checker can fail.
. "$(dirname "$0")/lib.sh"

rst=$top/Documentation/kbuild.rst
cat >"$tmp/check.py" <<'EOF'
import re, sys

def norm(s):
    """A message with its expansions and the page's placeholders made alike"""
    s = s.replace('\\', '')
    s = re.sub(r'\$\((?:[^()]|\([^()]*\))*\)|\$\{[^}]*\}|\$[A-Za-z_]\w*', '@', s)
    s = re.sub(r'\b[A-Z][A-Z_.]*[A-Z]\b|\b[A-Z]\b', '@', s)
    return re.sub(r'@(\W*@)*', '@', s).strip()

def messages(paths):
    """'echo "..."' of the scripts (kbuild-apply: "$me: ..."), $(error ...) and
    'echo >&2 "kbolt: ..."' of the makefile fragments in the patches"""
    out = []
    for p in paths:
        text = open(p).read()
        for m in re.finditer(r'echo (?:>&2 )?"(\$me: [^"]*)"', text):
            out.append(m.group(1).replace('$me', 'kbuild-apply'))
        for m in re.finditer(r'^\+?\s*@?echo >&2 "(kbolt: [^"]*)"((?:\s*\\\n\+?\s*"[^"]*")*)', text, re.M):
            parts = [m.group(1)] + re.findall(r'"([^"]*)"', m.group(2))
            out.append(' '.join(p for p in parts if not p.startswith('$(if')))
        for m in re.finditer(r'\{ echo >&2 "(kbolt: [^"]*)"', text):
            out.append(m.group(1))
        for m in re.finditer(r'^\+?\$\(error (make kbolt: [^)]*\))', text, re.M):
            out.append(m.group(1))
    return out

def main(rst, mode, *paths):
    text = open(rst).read()
    literals = [norm(l) for l in re.findall(r'``([^`]+)``', text)]
    fails = 0
    if mode == 'messages':
        msgs = list(dict.fromkeys(messages(paths)))
        print('ok - %d messages found' % len(msgs) if len(msgs) >= 8 else 'not ok - only %d messages found' % len(msgs))
        fails += len(msgs) < 8
        for m in msgs:
            n = norm(m)
            hit = any(l.startswith(n) or n.startswith(l) for l in literals if len(l) > 12)
            print('%s - kbuild.rst lists the message "%s"' % ('ok' if hit else 'not ok', m))
            fails += not hit
    else:
        for v in paths:
            hit = '``%s' % v in text
            print('%s - kbuild.rst describes %s' % ('ok' if hit else 'not ok', v))
            fails += not hit
    return fails

sys.exit(1 if main(*sys.argv[1:]) else 0)
EOF
tap_py() {	# run the checker, each of its lines a test
	local line
	while IFS= read -r line; do
		case "$line" in
		ok*) ok "${line#ok - }" ;;
		not\ ok*) fail "${line#not ok - }" ;;
		esac
	done < <(/usr/bin/python3 "$tmp/check.py" "$@")
}
sources=("$top/scripts/kbuild-apply" "$top"/kbuild/*/*.patch)
tap_py "$rst" messages "${sources[@]}"
vars=$(sed -n 's/^+\([A-Z_]*\)\s*?=.*/\1/p; s/.*\$(\(KBOLT_[A-Z_]*\)).*/\1/p' \
	"$top"/kbuild/6.1/*.patch | grep -v '^KBOLT_PROFILE_ABS$' | sort -u)
check_match "Makefile.kbolt reads KBOLT_PROFILE, KBOLT_LAYOUT, KBOLT_SEED, KBOLT_FLAGS, KBOLT" \
	'^KBOLT KBOLT_FLAGS KBOLT_LAYOUT KBOLT_PROFILE KBOLT_SEED $' "$(echo $vars) "
# shellcheck disable=SC2086
tap_py "$rst" variables $vars

# the checker fails on a page that lacks a message or a variable
sed 's/applied the kbolt series for VERSION (N patches)/applied VERSION/; s/^``KBOLT_FLAGS``/KBOLT_FLAGS/' \
	"$rst" >"$tmp/bad.rst"
check "a message missing from kbuild.rst fails the check" \
	sh -c "! /usr/bin/python3 '$tmp/check.py' '$tmp/bad.rst' messages ${sources[*]} >/dev/null"
check "a variable missing from kbuild.rst fails the check" \
	sh -c "! /usr/bin/python3 '$tmp/check.py' '$tmp/bad.rst' variables KBOLT_FLAGS >/dev/null"

# the series: what the series file lists, what the page names, the same new files
for v in 6.1 6.12; do
	check_eq "kbuild/$v/series lists the patches of kbuild/$v" \
		"$(cd "$top/kbuild/$v" && ls ./*.patch | sed 's|^\./||')" "$(grep -v '^#' "$top/kbuild/$v/series")"
	check_match "... under a line naming the release it was made on" \
		"^# Linux $v\\.y, made on $v\\.[0-9]+ " "$(head -n 1 "$top/kbuild/$v/series")"
	for p in $(grep -v '^#' "$top/kbuild/$v/series"); do
		check "... kbuild.rst names $p" grep -q "^\`\`$p\`\`" "$rst"
	done
done
newfile() {	# newfile SERIES PATH: the file a patch of kbuild/SERIES creates
	cat "$top"/kbuild/"$1"/*.patch |
	awk -v f="b/$2" '$1 == "+++" { on = ($2 == f) } on && /^\+/ && !/^\+\+\+/ { print substr($0, 2) }'
}
for f in scripts/Makefile.kbolt Documentation/dev-tools/kbolt.rst; do
	check_eq "6.1 and 6.12 add the same $f" "$(newfile 6.1 "$f" | sha256sum)" \
		"$(newfile 6.12 "$f" | sha256sum)"
done

# upstream form: one change a patch, each a commit git am takes, with DEP-3's fields
# for a Debian package's copy; the hash is the commit's, never zeros
dep3() {	# dep3 PATCH: what is missing of what DEP-3 and git format-patch need
	local f=$1 head
	head=$(sed '/^$/q' "$f")
	grep -q '^From [0-9a-f]\{40\} ' <<<"$head" && ! grep -q '^From 0\{40\} ' <<<"$head" ||
		echo "no commit hash"
	for field in From Date Subject Forwarded Last-Update; do
		grep -q "^$field: ." <<<"$head" || echo "no $field"
	done
	[ "$(sed -n '/^$/,/^---$/p' "$f" | grep -c .)" -ge 4 ] || echo "no commit message"
}
for v in 6.1 6.12; do
	for p in "$top"/kbuild/$v/*.patch; do
		check_eq "$v/$(basename "$p" | cut -c1-4): git format-patch and DEP-3 headers, a message" \
			"" "$(dep3 "$p")"
	done
	for p in "$top"/kbuild/$v/*.patch; do
		kinds=$(sed -n 's|^+++ b/||p' "$p" | sed -E 's@^Documentation/.*@documentation@;
			s@.*/Kconfig.*@Kconfig@; s@.*\.lds\.h$@linker script@; s@^Makefile$@top Makefile@;
			s@^arch/[^/]*/Makefile$@arch Makefile@; s@^(scripts/|\.gitignore).*@Kbuild@' |
			sort -u | tr '\n' ',' | sed 's/,$//')
		check_match "... $(basename "$p" | cut -c1-4) makes one kind of change ($kinds)" '^[^,]+$' "$kinds"
	done
done
sed 's/^From [0-9a-f]*/From 0000000000000000000000000000000000000000/; /^Forwarded:/d' \
	"$top/kbuild/6.1/0001-kbuild-link-vmlinux.unstripped-then-make-vmlinux-fro.patch" >"$tmp/bad.patch"
check_eq "... the check fails on a zero hash and no Forwarded field" \
	"no commit hash no Forwarded" "$(dep3 "$tmp/bad.patch" | tr '\n' ' ' | sed 's/ $//')"

# rendering
if command -v rst2pseudoxml >/dev/null; then
	newfile 6.1 Documentation/dev-tools/kbolt.rst >"$tmp/dev-tools-kbolt.rst"
	for f in "$rst" "$top/Documentation/packaging.rst" "$tmp/dev-tools-kbolt.rst"; do
		rst2pseudoxml --halt=warning --report=warning "$f" >/dev/null 2>"$tmp/err"
		check_eq "docutils reads $(basename "$f") without warnings" "" "$(cat "$tmp/err")"
	done
else
	skip "docutils reads kbuild.rst, packaging.rst" "rst2pseudoxml is not installed (apt-get install python3-docutils)"
fi
done_testing
