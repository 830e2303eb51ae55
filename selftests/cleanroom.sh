#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kbolt's Debian package built in a clean room (Documentation/packaging.rst): a minimal
# Debian 12 chroot made by mmdebstrap (--variant=buildd: the essential packages, apt and
# build-essential) with debian/control's Build-Depends installed by apt-get build-dep,
# and nothing else.  There dpkg-buildpackage -b builds the package, lintian (the
# host's) finds no error in it, and the package installs and runs in the chroot with
# the dependencies dpkg-shlibdeps gave it.  Then the same room without libdw-dev and a
# control file without it, the bug this test was written for, must fail the build at
# pkg-config.
#
# The chroot is made once for each debian/control, from the machine's own apt sources,
# and kept in $KBOLT_CACHE/cleanroom/ (about 900 MB, 1 to 4 minutes); every build runs in an
# overlay of it, so the cached room is never written.  It needs root (chroot, mount).
. "$(dirname "$0")/lib.sh"

case "${OUT:-.build/default}" in
*san*)
	skip "the clean-room package build" "it builds the package, not the sanitized binaries (the normal pass does)"
	done_testing
	exit 0 ;;
esac
if [ -n "${KBOLT_QUICK:-}" ]; then
	skip "the clean-room package build" "KBOLT_QUICK=1 (make check-quick) makes no chroot"
	done_testing
	exit 0
fi
if [ "$(id -u)" -ne 0 ] || ! command -v mmdebstrap >/dev/null; then
	fail "the clean-room package build: root and mmdebstrap" "run as root; scripts/install-deps installs mmdebstrap"
	done_testing
	exit 1
fi

# The room, keyed by the build dependencies it was made for
key=$(sha256sum "$top/debian/control" | cut -c1-16)
room=$KBOLT_CACHE/cleanroom/bookworm-$key
if [ ! -d "$room" ]; then
	progress "making the clean room for debian/control (mmdebstrap, 1 to 4 minutes)"
	rm -rf "$KBOLT_CACHE/cleanroom" && mkdir -p "$KBOLT_CACHE/cleanroom"
	mkdir -p "$tmp/ctl/debian" && cp "$top/debian/control" "$top/debian/changelog" "$tmp/ctl/debian/"
	mirrors=()
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -s "$f" ] && mirrors+=("$f")
	done
	if mmdebstrap --variant=buildd --mode=root --format=directory \
		--customize-hook='mkdir -p "$1/tmp/ctl/debian"' \
		--customize-hook="copy-in $tmp/ctl/debian/control $tmp/ctl/debian/changelog /tmp/ctl/debian" \
		--customize-hook='chroot "$1" apt-get build-dep -y -q /tmp/ctl' \
		--customize-hook='rm -rf "$1/tmp/ctl"' \
		bookworm "$room.tmp" "${mirrors[@]}" >"$tmp/mmdebstrap.log" 2>&1; then
		mv "$room.tmp" "$room"
		ok "mmdebstrap makes the room: buildd and the Build-Depends"
	else
		fail "mmdebstrap makes the room: buildd and the Build-Depends" "$(tail -n 15 "$tmp/mmdebstrap.log")"
		rm -rf "$room.tmp"
		done_testing
		exit 1
	fi
fi

# An overlay of the room, writable, thrown away at exit
mnt=$tmp/mnt
mounts=()
cleanup_room() {
	local m
	for m in "${mounts[@]}"; do umount -l "$m" 2>/dev/null; done
	mounts=()
}
trap 'cleanup_room; rm -rf "$tmp"' EXIT
open_room() {	# a fresh overlay at $mnt, with /proc
	cleanup_room
	rm -rf "$tmp/upper" "$tmp/work" && mkdir -p "$tmp/upper" "$tmp/work" "$mnt"
	mount -t overlay overlay -o "lowerdir=$room,upperdir=$tmp/upper,workdir=$tmp/work" "$mnt" &&
		mounts=("$mnt") && mount -t proc proc "$mnt/proc" && mounts=("$mnt/proc" "$mnt")
}
in_room() { chroot "$mnt" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 "$@"; }
copy_source() {	# the tree as git has it, into the room's /build/kbolt-0.1
	mkdir -p "$mnt/build/kbolt-0.1"
	(cd "$top" && git ls-files -z -c -o --exclude-standard |
		xargs -0 cp --parents -t "$mnt/build/kbolt-0.1")
}

if ! open_room; then
	fail "an overlay of the clean room mounts" "overlayfs and proc, as root"
	done_testing
	exit 1
fi
check "the room has build-essential" \
	in_room dpkg-query -W build-essential
copy_source
check "... dpkg-checkbuilddeps: every Build-Depends installed" \
	in_room sh -c 'cd /build/kbolt-0.1 && dpkg-checkbuilddeps'
check_eq "... no package of the host's own build beyond them (qemu, lintian, rpm)" "" \
	"$(in_room dpkg-query -W -f '${Package}\n' qemu-system-x86 lintian rpm 2>/dev/null)"
start=$SECONDS
if in_room sh -c 'cd /build/kbolt-0.1 && dpkg-buildpackage -b -us -uc' >"$tmp/build.log" 2>&1; then
	ok "dpkg-buildpackage -b -us -uc builds it in the room ($((SECONDS - start)) s)"
else
	fail "dpkg-buildpackage -b -us -uc builds it in the room" "$(tail -n 15 "$tmp/build.log")"
fi
deb=$mnt/build/kbolt_0.1_amd64.deb
if [ -s "$deb" ]; then
	lint=$(lintian --tag-display-limit 0 "$mnt"/build/kbolt_0.1_amd64.changes 2>&1 |
		grep -v "running with root privileges")
	check_eq "lintian on what the room built: no error" "" "$(grep '^E: ' <<<"$lint")"
	[ -z "$lint" ] || printf '%s\n' "$lint" | sed 's/^/# lintian: /'
	cp "$deb" "$mnt/tmp/"
	check "the package installs in the room (its Depends from dpkg-shlibdeps met there)" \
		in_room dpkg -i /tmp/kbolt_0.1_amd64.deb
	check_match "... and its kbolt runs" '^kbolt 0\.1$' "$(in_room kbolt --version 2>&1)"
	check_match "... and its kmeta runs" '^Usage: kmeta' "$(in_room kmeta --help 2>&1)"
else
	fail "lintian on what the room built" "no kbolt_0.1_amd64.deb"
fi

# The planted bug: the control file of before, without libdw-dev, in a room without it
if open_room; then
	copy_source
	sed -i '/^ *libdw-dev,$/d' "$mnt/build/kbolt-0.1/debian/control"
	in_room dpkg -r --force-depends libdw-dev >/dev/null 2>&1
	in_room sh -c 'cd /build/kbolt-0.1 && dpkg-buildpackage -b -us -uc' >"$tmp/bad.log" 2>&1; rc=$?
	check "without libdw-dev in Build-Depends the room's build fails" test "$rc" -ne 0
	check_match "... at pkg-config, naming the package" 'libdw not found by pkg-config: install Debian.s libdw-dev' \
		"$(cat "$tmp/bad.log")"
else
	fail "an overlay of the clean room mounts, again"
fi
cleanup_room
done_testing
