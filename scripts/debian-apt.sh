# SPDX-License-Identifier: GPL-2.0
# Sourced: packages of every Debian suite the lab takes kernels from, through a private apt
# configuration under $KBOLT_CACHE/apt, never the machine's own (its sources, lists and
# cache stay as they are).  The suites: bullseye (5.10, GCC 10), bookworm (6.1, and 6.12
# by GCC 12), trixie (6.12 by GCC 14), trixie-backports (7.3) and sid (7.2, 7.3), with
# the updates and security suites that are mirrored; all from the machine's own Debian
# mirror (the first URIs of /etc/apt/sources.list and sources.list.d ending in /debian,
# /debian-security), deb.debian.org if it names none.  The package lists are fetched
# again once a day, or when the suites change.
#
#   debian_apt_download PACKAGE=VERSION DIR     the .deb into DIR, its path on stdout
#
# Needs KBOLT_CACHE (kernels.conf) and a die function.

debian_apt_dir=$KBOLT_CACHE/apt
debian_apt_opts=(-o "Dir::Etc::SourceList=$debian_apt_dir/sources.list"
		 -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$debian_apt_dir/lists"
		 -o "Dir::Cache=$debian_apt_dir/cache" -o APT::Architecture=amd64
		 -o APT::Architectures=amd64 -o APT::Sandbox::User=root)

# The machine's mirror whose path ends in /$1, else deb.debian.org's
debian_mirror() {
	local uris
	uris=$({ sed -n 's/^URIs://p' /etc/apt/sources.list.d/*.sources 2>/dev/null || true
		 awk '$1 == "deb" {for (i = 2; i <= NF; i++) if ($i ~ /:\/\//) {print $i; break}}' \
			/etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
		tr ' ' '\n' | grep -E "/$1/?\$" | head -n 1 || true)
	echo "${uris:-http://deb.debian.org/$1}"
}

# The sources: old releases' security suites are not mirrored, their point releases are
debian_apt_sources() {
	local debian security s
	debian=$(debian_mirror debian) security=$(debian_mirror debian-security)
	for s in bullseye bullseye-updates bookworm bookworm-updates trixie trixie-updates \
		 trixie-backports sid; do
		echo "deb $debian $s main"
	done
	for s in bookworm-security trixie-security; do
		echo "deb $security $s main"
	done
}

debian_apt_setup() {
	local want
	mkdir -p "$debian_apt_dir/lists/partial" "$debian_apt_dir/cache/archives/partial"
	want=$(debian_apt_sources)
	if [ "$want" != "$(cat "$debian_apt_dir/sources.list" 2>/dev/null)" ]; then
		printf '%s\n' "$want" >"$debian_apt_dir/sources.list"
		rm -f "$debian_apt_dir/lists/"*_Packages*
	fi
	[ -n "$(find "$debian_apt_dir/lists" -maxdepth 1 -name '*_Packages*' -mtime -1)" ] &&
		return 0
	echo "apt-get update (private configuration, $debian_apt_dir) ..." >&2
	apt-get "${debian_apt_opts[@]}" -q update >&2 || die "apt-get update failed"
}

debian_apt_download() {
	local pkg=${1%%=*} deb
	deb=$(ls "$2/${pkg}_"*_amd64.deb "$2/${pkg}_"*_all.deb 2>/dev/null | head -n 1 || true)
	if [ -z "$deb" ]; then
		debian_apt_setup
		mkdir -p "$2"
		echo "fetching $1 ..." >&2
		(cd "$2" && apt-get "${debian_apt_opts[@]}" -q download "$1" >&2) ||
			die "apt-get download $1 failed"
		deb=$(ls "$2/${pkg}_"*_amd64.deb "$2/${pkg}_"*_all.deb 2>/dev/null | head -n 1)
	fi
	echo "$deb"
}
