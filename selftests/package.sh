#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kbolt's own Debian package: dpkg-buildpackage -b builds it from a copy of the tree
# (debian/, through make install); lintian reports no error; extracted into a scratch
# root with dpkg -x (not installed), its kbolt and kmeta run, its man pages and QEMU
# plugins and the Kbuild series are there, its kbuild-apply runs, and the packaged kbolt
# optimizes the flow fixture.  kbolt.spec
# likewise, with rpmbuild -bb: the same files, and a kbolt that runs.
. "$(dirname "$0")/lib.sh"

# The build dependencies, without a build: every library the Makefile asks pkg-config
# for (PKGS) is in debian/control's Build-Depends (as the Debian package the Makefile's
# own message names, deb_X) and in kbolt.spec's BuildRequires (as pkgconfig(X)), and
# so are the tools the build runs.  selftests/cleanroom.sh proves the Debian list by a
# build with nothing else; this check covers the RPM, which no room here can build.
pkgs=$(sed -n 's/^PKGS := //p' "$top/Makefile")
check_match "the Makefile's pkg-config modules found" '^libelf libdw ' "$pkgs"
build_depends() {	# build_depends CONTROL: its Build-Depends, a package a line
	sed -n '/^Build-Depends:/,/^[A-Z]/p' "$1" | sed '$d' | sed 's/^Build-Depends://' |
		tr ',' '\n' | sed 's/(.*)//; s/^ *//; s/ *$//' | grep .
}
deb_missing() {	# deb_missing CONTROL: what the build needs that CONTROL does not list
	local p deb have
	have=$(build_depends "$1")
	for p in $pkgs; do
		deb=$(sed -n "s/^deb_$p := //p" "$top/Makefile")
		grep -qx "$deb" <<<"$have" || echo "$deb"
	done
	for p in pkg-config clang llvm bpftool python3-docutils; do
		grep -qx "$p" <<<"$have" || echo "$p"
	done
}
rpm_missing() {	# rpm_missing SPEC: likewise, of BuildRequires, libraries as pkgconfig(X)
	local p have
	have=$(rpmspec -q --buildrequires "$1" 2>&1)
	for p in $pkgs; do
		grep -qxF "pkgconfig($p)" <<<"$have" || echo "pkgconfig($p)"
	done
	for p in pkgconf-pkg-config clang llvm bpftool python3-docutils kernel-headers; do
		grep -qx "$p" <<<"$have" || echo "$p"
	done
}
check_eq "debian/control's Build-Depends name every library and tool the build needs" "" \
	"$(deb_missing "$top/debian/control" | tr '\n' ' ')"
check_eq "kbolt.spec's BuildRequires name every library and tool the build needs" "" \
	"$(rpm_missing "$top/kbolt.spec" | tr '\n' ' ')"
sed '/^ *libdw-dev,$/d' "$top/debian/control" >"$tmp/control"
check_eq "... the check finds libdw-dev missing from the control file of before" "libdw-dev " \
	"$(deb_missing "$tmp/control" | tr '\n' ' ')"
sed 's/pkgconfig(libdw), //' "$top/kbolt.spec" >"$tmp/kbolt.spec"
check_eq "... and pkgconfig(libdw) from a spec without it" "pkgconfig(libdw) " \
	"$(rpm_missing "$tmp/kbolt.spec" | tr '\n' ' ')"

sanitized=0
case "${OUT:-.build/default}" in *san*) sanitized=1 ;; esac
if [ $sanitized = 1 ] || [ -n "${KBOLT_QUICK:-}" ]; then
	skip "the Debian package" "a build of its own, for the normal pass of make check"
	done_testing
	exit 0
fi
for t in dpkg-buildpackage dh lintian; do
	if ! command -v $t >/dev/null; then
		fail "the Debian package: $t found" "scripts/install-deps installs it"
		done_testing
		exit 1
	fi
done

src=$tmp/src/kbolt-0.1
mkdir -p "$src"
(cd "$top" && git ls-files -z -c -o --exclude-standard | xargs -0 cp --parents -t "$src")
if (cd "$src" && dpkg-buildpackage -b -us -uc) >"$tmp/build.log" 2>&1; then
	ok "dpkg-buildpackage -b -us -uc builds it"
else
	fail "dpkg-buildpackage -b -us -uc builds it" "$(tail -n 15 "$tmp/build.log")"
	done_testing
	exit 1
fi
deb=$(ls "$tmp"/src/kbolt_*_amd64.deb)
check "... one binary package, kbolt_0.1_amd64.deb" test "$(basename "$deb")" = kbolt_0.1_amd64.deb
lint=$(lintian --tag-display-limit 0 "$deb" 2>&1 | grep -v "running with root privileges")
check_eq "lintian: no error" "" "$(grep '^E: ' <<< "$lint")"
[ -z "$lint" ] || printf '%s\n' "$lint" | sed 's/^/# lintian: /'

