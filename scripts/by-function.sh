# SPDX-License-Identifier: GPL-2.0
# Sourced by scripts/split-misses and scripts/profile-blocks: the checks of their
# inputs, and the stream both read, a kernel's symbols and a profile's records by
# address, so that both tell alike which function a record or a line is in: the last
# symbol at or before its address (symbols at one address in nm's order), if a text
# symbol (nm type t, T, w or W).  $tool names the script in messages; each failure exits 1.

need_readable() {	# need_readable FILE...
	local f
	for f in "$@"; do
		[ -r "$f" ] || { echo "$tool: $f: cannot read" >&2; exit 1; }
	done
}

need_profile() {	# need_profile FILE: a kbolt profile (Documentation/profile-format.rst)
	head -n 2 "$1" | grep -qx 'kbolt-profile 1' ||
		{ echo "$tool: $1: not a kbolt profile" >&2; exit 1; }
}

# text_symbols VMLINUX OUT: VMLINUX's defined symbols by address ("nm -n") into OUT
text_symbols() {
	nm -n --defined-only "$1" 2>/dev/null |
		awk '$2 ~ /^[tTwW]$/ { n++ } { print } END { exit !n }' > "$2" ||
		{ echo "$tool: $1: no function symbols (not a vmlinux, or stripped)" >&2; exit 1; }
}

# The stream's lines start "ADDRESS KIND": kind 0 the symbols, "ADDRESS 0 NAME" with
# NAME empty but for a text symbol; kind 1 the records of a profile, "ADDRESS 1" at
# each source; higher kinds are the caller's.
symbols_stream() { awk '{ print $1, 0, ($2 ~ /^[tTwW]$/ ? $3 : "") }' "$1"; }
profile_sources() { awk '($1 == "B" || $1 == "F") && NF >= 4 { print $2, 1 }' "$1"; }
# by address, then kind; at one address and kind, in the order given
by_address() { LC_ALL=C sort -k1,1 -k2,2n -s; }
