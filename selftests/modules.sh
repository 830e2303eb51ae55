#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# kmeta on real modules of the Debian 6.1 kernel (scripts/fetch-kernels unpacks its
# module tree into $KBOLT_CACHE/modroot): lookup by name through libkmod, relocations
# applied on read compared with readelf's, compressed modules, and a clean check of
# every module in the tree.
. "$(dirname "$0")/lib.sh"

rel=$KERNEL_61_RELEASE
tree=$MODROOT/lib/modules/$rel
if [ ! -s "$tree/modules.dep" ]; then
	skip "modules of $rel" "module tree not fetched: run scripts/fetch-kernels"
	done_testing
	exit 0
fi
m=(-r "$rel" -d "$MODROOT")

path=$("$KMETA" summary -m xfs "${m[@]}" | head -n1 | cut -d: -f1)
check_eq "-m xfs finds fs/xfs/xfs.ko through libkmod" "$tree/kernel/fs/xfs/xfs.ko" "$path"
check_eq "-m accepts dashes for underscores (kvm_intel)" \
	"$tree/kernel/arch/x86/kvm/kvm-intel.ko" \
	"$("$KMETA" summary -m kvm_intel "${m[@]}" | head -n1 | cut -d: -f1)"
out=$("$KMETA" summary -m nosuchmodule "${m[@]}" 2>&1); rc=$?
check_eq "unknown module: exit 1" 1 "$rc"
check_match "unknown module: message names it" "module 'nosuchmodule' not found" "$out"
check_match "built-in module: says so" "'ext4' is built into the kernel" \
	"$("$KMETA" summary -m ext4 "${m[@]}" 2>&1)"
check_eq "-d without -r: usage error" 2 \
	"$("$KMETA" summary -m xfs -d "$MODROOT" >/dev/null 2>&1; echo $?)"

# Static-call keys come from R_X86_64_PC32 relocations against __SCK__/__SCT__ symbols:
# the key kmeta prints for entry i must be the symbol readelf shows for slot i's key.
ko=$tree/kernel/fs/xfs/xfs.ko
# (the relocations come in slot order: site, key, site, key, ...)
want=$(readelf -rW "$ko" | awk '/Relocation section .\.rela\.static_call_sites/ {on=1; next}
	/Relocation section/ {on=0} on && $1 ~ /^[0-9a-f]+$/ {if (++n % 2 == 0) print $5}' |
	sort | uniq -c | sort -k2 | awk '{print $1, $2}')
got=$("$KMETA" dump static_call_sites "$ko" | sed 's/.* key=//; s/|.*//' | sort | uniq -c | sort -k2 |
	awk '{print $1, $2}')
check_eq "xfs: static call keys match the relocations (readelf)" "$want" "$got"
size=$(readelf -SW "$ko" | sed 's/^ *\[ *[0-9]*\] //' | awk '$1 == "__jump_table" {print $5}')
nr=$((16#$size / 16))
check_eq "xfs: jump_table entries = section size / 16" "$nr" \
	"$("$KMETA" dump jump_table "$ko" | wc -l)"

xz -c "$ko" > "$tmp/xfs.ko.xz"
zstd -q -c "$ko" > "$tmp/xfs.ko.zst"
plain=$("$KMETA" dump orc "$ko" | md5sum)
check_eq "xfs.ko.xz decodes like xfs.ko" "$plain" "$("$KMETA" dump orc "$tmp/xfs.ko.xz" | md5sum)"
check_eq "xfs.ko.zst decodes like xfs.ko" "$plain" "$("$KMETA" dump orc "$tmp/xfs.ko.zst" | md5sum)"

bad=0 total=0
while read -r ko; do
	total=$((total + 1))
	if ! "$KMETA" check "$ko" >"$tmp/out" 2>&1; then
		bad=$((bad + 1))
		[ $bad -le 3 ] && sed 's/^/# /' "$tmp/out" | head -n 3
	fi
done < <(find "$tree/kernel" -name '*.ko')
check_eq "kmeta check passes on all $total modules of $rel" 0 "$bad"
done_testing