root=$tmp/root
dpkg -x "$deb" "$root"
check_match "the packaged kbolt runs: --version" '^kbolt 0\.1$' "$("$root/usr/bin/kbolt" --version 2>&1)"
check_match "the packaged kmeta runs: --help" '^Usage: kmeta' "$("$root/usr/bin/kmeta" --help 2>&1)"
for f in usr/share/man/man1/kbolt.1.gz usr/share/man/man1/kmeta.1.gz \
	 usr/lib/kbolt/kbolt-qemu-plugin.so usr/lib/kbolt/kbolt-eval-plugin.so; do
	check "... it holds /$f" test -s "$root/$f"
done
check_match "... the plugin exports QEMU's entry point" 'qemu_plugin_install' \
	"$(nm -D "$root/usr/lib/kbolt/kbolt-qemu-plugin.so" 2>&1)"
# every series of the tree: kbuild/VERSION/
versions=$(cd "$top/kbuild" && ls -d -- */ | tr -d / | sort -V)
for v in $versions; do
	check_eq "... it holds the Kbuild series for $v" "$(cat "$top/kbuild/$v/series")" \
		"$(cat "$root/usr/share/kbolt/kbuild/$v/series" 2>&1)"
	check "... and each of its patches" sh -c "cd '$top/kbuild/$v' && for p in \$(grep -v '^#' series); do
		cmp -s \$p '$root/usr/share/kbolt/kbuild/$v/'\$p || exit 1; done"
done
mkdir -p "$tmp/tree" && printf 'VERSION = 6\nPATCHLEVEL = 9\nSUBLEVEL = 0\n' >"$tmp/tree/Makefile"
check_match "... its kbuild-apply finds the series beside it" \
	"no kbolt series for 6\\.9\\.0 \\(there are: $(re_quote "$(printf '%s' "$versions" | tr '\n' ' ')")\\)" \
	"$("$root/usr/share/kbolt/kbuild-apply" "$tmp/tree" 2>&1)"
fx=$top/selftests/fixtures
if gcc -c -o "$tmp/flow.o" "$fx/flow.S" &&
   ld -q -e _text -T "$fx/vmlinux.lds" --no-warn-rwx-segments -o "$tmp/flow" "$tmp/flow.o"; then
	check "the packaged kbolt optimizes the flow fixture, verified" \
		"$root/usr/bin/kbolt" optimize "$tmp/flow" -o "$tmp/flow.out" --layout random --seed 1
else
	fail "assemble the flow fixture"
fi

# The RPM: kbolt.spec, from the tree as its source tarball
if ! command -v rpmbuild >/dev/null; then
	fail "the RPM: rpmbuild found" "scripts/install-deps installs Debian's rpm"
	done_testing
	exit 1
fi
rpmtop=$tmp/rpm
mkdir -p "$rpmtop/SOURCES"
tar -C "$tmp/src" -czf "$rpmtop/SOURCES/kbolt-0.1.tar.gz" --exclude=debian/kbolt \
	--exclude=.build kbolt-0.1
# --nodeps: Debian's rpm database knows none of the build dependencies (Debian's own)
if rpmbuild -bb --nodeps --define "_topdir $rpmtop" "$top/kbolt.spec" >"$tmp/rpm.log" 2>&1; then
	ok "rpmbuild -bb kbolt.spec builds it"
else
	fail "rpmbuild -bb kbolt.spec builds it" "$(tail -n 15 "$tmp/rpm.log")"
fi
rpm=$(ls "$rpmtop"/RPMS/x86_64/kbolt-0.1-1.x86_64.rpm 2>/dev/null)
shipped='^usr/(bin|lib/kbolt|share/man/man1|share/kbolt(/kbuild/[^/]+)?)/[^/]+$'	# not the packaging's
check "... kbolt-0.1-1.x86_64.rpm" test -s "$rpm"
mkdir -p "$tmp/rpmroot"
(cd "$tmp/rpmroot" && rpm2cpio "$rpm" | cpio -idm --quiet)
# The files each package unpacks, not rpm's list, which names owned directories too
check_eq "... it holds what the Debian package holds" \
	"$(cd "$root" && find usr -type f | sed 's/\.gz$//' | grep -E "$shipped" | sort)" \
	"$(cd "$tmp/rpmroot" && find usr -type f | sed 's/\.gz$//' | grep -E "$shipped" | sort)"
check_match "the RPM's kbolt runs: --version" '^kbolt 0\.1$' \
	"$("$tmp/rpmroot/usr/bin/kbolt" --version 2>&1)"
done_testing
