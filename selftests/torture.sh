#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# scripts/torture: its usage errors (exit 2, one line, nothing run) and --help, which
# Documentation/lab.rst quotes; its table and exit status over a stand-in kbolt whose
# seeds fail in known ways: failures grouped by function and first "verify:" message
# whatever their offsets, a crash named by its signal, a kernel without PVH reported and
# not booted, no output left behind; then three random layouts (seeds 4 to 6: seed 6
# once failed on syscall) of Debian's 6.1 cloud kernel, not booted: all verified, with
# the functions moved and their share in the table.  The kernel part skips without the
# fetched kernel (and under KBOLT_QUICK) and in the sanitized pass, like flow.sh.
. "$(dirname "$0")/lib.sh"

KBOLT=${KBOLT:-$top/kbolt/kbolt}
case "$KBOLT" in /*) ;; *) KBOLT=$top/$KBOLT ;; esac
sanitized=0
case "${OUT:-.build/default}" in *san*) sanitized=1 ;; esac
TORTURE=$top/scripts/torture

# The stand-in: "optimize ... -o OUT --seed N" writes OUT and prints the statistics
# (rewritten: N + 2 of 8), except with FAKE_FAIL set: seeds 2 and 3 fail verify in foo
# at different offsets (2 naming OUT, as kbolt does, 3 its temporary file, as it did), 4
# is killed by SIGSEGV, 5 fails verify outside any function, 6 fails before verify.
fake=$tmp/fake-kbolt
cat >"$fake" <<'EOF'
#!/usr/bin/env bash
[ "$1" = --version ] && { echo "kbolt fake"; exit 0; }
out= seed=
while [ $# -gt 0 ]; do
	case $1 in -o) out=$2; shift ;; --seed) seed=$2; shift ;; esac
	shift
done
t=$(dirname "$out")/.kbolt-Xy12ab
case ${FAKE_FAIL:+$seed} in
2|3) [ "$seed" = 2 ] && t=$out
     echo "{\"error\":\"$t: verify: foo+0x$seed: conditional branch differs\"}"
     echo "{\"error\":\"$t: verify: bar+0x4: instruction differs from the old one\"}"
     echo "{\"error\":\"$t: verify: 9 rewritten functions, 99 instructions walked: FAILED, nothing written\"}"
     exit 1 ;;
4) kill -SEGV $$ ;;
5) echo "{\"error\":\"$out: verify: the ORC tables are missing or of different sizes\"}"
   echo "{\"error\":\"$out: verify: 9 rewritten functions, 99 instructions walked: FAILED, nothing written\"}"
   exit 1 ;;
6) echo "{\"error\":\"$out: cannot rename $t to it: Is a directory\"}"; exit 1 ;;
esac
echo x >"$out"
echo "{\"functions\":10,\"multi_block\":8,\"rewritten\":$((seed + 2))}"
EOF
chmod +x "$fake"
echo 'not an ELF file' >"$tmp/fake-vmlinux"

# usage_err DESCRIPTION REGEX ARGS...: torture ARGS exits 2 with one line matching REGEX
usage_err() {
	local d=$1 re=$2 out rc=0
	shift 2
	out=$("$TORTURE" "$@" 2>&1) || rc=$?
	if [ $rc = 2 ] && [ "$(printf '%s\n' "$out" | wc -l)" = 1 ] &&
	   printf '%s\n' "$out" | grep -Eq -- "$re"; then
		ok "$d"
	else
		fail "$d" "exit $rc, expected 2 and one line matching /$re/:" "$out"
	fi
}
f=$tmp/fake-vmlinux
usage_err "usage: no kernel" '^torture: name a kernel: ' --seeds 3
usage_err "usage: an unknown option" "^torture: unknown option '--frob' \(see --help\)$" "$f" --frob
usage_err "usage: an option without its argument" '^torture: --seeds needs an argument' "$f" --seeds
usage_err "usage: --seeds 0" '^torture: --seeds takes a count' "$f" --seeds 0
usage_err "usage: --first-seed not a number" '^torture: --first-seed takes a number' \
	"$f" --first-seed x
usage_err "usage: --boot not a count" '^torture: --boot takes a count' "$f" --boot -1
usage_err "usage: more boots than seeds" '^torture: --boot 4: more boots than --seeds 3' \
	"$f" --seeds 3 --boot 4
usage_err "usage: a kernel that is neither a file nor a name" \
	'^torture: 6\.3: neither a readable file nor a kernel name \(6\.1 6\.12 ' 6.3 --kbolt "$fake"
usage_err "usage: --kbolt not an executable" '^torture: --kbolt /nonexistent: not an executable' \
	"$f" --kbolt /nonexistent
out=$(KBOLT_CACHE=$tmp/empty "$TORTURE" lab-6.1 --kbolt "$fake" 2>&1); rc=$?
check_eq "a lab kernel not built: exit 1" 1 "$rc"
check_match "... saying how to build it" '^torture: lab-6\.1: not built: run scripts/build-kernel 6\.1$' "$out"
out=$(KBOLT_CACHE=$tmp/empty "$TORTURE" 6.12 --kbolt "$fake" 2>&1); rc=$?
check_eq "a test kernel not fetched: exit 1" 1 "$rc"
check_match "... saying how to fetch it" 'vmlinux: missing, run scripts/fetch-kernels$' "$out"

help=$("$TORTURE" --help 2>&1); rc=$?
check_eq "--help: exit 0" 0 "$rc"
usage_line=$(printf '%s\n' "$help" | sed -n 's/^  \(scripts\/torture .*\)/\1/p')
check_match "... prints the usage line" '^scripts/torture KERNEL\.\.\. \[--seeds N\]' "$usage_line"
lab=$top/Documentation/lab.rst
check "... which Documentation/lab.rst quotes" grep -qF -- "    $usage_line" "$lab"
for o in $(printf '%s\n' "$usage_line" | grep -o -- '--[a-z-]*' | sort -u); do
	check "... lab.rst describes $o" grep -q -- "^\*\*$o\*\*" "$lab"
done

# --- the table over the stand-in ---
mkdir -p "$tmp/t"
out=$(TMPDIR=$tmp/t FAKE_FAIL=1 "$TORTURE" "$f" --seeds 7 --boot 1 --kbolt "$fake" \
	2>"$tmp/fake.err"); rc=$?
check_eq "stand-in kbolt, 5 of 7 seeds failing: exit 1" 1 "$rc"
row=$(printf '%s\n' "$out" | grep -F -- "$f ")
check_match "... the row: 2/7 passed, median 3 moved (37.5%), no PVH entry" \
	'^\S+ +2/7 +3 \(37\.5% of multi-block\) +[0-9.]+ s +no PVH entry$' "$row"
check_match "... seeds 2 and 3 grouped under the first message of the first" \
	"^  $f: verify: foo\\+0x2: conditional branch differs \\(seeds 2, 3\\)$" "$out"
check_match "... the crash named by its signal" "^  $f: killed by signal 11.* \\(seed 4\\)$" "$out"
check_match "... a failure outside any function" \
	"^  $f: verify: the ORC tables are missing or of different sizes \\(seed 5\\)$" "$out"
check_match "... a failure before verify, without the output's name" \
	"^  $f: cannot rename .*/\\.kbolt-Xy12ab to it: Is a directory \\(seed 6\\)$" "$out"
