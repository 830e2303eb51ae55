# SPDX-License-Identifier: GPL-2.0
# Networking over loopback: TCP and UDP sockets (labtool; busybox nc is too small),
# HTTP with busybox httpd and wget.
d=/tmp/net
mkdir -p $d/www
dd if=/dev/urandom of=$d/www/blob bs=1K count=2048 2>/dev/null
tap_check "8 MiB over TCP on loopback, checksummed" /lab/bin/labtool tcp 8388608
tap_check "1000 UDP datagrams echoed on loopback" /lab/bin/labtool udp 1000
http() {
	httpd -p 127.0.0.1:8080 -h $d/www || return 1
	local i=0
	while [ $i -lt 10 ]; do
		wget -q -O $d/got http://127.0.0.1:8080/blob || return 1
		cmp -s $d/got $d/www/blob || return 1
		i=$((i + 1))
	done
	killall httpd
}
tap_check "10 HTTP downloads of 2 MiB from busybox httpd" http
rm -rf $d
