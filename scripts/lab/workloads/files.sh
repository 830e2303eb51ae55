# SPDX-License-Identifier: GPL-2.0
# Files on tmpfs: create/stat/rename/unlink many, large write/read, mmap.
d=/tmp/files
mkdir -p $d
many() {
	local i=0
	while [ $i -lt 500 ]; do
		echo "file $i" > $d/f$i
		i=$((i + 1))
	done
	[ "$(ls $d | wc -l)" -eq 500 ] || return 1
	i=0
	while [ $i -lt 500 ]; do
		[ -s $d/f$i ] && mv $d/f$i $d/g$i || return 1
		i=$((i + 1))
	done
	[ "$(cat $d/g42)" = "file 42" ] || return 1
	rm $d/g*
	[ "$(ls $d | wc -l)" -eq 0 ]
}
tap_check "500 files created, stat'ed, renamed, unlinked" many
big() {
	dd if=/dev/urandom of=$d/big bs=1M count=24 2>/dev/null || return 1
	cp $d/big $d/big2 && cmp $d/big $d/big2 || return 1
	[ "$(md5sum < $d/big)" = "$(cat $d/big2 | md5sum)" ]
}
tap_check "24 MiB written, copied and read back equal" big
tap_check "mmap of the 24 MiB file reads what read() reads" /lab/bin/labtool mmap $d/big
tap_check "truncate and append" sh -c "truncate -s 1000 $d/big && echo x >> $d/big && \
	[ \$(stat -c %s $d/big) -eq 1002 ]"
rm -rf $d