check_eq "... four failure lines under one heading" "1 4" \
	"$(printf '%s\n' "$out" | grep -c '^failures (first verify: message') $(printf '%s\n' "$out" | grep -c "^  $f: ")"
check_match "... progress on stderr names the seed to reproduce" \
	"reproduce: .*optimize $f -o OUT --layout random --seed 3 --strip-debug$" "$(cat "$tmp/fake.err")"
check_match "... and the kernel not booted" 'no PVH entry: its outputs cannot boot' "$(cat "$tmp/fake.err")"
check_eq "... nothing left in TMPDIR" "" "$(ls -A "$tmp/t")"
out=$(TMPDIR=$tmp/t "$TORTURE" "$f" --seeds 3 --first-seed 10 --boot 0 --kbolt "$fake" \
	2>/dev/null); rc=$?
check_eq "stand-in kbolt, seeds 10 to 12 passing, no boot: exit 0" 0 "$rc"
check_match "... 3/3, median 13 moved (162.5%: the stand-in's figures), boots not asked" \
	'^\S+ +3/3 +13 \(162\.5% of multi-block\) +[0-9.]+ s +-$' "$out"
check_match "... the seeds in the heading" '^kbolt torture: kbolt fake.*; seeds 10-12, ' "$out"
check_match "... failures: none" '^failures: none$' "$out"

# --- Debian's 6.1 cloud kernel, seeds 4 to 6 ---
if [ $sanitized = 1 ] || [ ! -s "$VMLINUX_61" ]; then
	why=$no_kernels
	[ $sanitized = 0 ] || why="the sanitized pass (optimize.sh runs the sanitized kbolt on 6.1)"
	skip "6.1, seeds 4 to 6 through scripts/torture" "$why"
	done_testing
	exit 0
fi
out=$(TMPDIR=$tmp/t "$TORTURE" 6.1 --seeds 3 --first-seed 4 --boot 0 --kbolt "$KBOLT" \
	2>"$tmp/61.err"); rc=$?
check_eq "6.1, seeds 4 to 6 through scripts/torture: exit 0" 0 "$rc"
[ $rc = 0 ] || fail "... its progress" "$(tail -n 10 "$tmp/61.err")"
row=$(printf '%s\n' "$out" | grep '^6\.1 ')
check_match "... all 3 verified, functions moved in 65% or more of multi-block ones" \
	'^6\.1 +3/3 +[1-9][0-9]{3,} \((6[5-9]|[7-9][0-9]|100)\.[0-9]% of multi-block\) +[0-9.]+ s +-$' "$row"
check_match "... the kernel named by its file" "^  6\\.1: $VMLINUX_61\$" "$out"
check_match "... failures: none" '^failures: none$' "$out"
check_eq "... a progress line per seed" 3 "$(grep -c '^torture: 6\.1 seed [4-6]: verified, ' "$tmp/61.err")"
check_eq "... no output left behind" "" "$(ls -A "$tmp/t")"
done_testing
