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
	"$top"/kbuild/6.1/0002-*.patch | grep -v '^KBOLT_PROFILE_ABS$' | sort -u)
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
		"$(cd "$top/kbuild/$v" && ls ./*.patch | sed 's|^\./||')" "$(cat "$top/kbuild/$v/series")"
	for p in $(cat "$top/kbuild/$v/series"); do
		check "... kbuild.rst names $p" grep -q "^\`\`$p\`\`" "$rst"
	done
done
newfile() {	# newfile PATCH PATH: the file PATCH creates
	awk -v f="b/$2" '$1 == "+++" { on = ($2 == f) } on && /^\+/ && !/^\+\+\+/ { print substr($0, 2) }' "$1"
}
for f in scripts/Makefile.kbolt Documentation/dev-tools/kbolt.rst; do
	check_eq "6.1 and 6.12 add the same $f" "$(newfile "$top"/kbuild/6.1/0002-*.patch "$f" | sha256sum)" \
		"$(newfile "$top"/kbuild/6.12/0002-*.patch "$f" | sha256sum)"
done

# rendering
if command -v rst2pseudoxml >/dev/null; then
	newfile "$top"/kbuild/6.1/0002-*.patch Documentation/dev-tools/kbolt.rst >"$tmp/dev-tools-kbolt.rst"
	for f in "$rst" "$top/Documentation/packaging.rst" "$tmp/dev-tools-kbolt.rst"; do
		rst2pseudoxml --halt=warning --report=warning "$f" >/dev/null 2>"$tmp/err"
		check_eq "docutils reads $(basename "$f") without warnings" "" "$(cat "$tmp/err")"
	done
else
	skip "docutils reads kbuild.rst, packaging.rst" "rst2pseudoxml is not installed (apt-get install python3-docutils)"
fi
done_testing
