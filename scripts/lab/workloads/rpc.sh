# SPDX-License-Identifier: GPL-2.0
# Networking as request and reply, another client and server than net's: a TCP
# connection per call (the handshake, accept and teardown net's one long connection
# makes once) over IPv4 and IPv6, UDP calls between connected sockets with replies
# near the MTU, and round trips over unix stream and datagram sockets.
tap_check "300 calls over 127.0.0.1, a TCP connection each" /lab/bin/labtool rpc tcp4 300
tap_check "100 calls over [::1], a TCP connection each" /lab/bin/labtool rpc tcp6 100
tap_check "500 UDP calls over 127.0.0.1, 1500-byte replies" /lab/bin/labtool rpc udp4 500
tap_check "1000 round trips over unix stream and datagram sockets" /lab/bin/labtool unix 1000
